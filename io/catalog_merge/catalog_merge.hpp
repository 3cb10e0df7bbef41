#pragma once
// Merging the part catalogs of a sliced sweep (`nestfast catalog --slice I/N`,
// one Slurm array task each) into one catalog: a real copy of the rows, in
// global point order, so the result holds the same /plans, /stages, /models
// and /clusters data as one direct run of the whole sweep. Serial, one process.
#include <cstdint>
#include <string>
#include <vector>

namespace nestfast::io {

struct MergeSummary {
  std::uint64_t parts = 0;
  std::uint64_t points = 0;
  std::uint64_t plans = 0;
  std::uint64_t stages = 0;
  std::uint64_t validation_rows = 0;
};

// Writes `out` (via `out`.partial, renamed when complete). Throws
// std::invalid_argument naming the file when a part is not a finished catalog,
// belongs to another job or nestfast version, repeats a sweep point of another
// part, or when the parts do not cover the whole sweep; and when `out` exists
// and `force` is false.
MergeSummary merge_catalogs(const std::vector<std::string>& parts, const std::string& out, bool force);

}  // namespace nestfast::io
