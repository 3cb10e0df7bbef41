#pragma once
// Many level-wise DP runs (solver/search/dp_batch.hpp) in one device launch,
// one run per block, with results identical to run_dp_batch_on_cpu: the
// kernel runs the very same level_dp_run over the very same DpStageOracle
// (solver/search/stage_cost_kernel.hpp), after the block has copied the run's
// prefix sums and working-set table into shared memory. Kernels are compiled
// without fused multiply-adds (gpu/CMakeLists.txt), as the host code is.
//
// Plain host C++: no GPU runtime header is included. The host emulation
// works in every build.
#include <span>
#include <vector>

#include "solver/search/dp_batch.hpp"

namespace nestfast::gpu {

// The batch kernel's body run on the host for every block and lane, with a
// barrier between its phases: what CI checks without a GPU.
std::vector<search::DpRunResult> run_dp_batch_emulated(std::span<const search::DpRun> runs);

// The batch on device 0 (as few launches as the scratch budget allows).
// Throws std::runtime_error when the build has no back-end or there is no device.
std::vector<search::DpRunResult> run_dp_batch_on_device(std::span<const search::DpRun> runs);

}  // namespace nestfast::gpu
