// reduce / merge: the deterministic end of the search. The total order is
// (feasible first, lower iteration time, lower ordinal), so the answer does
// not depend on how the instances were split across threads or ranks.
#include <algorithm>

#include "solver/search/solve.hpp"

namespace nestfast::search {
namespace {

bool better(const InstanceResult& a, const InstanceResult& b) {
  if (a.iteration_time_s != b.iteration_time_s) return a.iteration_time_s < b.iteration_time_s;
  return a.ordinal < b.ordinal;
}

void add_stats(SearchStats& total, const SearchStats& part) {
  total.instances += part.instances;
  total.feasible_instances += part.feasible_instances;
  total.dp_runs += part.dp_runs;
  total.states += part.states;
  total.transitions += part.transitions;
  total.pruned_memory += part.pruned_memory;
  total.pruned_params += part.pruned_params;
  total.pruned_bound += part.pruned_bound;
  total.plans_evaluated += part.plans_evaluated;
  total.pruned_instances += part.pruned_instances;
}

// Keeps the tighter of two infeasibility explanations: the least memory
// needed, then the lower ordinal.
void keep_tightest(SolveResult& into, double bytes, std::uint64_t ordinal, const std::string& reason) {
  if (reason.empty()) return;
  const bool replace = into.infeasible_reason.empty() || bytes < into.tightest_memory_bytes ||
                       (bytes == into.tightest_memory_bytes && ordinal < into.tightest_ordinal);
  if (!replace) return;
  into.infeasible_reason = reason;
  into.tightest_memory_bytes = bytes;
  into.tightest_ordinal = ordinal;
}

void finish(SolveResult& result, int top_k) {
  std::sort(result.top.begin(), result.top.end(), better);
  if (static_cast<int>(result.top.size()) > std::max(top_k, 1)) result.top.resize(static_cast<std::size_t>(std::max(top_k, 1)));
  result.feasible = !result.top.empty();
}

}  // namespace

SolveResult reduce(const std::vector<InstanceResult>& results, int top_k) {
  SolveResult result;
  for (const InstanceResult& r : results) {
    add_stats(result.stats, r.stats);
    if (r.feasible) {
      result.top.push_back(r);
    } else {
      keep_tightest(result, r.min_memory_bytes, r.ordinal, r.infeasible_reason);
    }
  }
  finish(result, top_k);
  return result;
}

SolveResult merge(const SolveResult& a, const SolveResult& b, int top_k) {
  SolveResult result = a;
  result.top.insert(result.top.end(), b.top.begin(), b.top.end());
  add_stats(result.stats, b.stats);
  result.stats.wall_s = std::max(a.stats.wall_s, b.stats.wall_s);
  keep_tightest(result, b.tightest_memory_bytes, b.tightest_ordinal, b.infeasible_reason);
  finish(result, top_k);
  return result;
}

}  // namespace nestfast::search
