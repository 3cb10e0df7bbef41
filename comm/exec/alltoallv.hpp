#pragma once
// The one interface every alltoallv algorithm implements (comm.md section 2),
// so that one harness times, validates and reports them all, as nccl-tests
// does with one file per collective over a common harness.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/exec/fast_program.hpp"
#include "comm/exec/layout.hpp"
#include "comm/exec/server_topology.hpp"

namespace nestfast::comm {

class Alltoallv {
 public:
  virtual ~Alltoallv() = default;

  virtual std::string name() const = 0;

  // Collective: learns one traffic pattern. `counts` is the gathered matrix
  // (gather_counts), identical on every rank; `layout` is this rank's side.
  // The topology must outlive the algorithm.
  virtual void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) = 0;

  // Collective: one exchange of the prepared pattern, host buffers laid out as `layout` says.
  virtual void execute(const std::byte* send, std::byte* recv) = 0;

  // Communication steps of one exchange (rounds of messages ended by a wait).
  virtual int stages() const = 0;

  // What the algorithm decided while preparing (auto: which algorithm it picked), or "".
  virtual std::string decision() const { return {}; }

  // This rank's stages in the last execution, for a timeline (fast only; empty otherwise).
  virtual std::vector<StageTimes> stage_times() const { return {}; }
};

// The algorithm names the factory knows, in the order the benchmark lists them.
const std::vector<std::string>& alltoallv_algorithm_names();

struct AlgorithmSettings {
  // auto: mpi below this many mean bytes per rank, fast from here up
  // (measure_auto_threshold measures it; this default is only a fallback).
  std::uint64_t auto_threshold_bytes = 256U << 10;
  // fast: FastPlanOptions::quantum (0 = exact decomposition).
  std::uint64_t fast_quantum = 0;
  // fast: rail data in messages of at most this many bytes (0 = one per stage);
  // at or below the MPI's eager limit where its rendezvous serialises swaps.
  std::uint64_t fast_chunk_bytes = 0;
  // fast: FastPlanOptions::stage_cost_bytes (0 = stages are free: exact decomposition).
  std::uint64_t fast_stage_cost_bytes = 0;
};

// std::invalid_argument naming the known algorithms for an unknown name.
std::unique_ptr<Alltoallv> make_alltoallv(const std::string& name, const AlgorithmSettings& settings = {});

}  // namespace nestfast::comm
