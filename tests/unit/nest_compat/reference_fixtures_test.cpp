// The compat model against the artifact's own answers on all 21 fixtures:
// (a) its chosen plan reproduces finalTimePerBatch, (b) the search finds a
// plan at least as good, (c) the baselines reproduce baselineResults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "fixtures.hpp"
#include "io/nest_json/nest_json.hpp"
#include "solver/compat/nest_solver.hpp"

namespace nestfast {
namespace {

using compat::CostModelKind;
using test::nest_fixture_names;
using test::nest_input_path;
using test::nest_output_path;

constexpr double kRelativeTolerance = 1e-9;

double relative_error(double value, double reference) { return std::fabs(value / reference - 1.0); }

TEST(NestReferenceFixtures, AllTwentyOneArePresent) { EXPECT_EQ(nest_fixture_names().size(), 21u); }

TEST(NestReferenceFixtures, ReferencePlanReproducesFinalTimePerBatch) {
  for (const auto& name : nest_fixture_names()) {
    const auto problem = io::load_nest_input(nest_input_path(name));
    const auto reference = io::load_nest_output(nest_output_path(name), problem);
    const auto time = compat::evaluate_plan(problem, reference.plan, CostModelKind::Compat);
    ASSERT_TRUE(time.has_value()) << name << ": the artifact's plan is infeasible in the compat model";
    const double error = relative_error(*time, reference.time_per_batch);
    std::printf("(a) %-28s compat %.17g artifact %.17g rel %.2e\n", name.c_str(), *time, reference.time_per_batch,
                error);
    EXPECT_LE(error, kRelativeTolerance) << name;
  }
}

TEST(NestReferenceFixtures, CompatSearchMatchesOrBeatsTheArtifact) {
  for (const auto& name : nest_fixture_names()) {
    const auto problem = io::load_nest_input(nest_input_path(name));
    const auto reference = io::load_nest_output(nest_output_path(name), problem);
    const auto answer = compat::solve(problem, CostModelKind::Compat);
    const auto reference_time = compat::evaluate_plan(problem, reference.plan, CostModelKind::Compat);
    ASSERT_TRUE(reference_time.has_value()) << name;
    std::printf("(b) %-28s search %.17g artifact %.17g ratio %.17g (t=%d d=%d s=%zu)\n", name.c_str(),
                answer.time_per_batch, reference.time_per_batch, answer.time_per_batch / reference.time_per_batch,
                answer.plan.tp, answer.plan.dp, answer.plan.stages.size());
    // Same arithmetic on both sides: the search's optimum is never above the
    // artifact's plan priced by the same model.
    EXPECT_LE(answer.time_per_batch, *reference_time) << name;
    // And the answer is what its own plan costs.
    const auto replay = compat::evaluate_plan(problem, answer.plan, CostModelKind::Compat);
    ASSERT_TRUE(replay.has_value()) << name;
    EXPECT_EQ(*replay, answer.time_per_batch) << name;
  }
}

// Where plans tie, the DP breaks ties as the artifact does: on all 21
// fixtures it returns the artifact's own stages, d and t.
TEST(NestReferenceFixtures, CompatSearchPicksTheArtifactsOwnPlan) {
  for (const auto& name : nest_fixture_names()) {
    const auto problem = io::load_nest_input(nest_input_path(name));
    const auto reference = io::load_nest_output(nest_output_path(name), problem);
    const auto answer = compat::solve(problem, CostModelKind::Compat);
    EXPECT_EQ(answer.plan.tp, reference.plan.tp) << name;
    EXPECT_EQ(answer.plan.dp, reference.plan.dp) << name;
    ASSERT_EQ(answer.plan.stages.size(), reference.plan.stages.size()) << name;
    for (std::size_t index = 0; index < answer.plan.stages.size(); ++index) {
      const auto& ours = answer.plan.stages[index];
      const auto& theirs = reference.plan.stages[index];
      EXPECT_TRUE(ours.first == theirs.first && ours.end == theirs.end && ours.devices == theirs.devices)
          << name << " stage " << index << ": [" << ours.first << ", " << ours.end << ") vs [" << theirs.first << ", "
          << theirs.end << ")";
    }
  }
}

TEST(NestReferenceFixtures, CompatBaselinesReproduceBaselineResults) {
  for (const auto& name : nest_fixture_names()) {
    const auto problem = io::load_nest_input(nest_input_path(name));
    const auto reference = io::load_nest_output(nest_output_path(name), problem);
    const auto results = compat::evaluate_baselines(problem, CostModelKind::Compat);
    std::map<std::string, std::optional<double>> ours;
    for (const auto& result : results) ours[result.name] = result.time_per_batch;
    ASSERT_EQ(ours.size(), reference.baselines.size()) << name;
    for (const auto& expected : reference.baselines) {
      ASSERT_TRUE(ours.count(expected.name)) << name << " " << expected.name;
      const auto& got = ours[expected.name];
      if (!expected.time_per_batch) {
        EXPECT_FALSE(got.has_value()) << name << " " << expected.name << ": the artifact found it infeasible";
        std::printf("(c) %-28s %-6s null == null\n", name.c_str(), expected.name.c_str());
        continue;
      }
      ASSERT_TRUE(got.has_value()) << name << " " << expected.name;
      const double error = relative_error(*got, *expected.time_per_batch);
      std::printf("(c) %-28s %-6s %.17g artifact %.17g rel %.2e\n", name.c_str(), expected.name.c_str(), *got,
                  *expected.time_per_batch, error);
      EXPECT_LE(error, kRelativeTolerance) << name << " " << expected.name;
    }
  }
}

TEST(NestReferenceFixtures, CorrectedModelAnswersEveryFixture) {
  for (const auto& name : nest_fixture_names()) {
    const auto problem = io::load_nest_input(nest_input_path(name));
    const auto reference = io::load_nest_output(nest_output_path(name), problem);
    const auto answer = compat::solve(problem, CostModelKind::Corrected);
    EXPECT_TRUE(std::isfinite(answer.time_per_batch) && answer.time_per_batch > 0.0) << name;
    const auto replay = compat::evaluate_plan(problem, answer.plan, CostModelKind::Corrected);
    ASSERT_TRUE(replay.has_value()) << name;
    EXPECT_EQ(*replay, answer.time_per_batch) << name;
    EXPECT_EQ(answer.baselines.size(), problem.baselines.size()) << name;
    double best_baseline = 0.0;
    std::string best_name;
    for (const auto& result : answer.baselines) {
      if (result.time_per_batch && (best_baseline == 0.0 || *result.time_per_batch < best_baseline)) {
        best_baseline = *result.time_per_batch;
        best_name = result.name;
      }
    }
    // Every baseline is a plan of the searched space (p*t*ep*cp*d <= N and
    // d <= micro-batches here), priced by the same model: never better.
    if (best_baseline > 0.0) {
      EXPECT_LE(answer.time_per_batch, best_baseline) << name;
    }
    double claimed_baseline = 0.0;
    for (const auto& result : reference.baselines) {
      if (result.time_per_batch && (claimed_baseline == 0.0 || *result.time_per_batch < claimed_baseline)) {
        claimed_baseline = *result.time_per_batch;
      }
    }
    const auto artifact_plan = compat::evaluate_plan(problem, reference.plan, CostModelKind::Corrected);
    ASSERT_TRUE(artifact_plan.has_value()) << name;
    // A markdown row for docs/nest-compat.md ("Reproducing NEST").
    std::printf("| %s | %.3f | %s %.5g | %.5g | %.5g | %.4f | %.4f |\n", name.c_str(),
                claimed_baseline / reference.time_per_batch, best_name.c_str(), best_baseline, *artifact_plan,
                answer.time_per_batch,
                best_baseline / *artifact_plan, best_baseline / answer.time_per_batch);
  }
}

}  // namespace
}  // namespace nestfast
