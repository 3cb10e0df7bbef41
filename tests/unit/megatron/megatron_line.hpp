#pragma once
// Test-only: what Megatron-LM would make of an emitted argument line, from
// the upstream data in solver/search/megatron_rules.hpp and nothing the
// search computes. It parses the line as argparse would (flags of the table
// only, with their value kinds and choices), checks the rules on the parsed
// numbers, builds Megatron's rank groups from them the way
// megatron/core/parallel_state.py does (RankGenerator over its order string,
// dense and expert grids) and turns the line back into a plan, so a test
// can price what Megatron would run.
#include <map>
#include <string>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/cluster/collectives.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/megatron_args.hpp"

namespace nestfast::megatron_test {

// Flag -> value ("" for switches), after argparse-style parsing.
struct ParsedLine {
  std::map<std::string, std::string> values;
  std::vector<std::string> problems;  // unknown flags, missing or bad values, repeats

  bool has(const std::string& flag) const { return values.count(flag) != 0; }
  int integer(const std::string& flag, int fallback) const;
  std::string text(const std::string& flag, const std::string& fallback = "") const;
};

ParsedLine parse_line(const std::string& line);

// Rank groups as Megatron builds them: lists of global ranks.
using RankGroups = std::vector<std::vector<int>>;
// generate_masked_orthogonal_rank_groups over `sizes` (innermost first),
// groups of the dims whose mask is set.
RankGroups masked_groups(const std::vector<int>& sizes, const std::vector<bool>& mask);

struct MegatronGroups {
  RankGroups tp, cp, dp_cp, pp;  // dense grid
  RankGroups ep, expert_dp, expert_pp;  // expert grid
};

// Every rule the line breaks for `model` on `world` GPUs with `environment`
// set as emitted; empty when Megatron-LM would run it. `groups` is filled
// when the grids can be built.
std::vector<std::string> validate_line(const ModelSpec& model, int world, const search::MegatronArguments& emitted,
                                       MegatronGroups* groups = nullptr);

// The plan Megatron-LM runs from the line (degrees, schedule, stages from the
// layout or its default split, recompute, sharding, attention, rank order),
// framework megatron-core.
Execution plan_of_line(const ModelSpec& model, int world, const ParsedLine& line);

// The shape of explicit rank groups on the cluster's levels (the worst group,
// compared from the outermost level down), as execution_layout.hpp defines
// group shapes, computed device by device.
GroupShape shape_of(const ClusterSpec& cluster, const RankGroups& groups);

}  // namespace nestfast::megatron_test
