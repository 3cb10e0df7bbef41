#pragma once
// The NEST artifact's JSON: its DP input (strictly validated: every problem is
// a std::invalid_argument of one line naming the source and the key), its
// output (a reference answer to compare with), and nestfast's answer written
// in the artifact's output format.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "solver/compat/nest_plan.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::io {

// Parses and validates a DP input; `source` names it in errors.
compat::NestProblem parse_nest_input(std::string_view text, const std::string& source);
compat::NestProblem load_nest_input(const std::string& path);

// The artifact's answer for an input: its chosen plan (node ids mapped to
// chain positions), finalTimePerBatch, baselineResults and, when present, its
// networkSkeleton (devices in the listed order, chain positions checked
// against the plan's graph).
struct NestReference {
  compat::NestPlan plan;
  compat::NetworkSkeleton skeleton;
  double time_per_batch = 0.0;
  std::vector<compat::BaselineResult> baselines;
};
NestReference parse_nest_output(std::string_view text, const std::string& source, const compat::NestProblem& problem);
NestReference load_nest_output(const std::string& path, const compat::NestProblem& problem);

// The artifact's output keys: stages[{devicesForStage, nodes}],
// dataParallelDegree, tensorParallelDegree, finalTimePerBatch,
// baselineResults (null = infeasible) and networkSkeleton. The corrected
// model adds costModel and timeUnit ("s"), since its times are seconds.
nlohmann::json to_artifact_json(const compat::NestAnswer& answer, const compat::NestProblem& problem);

}  // namespace nestfast::io
