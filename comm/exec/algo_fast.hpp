#pragma once
// fast: the FAST schedule (comm.md) executed on MPI. At prepare time every
// rank builds the same plan from the gathered counts (checked by fingerprint),
// takes its own part (rank_schedule) and compiles it into a FastProgram: the
// intra-server balance and same-server exchange on node_comm, the rail stages
// on rail_comm as a granted pipeline (each downlink fed by one sender at a
// time, each rank moving on as soon as its own stage is done), every arrived
// rail message forwarded at once to its final local ranks. Tags differ per
// phase and stage; no barriers; empty messages are never posted.
#include "comm/exec/alltoallv.hpp"
#include "comm/exec/fast_program.hpp"
#include "comm/plan/fast_plan.hpp"

namespace nestfast::comm {

class FastAlltoallv final : public Alltoallv {
 public:
  // chunk_bytes: rail data in messages of at most this many bytes (0 = one message per stage).
  explicit FastAlltoallv(FastPlanOptions options = {}, std::uint64_t chunk_bytes = 0)
      : options_(options), chunk_bytes_(chunk_bytes) {}
  std::string name() const override { return "fast"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  void execute(const std::byte* send, std::byte* recv) override { program_.run(send, recv); }
  int stages() const override { return stages_; }
  std::string decision() const override;

  std::vector<StageTimes> stage_times() const override { return program_.last_times(); }

 private:
  FastPlanOptions options_;
  std::uint64_t chunk_bytes_ = 0;
  FastProgram program_;
  int stages_ = 0;
  double plan_time_s_ = 0;
};

// Compiles one rank's schedule; exposed for tests.
FastProgram compile_schedule(const RankSchedule& schedule, const ServerTopology& topology, std::uint64_t chunk_bytes = 0);

}  // namespace nestfast::comm
