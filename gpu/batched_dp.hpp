#pragma once
// Many level-wise DP instances solved in one device launch, with results
// identical to the CPU DP (solver/search/level_dp_kernel.hpp's level_dp_run):
// the kernel runs that very function over the flat stage oracle
// (gpu/flat_stage_oracle.hpp), one instance per block; the block builds the
// instance's prefix sums and working-set table in shared memory first.
//
// Plain host C++: no GPU runtime header is included. The CPU reference and
// the host emulation of the kernel work in every build.
#include <cstddef>
#include <span>
#include <vector>

#include "gpu/flat_stage_oracle.hpp"
#include "solver/search/level_dp_kernel.hpp"

namespace nestfast::gpu {

// One DP run: cut `layers` layers into `stages` contiguous stages,
// minimising the bottleneck stage time (see FlatStageOracle for the costs).
struct FlatDpInstance {
  int layers = 0;
  int stages = 1;
  // layer_values[c * layers + i] = column c of layer i, for the kLayerColumns
  // columns of flat_stage_oracle.hpp (times per mode, state bytes, stash per
  // mode, sync key, working set). All finite and >= 0.
  std::vector<double> layer_values;
  int levels = 0;
  std::vector<double> boundary_s;   // levels x layers, >= 0
  std::vector<int> rank_level;      // stages entries, each < levels (< 0: none)
  std::vector<double> stash_depth;  // stages entries, >= 0
  double hbm_bytes = 0;
  unsigned mode_mask = 0b111;       // bit m: recompute mode m allowed
  double param_cap = search::kDpInfinity;
  double bottleneck_limit = search::kDpInfinity;
};

struct FlatDpResult {
  double bottleneck = search::kDpInfinity;  // kDpInfinity: no feasible partition
  std::vector<int> boundaries;              // stages + 1 entries (0 ... layers) when feasible
  search::LevelDpCounters counters;
};

// One instance's oracle with its prefix sums and working-set table built on
// the host by the same builders the kernel runs. Points into `instance`,
// which must outlive it.
class HostStageOracle {
 public:
  explicit HostStageOracle(const FlatDpInstance& instance);
  HostStageOracle(const HostStageOracle&) = delete;
  HostStageOracle& operator=(const HostStageOracle&) = delete;

  const FlatStageOracle& oracle() const { return oracle_; }

 private:
  std::vector<double> prefix_;
  std::vector<double> working_table_;
  FlatStageOracle oracle_;
};

// Throws std::invalid_argument naming the instance index and the field when
// sizes disagree or a value is negative, NaN or infinite.
void check_flat_instance(const FlatDpInstance& instance, std::size_t index);

// The CPU DP: level_dp_run over the oracle built on the host.
FlatDpResult solve_flat_dp_cpu(const FlatDpInstance& instance);

// The batch kernel's body run on the host for every block and lane, with a
// barrier between its phases: what CI checks without a GPU.
std::vector<FlatDpResult> solve_flat_dp_batch_emulated(std::span<const FlatDpInstance> instances);

// The batch on device 0 (as few launches as the scratch budget allows).
// Throws std::runtime_error when the build has no back-end or there is no device.
std::vector<FlatDpResult> solve_flat_dp_batch(std::span<const FlatDpInstance> instances);

}  // namespace nestfast::gpu
