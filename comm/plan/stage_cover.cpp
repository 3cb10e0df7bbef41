#include "comm/plan/stage_cover.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace nestfast::comm {

namespace {

// The multigraph of what is left to schedule: real pieces (count and weight
// per server pair) and idle slots (count), every line of degree `left`.
class CoverGraph {
 public:
  CoverGraph(const std::vector<std::uint64_t>& matrix, std::size_t n, std::uint64_t piece_cap)
      : n_(n), pieces_(n * n, 0), idle_(n * n, 0), weight_(n * n, 0) {
    std::vector<std::uint64_t> row(n, 0), col(n, 0);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t t = 0; t < n; ++t) {
        const std::uint64_t bytes = matrix[s * n + t];
        if (s == t || bytes == 0) continue;
        const std::uint64_t count = piece_cap == 0 ? 1 : (bytes + piece_cap - 1) / piece_cap;
        pieces_[s * n + t] = static_cast<std::uint32_t>(count);
        weight_[s * n + t] = (bytes + count - 1) / count;  // count pieces of this weight cover the entry
        row[s] += count;
        col[t] += count;
      }
    }
    for (std::size_t i = 0; i < n; ++i) degree_ = std::max({degree_, row[i], col[i]});
    // Idle slots make every line degree_: on the diagonal first (a server idle
    // in a stage), then by a two-pointer sweep over the lines still short.
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t add = std::min(degree_ - row[i], degree_ - col[i]);
      idle_[i * n + i] += static_cast<std::uint32_t>(add);
      row[i] += add;
      col[i] += add;
    }
    for (std::size_t s = 0, t = 0;;) {
      while (s < n && row[s] == degree_) ++s;
      while (t < n && col[t] == degree_) ++t;
      if (s == n || t == n) break;
      const std::uint64_t add = std::min(degree_ - row[s], degree_ - col[t]);
      idle_[s * n + t] += static_cast<std::uint32_t>(add);
      row[s] += add;
      col[t] += add;
    }
    words_ = (n + 63) / 64;
    open_.assign(n * words_, 0);
    seen_.assign(words_, 0);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t t = 0; t < n; ++t) {
        const std::size_t p = s * n + t;
        const Pair pair{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(t)};
        if (pieces_[p] > 0) heavy_.push_back(pair);
        if (idle_[p] > 0) light_.push_back(pair);
        if (pieces_[p] + idle_[p] > 0) open_[s * words_ + t / 64] |= std::uint64_t{1} << (t % 64);
      }
    }
    // Heaviest first; ties in pair order, so the result is the same everywhere.
    std::stable_sort(heavy_.begin(), heavy_.end(),
                     [&](const Pair& a, const Pair& b) { return weight_[index(a)] > weight_[index(b)]; });
  }

  std::uint64_t degree() const { return degree_; }

  // One perfect matching of what is left, heaviest pieces first; takes its
  // pieces out of the graph. Returns the stage weight (its heaviest piece).
  std::uint64_t take_stage(std::vector<std::int32_t>& perm) {
    mate_row_.assign(n_, -1);
    mate_col_.assign(n_, -1);
    greedy(heavy_, pieces_);
    greedy(light_, idle_);
    for (std::size_t r = 0; r < n_; ++r) {
      if (mate_row_[r] < 0 && !augment(static_cast<std::int32_t>(r))) {
        throw std::logic_error("stage cover: no perfect matching on a regular multigraph");
      }
    }
    std::uint64_t weight = 0;
    perm.resize(n_);
    for (std::size_t s = 0; s < n_; ++s) {
      const auto t = static_cast<std::size_t>(mate_row_[s]);
      const std::size_t p = s * n_ + t;
      if (pieces_[p] > 0) {
        --pieces_[p];
        weight = std::max(weight, weight_[p]);
      } else {
        --idle_[p];
      }
      if (pieces_[p] + idle_[p] == 0) open_[s * words_ + t / 64] &= ~(std::uint64_t{1} << (t % 64));
      perm[s] = static_cast<std::int32_t>(t);
    }
    return weight;
  }

 private:
  // A server pair as its two ends: the greedy pass below reads every pair
  // left for every stage (S^3 at the scale of hundreds of servers), where a
  // division per pair cost most of the cover's time.
  struct Pair {
    std::uint32_t s, t;
  };
  std::size_t index(const Pair& pair) const { return pair.s * n_ + pair.t; }

  // Matches free lines over `pairs` in their order, dropping used-up pairs.
  void greedy(std::vector<Pair>& pairs, const std::vector<std::uint32_t>& count) {
    std::size_t kept = 0;
    for (const Pair& pair : pairs) {
      if (count[index(pair)] == 0) continue;
      pairs[kept++] = pair;
      const std::size_t s = pair.s, t = pair.t;
      if (mate_row_[s] < 0 && mate_col_[t] < 0) {
        mate_row_[s] = static_cast<std::int32_t>(t);
        mate_col_[t] = static_cast<std::int32_t>(s);
      }
    }
    pairs.resize(kept);
  }

  // Breadth-first search for a shortest augmenting path from free row
  // `root`, over the pairs with anything left (a bitset per row, so a row's
  // unreached columns are a few words of AND).
  bool augment(std::int32_t root) {
    std::fill(seen_.begin(), seen_.end(), 0);
    queue_.assign(1, root);
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const auto x = static_cast<std::size_t>(queue_[head]);
      const std::uint64_t* open = &open_[x * words_];
      for (std::size_t w = 0; w < words_; ++w) {
        for (std::uint64_t bits = open[w] & ~seen_[w]; bits != 0; bits &= bits - 1) {
          const std::size_t t = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
          seen_[w] |= std::uint64_t{1} << (t % 64);
          from_[t] = static_cast<std::int32_t>(x);
          if (mate_col_[t] < 0) {  // flip the path back to the root
            for (auto col = static_cast<std::int32_t>(t); col >= 0;) {
              const std::int32_t row = from_[static_cast<std::size_t>(col)];
              const std::int32_t previous = mate_row_[static_cast<std::size_t>(row)];
              mate_row_[static_cast<std::size_t>(row)] = col;
              mate_col_[static_cast<std::size_t>(col)] = row;
              col = previous;
            }
            return true;
          }
          queue_.push_back(mate_col_[t]);
        }
      }
    }
    return false;
  }

  std::size_t n_;
  std::vector<std::uint32_t> pieces_, idle_;
  std::vector<std::uint64_t> weight_;
  std::uint64_t degree_ = 0;
  std::vector<Pair> heavy_, light_;  // pairs with pieces (by weight) and with idle slots
  std::vector<std::int32_t> mate_row_, mate_col_, queue_;
  std::vector<std::int32_t> from_ = std::vector<std::int32_t>(n_, -1);  // column -> row it was reached from
  std::size_t words_ = 0;
  std::vector<std::uint64_t> open_;  // per row: columns with pieces or idle slots left
  std::vector<std::uint64_t> seen_;  // columns reached by the current search
};

}  // namespace

BirkhoffStages cover_stages(const std::vector<std::uint64_t>& matrix, int size, std::uint64_t piece_cap) {
  BirkhoffStages out;
  if (size <= 1) return out;
  const auto n = static_cast<std::size_t>(size);
  CoverGraph graph(matrix, n, piece_cap);
  std::vector<std::int32_t> perm;
  for (std::uint64_t k = 0; k < graph.degree(); ++k) {
    const std::uint64_t weight = graph.take_stage(perm);
    if (weight == 0) continue;  // idle slots only: no stage
    out.weights.push_back(weight);
    out.perms.insert(out.perms.end(), perm.begin(), perm.end());
  }
  out.order.resize(out.weights.size());
  std::iota(out.order.begin(), out.order.end(), 0u);
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return out.weights[a] > out.weights[b]; });
  return out;
}

}  // namespace nestfast::comm
