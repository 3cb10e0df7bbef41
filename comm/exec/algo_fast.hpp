#pragma once
// fast: the FAST schedule (comm.md) executed on MPI. At prepare time every
// rank builds the same plan from the gathered counts (checked by fingerprint),
// takes its own part (rank_schedule) and compiles it into a step program:
//   step 0      intra-server balance + same-server exchange (node_comm);
//   step k+1    rail transfer of stage k (rail_comm, one Irecv + one Isend)
//               + forwarding of stage k-1 to its final local rank (node_comm);
//   last step   forwarding of the last stage.
// Rail messages land in ping-pong buffers; tags differ per phase and stage;
// no barriers between steps; empty messages are never posted.
#include "comm/exec/alltoallv.hpp"
#include "comm/exec/step_program.hpp"
#include "comm/plan/fast_plan.hpp"

namespace nestfast::comm {

class FastAlltoallv final : public Alltoallv {
 public:
  explicit FastAlltoallv(FastPlanOptions options = {}) : options_(options) {}
  std::string name() const override { return "fast"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  void execute(const std::byte* send, std::byte* recv) override { program_.run(send, recv); }
  int stages() const override { return stages_; }
  std::string decision() const override;

 private:
  FastPlanOptions options_;
  StepProgram program_;
  int stages_ = 0;
  double plan_time_s_ = 0;
};

// Compiles one rank's schedule; exposed for tests.
StepProgram compile_schedule(const RankSchedule& schedule, std::size_t stages, const ServerTopology& topology);

}  // namespace nestfast::comm
