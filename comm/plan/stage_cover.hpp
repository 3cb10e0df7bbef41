#pragma once
// Few stages instead of an exact Birkhoff decomposition (issue 18: the exact
// one has up to S^2 - 2S + 2 stages, and every stage costs the executor a
// latency). A cover schedule: permutation stages whose weights add up, on
// every server pair, to at least its entry of the server matrix, so every
// byte has a slot; the total weight (the padded line sum) may exceed the
// exact one, which is what the stage count is traded against.
//
// The greedy: every entry becomes pieces of at most `piece_cap` bytes (0 =
// one piece per entry); the pieces and idle slots form a D-regular bipartite
// multigraph (D = most pieces on one server's line), which splits into D
// perfect matchings (Koenig). They are taken heaviest first: each stage is a
// greedy matching over the pieces in decreasing weight, completed by
// shortest augmenting paths, and weighs as much as its heaviest piece, so
// pieces of similar weight share stages. At most D stages, D <= S - 1 +
// (most bytes on a line) / piece_cap. O(D S^2) with flat arrays.
#include <cstdint>
#include <vector>

#include "comm/plan/birkhoff.hpp"

namespace nestfast::comm {

// `matrix`: S x S row-major, the per-NIC loads (diagonal ignored). Stages come
// back in BirkhoffStages form, `order` by decreasing weight.
BirkhoffStages cover_stages(const std::vector<std::uint64_t>& matrix, int size, std::uint64_t piece_cap);

}  // namespace nestfast::comm
