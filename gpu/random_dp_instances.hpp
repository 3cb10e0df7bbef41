#pragma once
// Random flat DP instances of every shape, for the agreement tests and the
// device benchmark: ties (integer costs), memory-bound and infeasible
// instances, parameter caps, outside bottleneck limits, restricted recompute
// masks. Deterministic for a given generator state.
#include <random>

#include "gpu/batched_dp.hpp"

namespace nestfast::gpu {

// layers in [1, max_layers], stages in [1, min(layers, max_stages)].
FlatDpInstance random_flat_dp_instance(std::mt19937& random, int max_layers, int max_stages = 12);

}  // namespace nestfast::gpu
