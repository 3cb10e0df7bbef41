#pragma once
// Birkhoff-von Neumann decomposition of a nonnegative integer matrix whose
// rows and columns all sum to the same value, into weighted permutations.
#include <cstdint>
#include <vector>

namespace nestfast::comm {

// Stages in the order they were found; `order` lists them by decreasing
// weight (ties in the order found).
struct BirkhoffStages {
  std::vector<std::uint64_t> weights;
  std::vector<std::int32_t> perms;    // stage k: [k*size, (k+1)*size), perm[row] = column
  std::vector<std::uint32_t> order;
  bool complete = true;  // false: stopped at the stage limit, the stages do not re-sum to the matrix
};

// Raises entries of the size x size row-major `matrix` so that every row and
// column sums to the largest line sum, which is returned. Padding goes on the
// diagonal first (an idle stage slot), then by a deterministic two-pointer
// sweep over rows and columns still short. Keeps multiples of a quantum.
std::uint64_t pad_to_equal_line_sums(std::vector<std::uint64_t>& matrix, int size);

// Decomposes a matrix with all line sums equal to line_sum (as left by
// pad_to_equal_line_sums). Each stage takes a perfect matching on the
// support, weight = its smallest entry. The matching of the previous stage is
// kept and only rows whose entry hit zero are re-matched, by a shortest
// augmenting path; every stage zeroes at least one entry, so there are at
// most size^2 - 2 size + 2 stages. Flat arrays, no allocation per stage.
// Stops (complete = false) once `stage_limit` stages are found and more are needed.
BirkhoffStages birkhoff_decompose(const std::vector<std::uint64_t>& matrix, int size, std::uint64_t line_sum,
                                  std::size_t stage_limit = static_cast<std::size_t>(-1));

}  // namespace nestfast::comm
