#include "gpu/random_dp_instances.hpp"

#include <algorithm>
#include <cstddef>

namespace nestfast::gpu {

FlatDpInstance random_flat_dp_instance(std::mt19937& random, int max_layers, int max_stages) {
  auto uniform = [&](double low, double high) { return std::uniform_real_distribution<double>(low, high)(random); };
  auto integer = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  FlatDpInstance instance;
  instance.layers = integer(1, max_layers);
  instance.stages = integer(1, std::min(instance.layers, max_stages));
  instance.levels = integer(0, 3);
  instance.layer_values.assign(static_cast<std::size_t>(kLayerColumns * instance.layers), 0.0);
  auto cell = [&](int column, int layer) -> double& {
    return instance.layer_values[static_cast<std::size_t>(column * instance.layers + layer)];
  };
  const bool ties = integer(0, 3) == 0;
  for (int layer = 0; layer < instance.layers; ++layer) {
    const double base = ties ? integer(1, 4) : uniform(0.5, 2.0);
    // Recompute trades time for memory: none < selective < full in time, > in stash.
    cell(kTimeColumn + 0, layer) = base;
    cell(kTimeColumn + 1, layer) = ties ? base + 1 : base * uniform(1.0, 1.2);
    cell(kTimeColumn + 2, layer) = ties ? base + 2 : base * uniform(1.2, 1.4);
    cell(kStateColumn, layer) = uniform(0, 10);
    cell(kStashColumn + 0, layer) = uniform(2, 4);
    cell(kStashColumn + 1, layer) = uniform(1, 2);
    cell(kStashColumn + 2, layer) = uniform(0, 0.5);
    cell(kSyncColumn, layer) = ties ? integer(0, 3) : uniform(0, 1);
    cell(kWorkingColumn, layer) = uniform(0, 5);
  }
  for (int k = 0; k < instance.levels * instance.layers; ++k) instance.boundary_s.push_back(uniform(0, 0.5));
  for (int rank = 0; rank < instance.stages; ++rank) {
    instance.rank_level.push_back(rank == 0 ? -1 : integer(-1, instance.levels - 1));
    instance.stash_depth.push_back(static_cast<double>(instance.stages - rank));  // 1F1B
  }
  // From roomy to infeasible: a layer holds about 5 state + 3 * depth stash + working.
  instance.hbm_bytes = uniform(5, 30) * instance.layers / instance.stages + uniform(0, 20);
  instance.mode_mask = static_cast<unsigned>(integer(0, 7) == 0 ? integer(0, 7) : 7);
  if (integer(0, 2) == 0) instance.param_cap = uniform(0.3, 1.0) * 0.5 * instance.layers;
  if (integer(0, 4) == 0) instance.bottleneck_limit = uniform(1, 3) * instance.layers / instance.stages;
  return instance;
}

}  // namespace nestfast::gpu
