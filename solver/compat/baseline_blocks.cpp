#include "solver/compat/baseline_blocks.hpp"

#include <stdexcept>
#include <string>

namespace nestfast::compat {

namespace {

std::string where(const NestBaseline& baseline) { return "baselines." + baseline.name; }

void require_chain(const NestBaseline& baseline, std::size_t chain_size) {
  if (static_cast<std::size_t>(baseline.num_transformer_layers) + 1 > chain_size) {
    throw std::invalid_argument(where(baseline) + ".num_transformer_layers: " +
                                std::to_string(baseline.num_transformer_layers) + " layers plus the embedding need " +
                                std::to_string(baseline.num_transformer_layers + 1) + " nodes, the graph for t=" +
                                std::to_string(baseline.t) + " has " + std::to_string(chain_size));
  }
}

[[noreturn]] void empty_stage(const NestBaseline& baseline, std::size_t index, const char* what) {
  throw std::invalid_argument(where(baseline) + ": stage " + std::to_string(index + 1) + " of p=" +
                              std::to_string(baseline.p) + " holds no " + what + " (num_transformer_layers=" +
                              std::to_string(baseline.num_transformer_layers) + ")");
}

std::vector<NestStage> cut(const NestBaseline& baseline, const std::vector<int>& sizes, std::size_t start,
                           std::size_t chain_size, int stage_devices) {
  std::vector<NestStage> stages;
  std::size_t position = start;
  for (int size : sizes) {
    stages.push_back(NestStage{stage_devices, position, position + static_cast<std::size_t>(size)});
    position += static_cast<std::size_t>(size);
  }
  stages.front().first = 0;
  stages.back().end = chain_size;
  for (std::size_t index = 0; index < stages.size(); ++index) {
    if (stages[index].first >= stages[index].end) empty_stage(baseline, index, "layer");
  }
  return stages;
}

}  // namespace

std::vector<NestStage> artifact_baseline_stages(const NestBaseline& baseline, std::size_t chain_size,
                                                int stage_devices) {
  require_chain(baseline, chain_size);
  std::vector<int> sizes = baseline.layer_partition;
  if (sizes.empty()) {
    const int layers = baseline.num_transformer_layers;
    const int per_stage = (layers + baseline.p - 1) / baseline.p;
    int left = layers;
    for (int stage = 0; stage < baseline.p; ++stage) {
      const int size = left < per_stage ? left : per_stage;
      sizes.push_back(size);
      left -= size;
    }
  }
  return cut(baseline, sizes, 0, chain_size, stage_devices);
}

std::vector<NestStage> honest_baseline_stages(const NestBaseline& baseline, std::size_t chain_size,
                                              int stage_devices) {
  require_chain(baseline, chain_size);
  std::vector<int> sizes = baseline.layer_partition;
  if (sizes.empty()) {
    const int layers = baseline.num_transformer_layers;
    const int base = layers / baseline.p;
    const int extra = layers % baseline.p;
    for (int stage = 0; stage < baseline.p; ++stage) sizes.push_back(base + (stage >= baseline.p - extra ? 1 : 0));
  }
  for (std::size_t index = 0; index < sizes.size(); ++index) {
    if (sizes[index] <= 0) empty_stage(baseline, index, "transformer layer");
  }
  return cut(baseline, sizes, 1, chain_size, stage_devices);
}

}  // namespace nestfast::compat
