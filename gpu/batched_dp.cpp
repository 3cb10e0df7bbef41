// The batched DP's host side: packing runs into arenas, the host emulation
// of the kernel, and launch chunking.
#include "gpu/batched_dp.hpp"

#include "gpu/batched_dp_kernel.hpp"

namespace nestfast::gpu {
namespace {

using search::DpRun;
using search::DpRunResult;

// Stay well inside a device's memory: one launch's DP tables at most this many cells.
constexpr std::uint64_t kMaxCellsPerLaunch = std::uint64_t{1} << 26;

template <class T>
void append(std::vector<T>& arena, const T* first, std::uint64_t count) {
  arena.insert(arena.end(), first, first + count);
}

detail::PackedDpBatch pack(std::span<const DpRun> runs) {
  detail::PackedDpBatch batch;
  for (const DpRun& run : runs) {
    const LayerTableView& table = run.oracle.table;
    const int layers = table.layers;
    const auto stages = static_cast<std::uint64_t>(run.stages);
    detail::DpBatchEntry entry;
    entry.oracle = run.oracle;
    entry.oracle.table.prefix = nullptr;
    entry.oracle.table.working = nullptr;
    entry.oracle.table.output_bytes = nullptr;
    entry.oracle.table.level_latency_s = nullptr;
    entry.oracle.table.level_bandwidth_Bps = nullptr;
    entry.oracle.stash = nullptr;
    entry.oracle.rank_level = nullptr;
    entry.stages = run.stages;
    entry.param_cap = run.param_cap;
    entry.bottleneck_limit = run.bottleneck_limit;
    // The order dp_block_phase reads them in.
    entry.values_offset = batch.values.size();
    append(batch.values, table.prefix, detail::prefix_doubles(layers));
    append(batch.values, table.working, detail::working_doubles(layers));
    append(batch.values, table.output_bytes, static_cast<std::uint64_t>(layers));
    append(batch.values, table.level_latency_s, static_cast<std::uint64_t>(table.levels));
    append(batch.values, table.level_bandwidth_Bps, static_cast<std::uint64_t>(table.levels));
    append(batch.values, run.oracle.stash, stages);
    entry.ints_offset = batch.ints.size();
    append(batch.ints, run.oracle.rank_level, stages);
    entry.scratch_offset = batch.cells;
    batch.cells += detail::dp_cells(layers, run.stages);
    entry.boundaries_offset = batch.boundary_ints;
    batch.boundary_ints += stages + 1;
    const std::uint64_t shared = detail::dp_shared_doubles(layers);
    if (shared > batch.max_shared_doubles) batch.max_shared_doubles = shared;
    batch.entries.push_back(entry);
  }
  return batch;
}

std::vector<DpRunResult> unpack(const detail::PackedDpBatch& batch, const std::vector<detail::DpBatchOutput>& outputs,
                                const std::vector<int>& boundaries) {
  std::vector<DpRunResult> results(batch.entries.size());
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

std::vector<DpRunResult> run_dp_batch_emulated(std::span<const DpRun> runs) {
  const detail::PackedDpBatch batch = pack(runs);
  std::vector<double> value_scratch(batch.cells);
  std::vector<int> cut_scratch(batch.cells);
  std::vector<int> boundaries(batch.boundary_ints);
  std::vector<detail::DpBatchOutput> outputs(batch.entries.size());
  std::vector<double> shared(batch.max_shared_doubles);
  for (std::size_t block = 0; block < batch.entries.size(); ++block) {
    for (int phase = 0; phase < detail::dp_block_phases(batch.entries[block]); ++phase) {
      for (unsigned lane = 0; lane < detail::kDpThreadsPerBlock; ++lane) {
        detail::dp_block_phase(phase, batch.entries[block], batch.values.data(), batch.ints.data(),
                               value_scratch.data(), cut_scratch.data(), boundaries.data(), &outputs[block],
                               shared.data(), lane, detail::kDpThreadsPerBlock);
      }
    }
  }
  return unpack(batch, outputs, boundaries);
}

std::vector<DpRunResult> run_dp_batch_on_device(std::span<const DpRun> runs) {
  std::vector<DpRunResult> results;
  results.reserve(runs.size());
  std::size_t first = 0;
  while (first < runs.size()) {
    std::size_t last = first;
    std::uint64_t cells = 0;
    while (last < runs.size()) {
      const std::uint64_t more = detail::dp_cells(runs[last].oracle.table.layers, runs[last].stages);
      if (last > first && cells + more > kMaxCellsPerLaunch) break;
      cells += more;
      ++last;
    }
    const detail::PackedDpBatch batch = pack(runs.subspan(first, last - first));
    std::vector<detail::DpBatchOutput> outputs;
    std::vector<int> boundaries;
    detail::launch_batched_dp(batch, outputs, boundaries);
    for (DpRunResult& result : unpack(batch, outputs, boundaries)) results.push_back(std::move(result));
    first = last;
  }
  return results;
}

}  // namespace nestfast::gpu
