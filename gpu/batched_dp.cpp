// The batched DP's host side: input checks, packing into arenas, the CPU
// reference, the host emulation of the kernel, and launch chunking.
#include "gpu/batched_dp.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "gpu/batched_dp_kernel.hpp"

namespace nestfast::gpu {
namespace {

void fail(std::size_t index, const std::string& what) {
  throw std::invalid_argument("DP instance " + std::to_string(index) + ": " + what);
}

void check_values(const std::vector<double>& values, std::size_t expected, const char* field, std::size_t index) {
  if (values.size() != expected) {
    fail(index, std::string(field) + " has " + std::to_string(values.size()) + " entries, expected " +
                    std::to_string(expected));
  }
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k]) || values[k] < 0) {
      fail(index, std::string(field) + "[" + std::to_string(k) + "] = " + std::to_string(values[k]) +
                      " (must be finite and >= 0)");
    }
  }
}

std::size_t as_size(int n) { return static_cast<std::size_t>(n); }

// Stay well inside a device's memory: one launch's DP tables at most this many cells.
constexpr std::uint64_t kMaxCellsPerLaunch = std::uint64_t{1} << 26;

detail::PackedDpBatch pack(std::span<const FlatDpInstance> instances) {
  detail::PackedDpBatch batch;
  for (std::size_t index = 0; index < instances.size(); ++index) {
    const FlatDpInstance& instance = instances[index];
    check_flat_instance(instance, index);
    detail::DpBatchEntry entry;
    entry.layers = instance.layers;
    entry.stages = instance.stages;
    entry.levels = instance.levels;
    entry.mode_mask = instance.mode_mask;
    entry.hbm_bytes = instance.hbm_bytes;
    entry.param_cap = instance.param_cap;
    entry.bottleneck_limit = instance.bottleneck_limit;
    entry.values_offset = batch.values.size();
    batch.values.insert(batch.values.end(), instance.layer_values.begin(), instance.layer_values.end());
    batch.values.insert(batch.values.end(), instance.boundary_s.begin(), instance.boundary_s.end());
    batch.values.insert(batch.values.end(), instance.stash_depth.begin(), instance.stash_depth.end());
    entry.ints_offset = batch.ints.size();
    batch.ints.insert(batch.ints.end(), instance.rank_level.begin(), instance.rank_level.end());
    entry.scratch_offset = batch.cells;
    batch.cells += detail::dp_cells(instance.layers, instance.stages);
    entry.boundaries_offset = batch.boundary_ints;
    batch.boundary_ints += static_cast<std::uint64_t>(instance.stages) + 1;
    const std::uint64_t shared = detail::dp_shared_doubles(instance.layers);
    if (shared > batch.max_shared_doubles) batch.max_shared_doubles = shared;
    batch.entries.push_back(entry);
  }
  return batch;
}

std::vector<FlatDpResult> unpack(const detail::PackedDpBatch& batch, const std::vector<detail::DpBatchOutput>& outputs,
                                 const std::vector<int>& boundaries) {
  std::vector<FlatDpResult> results(batch.entries.size());
  for (std::size_t k = 0; k < results.size(); ++k) {
    const detail::DpBatchEntry& entry = batch.entries[k];
    results[k].bottleneck = outputs[k].bottleneck;
    results[k].counters = outputs[k].counters;
    if (outputs[k].bottleneck < search::kDpInfinity) {
      const auto first = boundaries.begin() + static_cast<std::ptrdiff_t>(entry.boundaries_offset);
      results[k].boundaries.assign(first, first + entry.stages + 1);
    }
  }
  return results;
}

}  // namespace

void check_flat_instance(const FlatDpInstance& instance, std::size_t index) {
  if (instance.layers < 1) fail(index, "layers = " + std::to_string(instance.layers) + " (must be >= 1)");
  if (instance.stages < 1) fail(index, "stages = " + std::to_string(instance.stages) + " (must be >= 1)");
  if (instance.levels < 0) fail(index, "levels = " + std::to_string(instance.levels) + " (must be >= 0)");
  check_values(instance.layer_values, as_size(kLayerColumns) * as_size(instance.layers), "layer_values", index);
  check_values(instance.boundary_s, as_size(instance.levels) * as_size(instance.layers), "boundary_s", index);
  check_values(instance.stash_depth, as_size(instance.stages), "stash_depth", index);
  if (instance.rank_level.size() != as_size(instance.stages)) {
    fail(index, "rank_level has " + std::to_string(instance.rank_level.size()) + " entries, expected " +
                    std::to_string(instance.stages));
  }
  for (std::size_t rank = 0; rank < instance.rank_level.size(); ++rank) {
    if (instance.rank_level[rank] >= instance.levels) {
      fail(index, "rank_level[" + std::to_string(rank) + "] = " + std::to_string(instance.rank_level[rank]) +
                      " but there are " + std::to_string(instance.levels) + " levels");
    }
  }
  if (std::isnan(instance.hbm_bytes) || std::isnan(instance.param_cap) || std::isnan(instance.bottleneck_limit)) {
    fail(index, "hbm_bytes, param_cap and bottleneck_limit must not be NaN");
  }
}

HostStageOracle::HostStageOracle(const FlatDpInstance& instance) {
  const int layers = instance.layers;
  prefix_.resize(as_size(kPrefixColumns) * as_size(layers + 1));
  for (int column = 0; column < kPrefixColumns; ++column) {
    build_prefix_column(instance.layer_values.data(), layers, column, prefix_.data() + column * (layers + 1));
  }
  const int rows = working_table_rows(layers);
  working_table_.resize(as_size(rows) * as_size(layers));
  for (int row = 0; row < rows; ++row) {
    for (int i = 0; i < layers; ++i) {
      build_working_row_entry(instance.layer_values.data() + kWorkingColumn * layers, layers, row, i,
                              working_table_.data());
    }
  }
  oracle_.layers = layers;
  oracle_.prefix = prefix_.data();
  oracle_.working_table = working_table_.data();
  oracle_.boundary_s = instance.boundary_s.data();
  oracle_.rank_level = instance.rank_level.data();
  oracle_.stash_depth = instance.stash_depth.data();
  oracle_.hbm_bytes = instance.hbm_bytes;
  oracle_.mode_mask = instance.mode_mask;
}

FlatDpResult solve_flat_dp_cpu(const FlatDpInstance& instance) {
  check_flat_instance(instance, 0);
  const int layers = instance.layers;
  const HostStageOracle host(instance);
  const std::size_t cells = detail::dp_cells(layers, instance.stages);
  std::vector<double> value(cells);
  std::vector<int> cut(cells);
  FlatDpResult result;
  result.bottleneck = search::level_dp_run(host.oracle(), layers, instance.stages, instance.param_cap,
                                           instance.bottleneck_limit, value.data(), cut.data(), &result.counters);
  if (result.bottleneck < search::kDpInfinity) {
    result.boundaries.resize(as_size(instance.stages) + 1);
    search::level_dp_boundaries(cut.data(), layers, instance.stages, result.boundaries.data());
  }
  return result;
}

std::vector<FlatDpResult> solve_flat_dp_batch_emulated(std::span<const FlatDpInstance> instances) {
  const detail::PackedDpBatch batch = pack(instances);
  std::vector<double> value_scratch(batch.cells);
  std::vector<int> cut_scratch(batch.cells);
  std::vector<int> boundaries(batch.boundary_ints);
  std::vector<detail::DpBatchOutput> outputs(batch.entries.size());
  std::vector<double> shared(batch.max_shared_doubles);
  for (std::size_t block = 0; block < batch.entries.size(); ++block) {
    const detail::DpBatchEntry& entry = batch.entries[block];
    const int phases = detail::dp_block_phases(entry);
    for (int phase = 0; phase < phases; ++phase) {
      for (unsigned lane = 0; lane < detail::kDpThreadsPerBlock; ++lane) {
        detail::dp_block_phase(phase, entry, batch.values.data(), batch.ints.data(), value_scratch.data(),
                               cut_scratch.data(), boundaries.data(), &outputs[block], shared.data(), lane,
                               detail::kDpThreadsPerBlock);
      }
    }
  }
  return unpack(batch, outputs, boundaries);
}

std::vector<FlatDpResult> solve_flat_dp_batch(std::span<const FlatDpInstance> instances) {
  std::vector<FlatDpResult> results;
  results.reserve(instances.size());
  std::size_t first = 0;
  while (first < instances.size()) {
    std::size_t last = first;
    std::uint64_t cells = 0;
    while (last < instances.size()) {
      const std::uint64_t more = detail::dp_cells(instances[last].layers, instances[last].stages);
      if (last > first && cells + more > kMaxCellsPerLaunch) break;
      cells += more;
      ++last;
    }
    const detail::PackedDpBatch batch = pack(instances.subspan(first, last - first));
    std::vector<detail::DpBatchOutput> outputs;
    std::vector<int> boundaries;
    detail::launch_batched_dp(batch, outputs, boundaries);
    for (FlatDpResult& result : unpack(batch, outputs, boundaries)) results.push_back(std::move(result));
    first = last;
  }
  return results;
}

}  // namespace nestfast::gpu
