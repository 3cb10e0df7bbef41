#pragma once
// The suffix DP over a layer chain shared by both cost models:
// best(r, x) = the least bottleneck stage load of positions [x, n) split into
// r contiguous stages, where a stage's load may depend on how many stages run
// from it to the end (that fixes its in-flight micro-batches and the devices
// after it). Stage loads come from a callable (first, end, remaining) ->
// std::optional<double>, nullopt when the stage does not fit in memory.
// Equal bottlenecks are broken towards the smaller largest-stage parameter
// bytes (what a data-parallel all-reduce has to move); the tie-break is a
// heuristic, the bottleneck itself is exact.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace nestfast::compat {

class SuffixTable {
 public:
  SuffixTable(std::size_t positions, int max_stages)
      : positions_(positions),
        max_stages_(max_stages),
        best_((static_cast<std::size_t>(max_stages) + 1) * (positions + 1), kInfeasible),
        largest_(best_.size(), 0),
        cut_(best_.size(), 0) {
    best_[index(0, positions)] = 0.0;
  }

  static constexpr double kInfeasible = std::numeric_limits<double>::infinity();

  std::size_t positions() const { return positions_; }
  int max_stages() const { return max_stages_; }
  double best(int stages, std::size_t first) const { return best_[index(stages, first)]; }
  // End of the first stage of the best split of [first, n) into `stages` stages.
  std::size_t cut(int stages, std::size_t first) const { return cut_[index(stages, first)]; }

  // stage_parameters(first, end) -> bytes of the stage's parameters.
  template <class StageLoad, class StageParameters>
  void fill(StageLoad&& stage_load, StageParameters&& stage_parameters) {
    for (int stages = 1; stages <= max_stages_; ++stages) {
      for (std::size_t first = positions_; first-- > 0;) {
        double best = kInfeasible;
        std::uint64_t best_largest = 0;
        std::size_t best_end = 0;
        for (std::size_t end = first + 1; end <= positions_; ++end) {
          const double rest = best_[index(stages - 1, end)];
          if (rest == kInfeasible || rest > best) continue;
          const std::optional<double> load = stage_load(first, end, stages);
          if (!load) continue;
          const double bottleneck = *load > rest ? *load : rest;
          const std::uint64_t parameters = stage_parameters(first, end);
          const std::uint64_t rest_largest = largest_[index(stages - 1, end)];
          const std::uint64_t largest = parameters > rest_largest ? parameters : rest_largest;
          if (bottleneck < best || (bottleneck == best && largest < best_largest)) {
            best = bottleneck;
            best_largest = largest;
            best_end = end;
          }
        }
        best_[index(stages, first)] = best;
        largest_[index(stages, first)] = best_largest;
        cut_[index(stages, first)] = best_end;
      }
    }
  }

  // Largest stage parameter bytes of the best split of [first, n).
  std::uint64_t largest_parameters(int stages, std::size_t first) const { return largest_[index(stages, first)]; }

  // The stage boundaries [first, end) of the best split of [first, n).
  std::vector<std::pair<std::size_t, std::size_t>> split(int stages, std::size_t first) const {
    std::vector<std::pair<std::size_t, std::size_t>> result;
    for (int left = stages; left > 0; --left) {
      const std::size_t end = cut(left, first);
      result.emplace_back(first, end);
      first = end;
    }
    return result;
  }

 private:
  std::size_t index(int stages, std::size_t first) const {
    return static_cast<std::size_t>(stages) * (positions_ + 1) + first;
  }

  std::size_t positions_;
  int max_stages_;
  std::vector<double> best_;
  std::vector<std::uint64_t> largest_;
  std::vector<std::size_t> cut_;
};

}  // namespace nestfast::compat
