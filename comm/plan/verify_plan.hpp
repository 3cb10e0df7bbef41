#pragma once
// The plan's invariants (comm.md section 1), checked independently of how the
// plan was built: every stage a permutation; every per-GPU stage transfer at
// most the stage weight; the stages re-sum to the padded matrix, whose lines
// all sum to padded_line_sum and which covers the server matrix; every rank
// sends only bytes it holds; every byte of the demand arrives exactly once at
// its destination and offset.
#include <cstddef>
#include <string>
#include <vector>

#include "comm/plan/fast_plan.hpp"

namespace nestfast::comm {

// The problems found, each one line; empty when the plan is sound. Stops
// after max_problems.
std::vector<std::string> verify_plan(const FastPlan& plan, std::size_t max_problems = 20);

}  // namespace nestfast::comm
