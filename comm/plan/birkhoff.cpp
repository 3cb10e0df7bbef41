#include "comm/plan/birkhoff.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace nestfast::comm {

std::uint64_t pad_to_equal_line_sums(std::vector<std::uint64_t>& matrix, int size) {
  const auto n = static_cast<std::size_t>(size);
  std::vector<std::uint64_t> row_sum(n, 0), col_sum(n, 0);
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t t = 0; t < n; ++t) {
      row_sum[s] += matrix[s * n + t];
      col_sum[t] += matrix[s * n + t];
    }
  }
  std::uint64_t line = 0;
  for (std::size_t i = 0; i < n; ++i) line = std::max({line, row_sum[i], col_sum[i]});
  std::vector<std::uint64_t> row_short(n), col_short(n);
  for (std::size_t i = 0; i < n; ++i) {
    row_short[i] = line - row_sum[i];
    col_short[i] = line - col_sum[i];
    const std::uint64_t idle = std::min(row_short[i], col_short[i]);
    matrix[i * n + i] += idle;
    row_short[i] -= idle;
    col_short[i] -= idle;
  }
  std::size_t s = 0, t = 0;
  while (true) {
    while (s < n && row_short[s] == 0) ++s;
    while (t < n && col_short[t] == 0) ++t;
    if (s == n || t == n) break;
    const std::uint64_t add = std::min(row_short[s], col_short[t]);
    matrix[s * n + t] += add;
    row_short[s] -= add;
    col_short[t] -= add;
  }
  return line;
}

namespace {

// The matching state and the scratch of the augmenting-path search, sized
// once. A row or column of -1 is free. The entries of matched edges live in
// matched_ (contiguous, so the per-stage min and subtraction stream through
// one small array); the matrix copy of such an entry is stale but nonzero,
// which is all the path search asks of it, and is written back when the edge
// leaves the matching.
class StageMatcher {
 public:
  StageMatcher(std::vector<std::uint64_t>& residual, std::size_t size)
      : w_(residual), n_(size), mate_row_(size, -1), mate_col_(size, -1), matched_(size, 0), seen_(size, 0),
        from_row_(size, -1), via_col_(size, -1), queue_(size), free_cols_(), free_rows_() {
    free_cols_.reserve(size);
    free_rows_.reserve(size);
  }

  const std::vector<std::int32_t>& mates() const { return mate_row_; }

  // Greedy start, then augment every row left free.
  void match_all() {
    for (std::size_t s = 0; s < n_; ++s) {
      const std::uint64_t* row = &w_[s * n_];
      for (std::size_t t = 0; t < n_; ++t) {
        if (row[t] != 0 && mate_col_[t] < 0) {
          link(static_cast<std::int32_t>(s), static_cast<std::int32_t>(t));
          break;
        }
      }
    }
    collect_free();
    repair();
  }

  // Subtracts `weight` along the matching and unmatches the entries that
  // reached zero.
  void subtract(std::uint64_t weight) {
    free_rows_.resize(n_);  // capacity reserved up front: no allocation
    free_cols_.clear();
    // Local pointers: the loop must not reload members through `this`.
    std::uint64_t* const matched = matched_.data();
    std::int32_t* const zeroed = free_rows_.data();
    std::size_t zeros = 0;
    for (std::size_t s = 0; s < n_; ++s) {
      matched[s] -= weight;
      zeroed[zeros] = static_cast<std::int32_t>(s);
      zeros += matched[s] == 0 ? 1 : 0;
    }
    free_rows_.resize(zeros);
    for (std::int32_t row : free_rows_) {
      const auto s = static_cast<std::size_t>(row);
      const std::int32_t t = mate_row_[s];
      w_[s * n_ + static_cast<std::size_t>(t)] = 0;
      mate_row_[s] = -1;
      mate_col_[static_cast<std::size_t>(t)] = -1;
      free_cols_.push_back(t);
    }
  }

  std::uint64_t smallest_matched() const {
    std::uint64_t least = ~std::uint64_t{0};
    const std::uint64_t* const matched = matched_.data();
    for (std::size_t s = 0; s < n_; ++s) least = std::min(least, matched[s]);
    return least;
  }

  // Re-matches every free row; a perfect matching on the support exists
  // while all line sums are equal and positive (Birkhoff / Koenig).
  void repair() {
    for (std::int32_t row : free_rows_) {
      if (!augment(row)) throw std::logic_error("birkhoff: no perfect matching on the support (line sums unequal)");
    }
    free_rows_.clear();
  }

 private:
  void link(std::int32_t s, std::int32_t t) {
    const auto row = static_cast<std::size_t>(s);
    if (mate_row_[row] >= 0) w_[row * n_ + static_cast<std::size_t>(mate_row_[row])] = matched_[row];
    mate_row_[row] = t;
    mate_col_[static_cast<std::size_t>(t)] = s;
    matched_[row] = w_[row * n_ + static_cast<std::size_t>(t)];
  }

  void collect_free() {
    free_rows_.clear();
    free_cols_.clear();
    for (std::size_t i = 0; i < n_; ++i) {
      if (mate_row_[i] < 0) free_rows_.push_back(static_cast<std::int32_t>(i));
      if (mate_col_[i] < 0) free_cols_.push_back(static_cast<std::int32_t>(i));
    }
  }

  // A free column adjacent to `row`, or -1.
  std::int32_t free_neighbour(std::size_t row) const {
    const std::uint64_t* entries = &w_[row * n_];
    for (std::int32_t t : free_cols_) {
      if (mate_col_[static_cast<std::size_t>(t)] < 0 && entries[static_cast<std::size_t>(t)] != 0) return t;
    }
    return -1;
  }

  // Breadth-first search for a shortest augmenting path from a free row.
  bool augment(std::int32_t root) {
    ++stamp_;
    std::size_t head = 0, tail = 0;
    queue_[tail++] = root;
    seen_[static_cast<std::size_t>(root)] = stamp_;
    while (head < tail) {
      const std::int32_t x = queue_[head++];
      const auto xs = static_cast<std::size_t>(x);
      if (const std::int32_t t = free_neighbour(xs); t >= 0) {
        flip(root, x, t);
        return true;
      }
      const std::uint64_t* entries = &w_[xs * n_];
      for (std::size_t t = 0; t < n_; ++t) {
        if (entries[t] == 0) continue;
        const std::int32_t y = mate_col_[t];
        if (y < 0 || seen_[static_cast<std::size_t>(y)] == stamp_) continue;
        const auto ys = static_cast<std::size_t>(y);
        seen_[ys] = stamp_;
        from_row_[ys] = x;
        via_col_[ys] = static_cast<std::int32_t>(t);
        if (const std::int32_t free_t = free_neighbour(ys); free_t >= 0) {
          flip(root, y, free_t);
          return true;
        }
        queue_[tail++] = y;
      }
    }
    return false;
  }

  // Flips the path root -> ... -> x, then x takes the free column t.
  void flip(std::int32_t root, std::int32_t x, std::int32_t t) {
    while (true) {
      const auto xs = static_cast<std::size_t>(x);
      const std::int32_t previous = x == root ? -1 : via_col_[xs];
      link(x, t);
      if (x == root) return;
      t = previous;
      x = from_row_[xs];
    }
  }

  std::vector<std::uint64_t>& w_;
  std::size_t n_;
  std::vector<std::int32_t> mate_row_, mate_col_;
  std::vector<std::uint64_t> matched_;  // entry of (row, mate_row_[row])
  std::vector<std::uint32_t> seen_;
  std::uint32_t stamp_ = 0;
  std::vector<std::int32_t> from_row_, via_col_, queue_;
  std::vector<std::int32_t> free_cols_, free_rows_;
};

}  // namespace

BirkhoffStages birkhoff_decompose(const std::vector<std::uint64_t>& matrix, int size, std::uint64_t line_sum,
                                  std::size_t stage_limit) {
  BirkhoffStages out;
  if (size <= 0 || line_sum == 0) return out;
  const auto n = static_cast<std::size_t>(size);
  // Room for the worst case up front, so the stage loop never allocates;
  // capped at 64 Mi permutation entries (beyond ~8000 servers it may grow).
  const std::size_t most_stages = n * n - 2 * n + 2;
  const std::size_t reserved =
      std::min({most_stages, stage_limit, std::max<std::size_t>(1, (std::size_t{1} << 26) / n)});
  std::vector<std::uint64_t> weights;
  std::vector<std::int32_t> perms;
  weights.reserve(reserved);
  perms.reserve(reserved * n);

  std::vector<std::uint64_t> residual = matrix;
  StageMatcher matcher(residual, n);
  matcher.match_all();
  std::uint64_t left = line_sum;
  while (left > 0) {
    if (weights.size() == stage_limit) {
      out.complete = false;
      break;
    }
    const std::uint64_t weight = matcher.smallest_matched();
    weights.push_back(weight);
    perms.insert(perms.end(), matcher.mates().begin(), matcher.mates().end());
    matcher.subtract(weight);
    left -= weight;
    if (left > 0) matcher.repair();
  }

  // Decreasing weight; equal weights keep the order they were found in.
  out.order.resize(weights.size());
  std::iota(out.order.begin(), out.order.end(), 0u);
  std::stable_sort(out.order.begin(), out.order.end(), [&](std::uint32_t a, std::uint32_t b) { return weights[a] > weights[b]; });
  out.weights = std::move(weights);
  out.perms = std::move(perms);
  return out;
}

}  // namespace nestfast::comm
