// Random inputs in the NEST artifact's format, from this test's own seeded
// generator, through the reader and both models: nothing crashes (the only
// way out is a one-line std::invalid_argument), both models agree on whether
// any plan fits, every answer replays to its own time, each model's optimum
// is at most its price of the other model's plan (the compat plan stands for
// the artifact's: compat reproduces it), of random plans and (corrected) of
// every baseline, and the written answer reads back as the same plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/nest_json/nest_json.hpp"
#include "solver/compat/nest_solver.hpp"

namespace nestfast {
namespace {

using compat::CostModelKind;
using compat::NestPlan;
using compat::NestProblem;
using nlohmann::json;

constexpr std::uint64_t kSeed = 20'2024;
constexpr int kProblems = 400;
// The generator keeps every problem small; this bounds the whole test even on
// a loaded machine (it stops early and says so rather than run on).
constexpr double kBudgetSeconds = 60.0;

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : random_(seed) {}

  json problem() {
    const int levels = uniform(1, 4);
    std::vector<int> devices_per_level;
    int devices = 1;
    for (int level = 0; level < levels; ++level) {
      const int count = pick<int>({1, 2, 2, 3, 4, 8});
      devices_per_level.push_back(count);
      devices *= count;
    }
    json bws = json::array(), latencies = json::array();
    for (int level = 0; level < levels; ++level) {
      bws.push_back(std::exp(real(std::log(5e9), std::log(1e12))));
      latencies.push_back(std::exp(real(std::log(5e-7), std::log(5e-4))));
    }
    const int ep = pick<int>({1, 1, 1, 2});
    const int cp = pick<int>({1, 1, 2});
    std::vector<int> widths;
    for (int width : {1, 2, 4, 8}) {
      if (width * ep * cp <= devices && chance(0.5)) widths.push_back(width);
    }
    if (widths.empty()) widths.push_back(1);
    const int layers = uniform(1, 20);  // transformer layers; the chain adds the embedding
    // Skip edges, the same for every width.
    std::vector<std::pair<int, int>> skips;
    for (int count = uniform(0, 3); count > 0 && layers >= 2; --count) {
      const int source = uniform(-1, layers - 3);
      const int dest = uniform(source + 2, layers - 1);
      if (dest > source + 1 && std::find(skips.begin(), skips.end(), std::pair{source, dest}) == skips.end()) {
        skips.emplace_back(source, dest);
      }
    }
    json nodes = json::object(), edges = json::object();
    double largest_node = 0.0;   // 2P + A of the largest layer
    double largest_chain = 0.0;  // of a whole chain
    for (int width : widths) {
      json list = json::array(), links = json::array();
      double total = 0.0;
      for (int id = -1; id < layers; ++id) {
        const double fw = std::exp(real(std::log(0.05), std::log(300.0))) / width;
        const double parameters = std::floor(std::exp(real(std::log(1e5), std::log(2e9))) / width);
        const double activations = std::floor(parameters * real(0.5, 30.0));
        total += 2 * parameters + activations;
        largest_node = std::max(largest_node, 2 * parameters + activations);
        list.push_back({{"id", id},
                        {"optimalLatencyFw", fw},
                        {"optimalLatencyBw", fw * real(0.8, 2.5)},
                        {"parameterSize", parameters},
                        {"activationSize", activations},
                        {"isTensorParallelized", width > 1}});
        if (id >= 0) links.push_back({{"sourceId", id - 1}, {"destId", id}, {"communicationCost", bytes()}});
      }
      for (const auto& [source, dest] : skips) {
        links.push_back({{"sourceId", source}, {"destId", dest}, {"communicationCost", bytes()}});
      }
      largest_chain = std::max(largest_chain, total);
      nodes[std::to_string(width)] = list;
      edges[std::to_string(width)] = links;
    }
    const int micro_batches = pick<int>({1, 3, 8, 12, 64, 100, 256});
    json baselines = json::object();
    for (int index = uniform(0, 4); index > 0; --index) {
      const int tp = widths[static_cast<std::size_t>(uniform(0, static_cast<int>(widths.size()) - 1))];
      const int stages = uniform(1, std::max(1, std::min(layers, 8)));
      json baseline = {{"p", stages}, {"d", uniform(1, std::max(1, devices))}, {"t", tp},
                       {"num_transformer_layers", layers}};
      if (chance(0.5)) {
        std::vector<int> sizes(static_cast<std::size_t>(stages), 1);
        for (int left = layers - stages; left > 0; --left) ++sizes[static_cast<std::size_t>(uniform(0, stages - 1))];
        baseline["layer_partition"] = sizes;
      }
      std::string name = std::to_string(index);
      name.insert(0, 1, 'B');
      baselines[name] = baseline;
    }
    return {{"nodes", nodes},
            {"edges", edges},
            {"bws", bws},
            {"latency_per_level", latencies},
            {"devices_per_level", devices_per_level},
            {"maxDevices", devices},
            // From a little under the largest layer to no pruning at all.
            {"maxMemoryPerDevice",
             std::floor(largest_node * real(0.9, 1.1) + std::pow(real(0.0, 1.0), 2) * 3 * largest_chain)},
            {"mbsInBatch", micro_batches},
            {"activationRecomputation", chance(0.5)},
            {"optimizerAlgorithm", chance(0.3) ? "Adam" : "SGD"},
            {"ep_degree", ep},
            {"cp_degree", cp},
            {"sp_enabled", chance(0.3)},
            {"bandwidth", 4294967296.0},
            {"frequency", 1.05e6},
            {"baselines", baselines}};
  }

  // A random plan of the artifact's space for `problem`, or nullopt.
  std::optional<NestPlan> plan(const NestProblem& problem) {
    const auto& graph = problem.graphs[static_cast<std::size_t>(uniform(0, static_cast<int>(problem.graphs.size()) - 1))];
    const int stage_devices = problem.stage_devices(graph.tp);
    const int positions = static_cast<int>(graph.layers.size());
    const int most = std::min(positions, problem.max_devices / stage_devices);
    if (most < 1) return std::nullopt;
    const int stages = uniform(1, most);
    const int replicas = uniform(1, std::max(1, std::min<int>(problem.max_devices / (stages * stage_devices),
                                                             static_cast<int>(problem.mbs_in_batch))));
    std::vector<int> cuts;
    for (int position = 1; position < positions; ++position) cuts.push_back(position);
    std::shuffle(cuts.begin(), cuts.end(), random_);
    cuts.resize(static_cast<std::size_t>(stages - 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.push_back(positions);
    NestPlan plan{graph.tp, replicas, {}};
    std::size_t first = 0;
    for (int cut : cuts) {
      plan.stages.push_back({stage_devices, first, static_cast<std::size_t>(cut)});
      first = static_cast<std::size_t>(cut);
    }
    return plan;
  }

 private:
  int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  double real(double low, double high) { return std::uniform_real_distribution<double>(low, high)(random_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(random_); }
  double bytes() { return std::floor(std::exp(real(std::log(65536.0), std::log(2.7e8)))); }
  template <class T>
  T pick(std::initializer_list<T> values) {
    return *(values.begin() + uniform(0, static_cast<int>(values.size()) - 1));
  }

  std::mt19937_64 random_;
};

std::optional<compat::NestAnswer> solve_or_nothing(const NestProblem& problem, CostModelKind model) {
  try {
    return compat::solve(problem, model);
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("no plan fits"), std::string::npos) << error.what();
    return std::nullopt;
  }
}

// Every group size a multiple or a divisor of the stage's devices.
bool groups_fit(const NestProblem& problem, int stage_devices) {
  long long group = 1;
  for (int count : problem.network.devices_per_level) {
    group *= count;
    if (group % stage_devices != 0 && stage_devices % group != 0) return false;
  }
  return true;
}

TEST(NestCompatProperties, RandomInputsThroughBothModels) {
  Generator generator(kSeed);
  const auto start = std::chrono::steady_clock::now();
  int checked = 0, rejected = 0, unplaceable = 0, plans = 0, skeleton_priced = 0;
  for (int index = 0; index < kProblems; ++index) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kBudgetSeconds) {
      ADD_FAILURE() << "time budget of " << kBudgetSeconds << " s spent after " << index << " problems";
      break;
    }
    const std::string text = generator.problem().dump();
    const std::string where = "problem " + std::to_string(index) + " of seed " + std::to_string(kSeed);
    NestProblem problem;
    try {
      problem = io::parse_nest_input(text, where);
    } catch (const std::invalid_argument& error) {
      // Only a baseline the reader refuses (an empty uniform stage) is expected here.
      EXPECT_NE(std::string(error.what()).find("baselines."), std::string::npos) << where << ": " << error.what();
      ++rejected;
      continue;
    }
    const auto compat_answer = solve_or_nothing(problem, CostModelKind::Compat);
    const auto corrected_answer = solve_or_nothing(problem, CostModelKind::Corrected);
    ASSERT_EQ(compat_answer.has_value(), corrected_answer.has_value()) << where << ": one model finds a plan";
    if (!compat_answer) {
      ++unplaceable;
      continue;
    }
    ++checked;
    const auto compat_replay = compat::evaluate_plan(problem, compat_answer->plan, CostModelKind::Compat);
    const auto corrected_replay = compat::evaluate_plan(problem, corrected_answer->plan, CostModelKind::Corrected);
    ASSERT_TRUE(compat_replay && corrected_replay) << where;
    EXPECT_EQ(*compat_replay, compat_answer->time_per_batch) << where;
    EXPECT_EQ(*corrected_replay, corrected_answer->time_per_batch) << where;
    // Each optimum is at most its own price of the other's plan.
    const auto corrected_of_compat = compat::evaluate_plan(problem, compat_answer->plan, CostModelKind::Corrected);
    const auto compat_of_corrected = compat::evaluate_plan(problem, corrected_answer->plan, CostModelKind::Compat);
    ASSERT_TRUE(corrected_of_compat && compat_of_corrected) << where;
    EXPECT_LE(corrected_answer->time_per_batch, *corrected_of_compat) << where;
    EXPECT_LE(compat_answer->time_per_batch, *compat_of_corrected) << where;
    for (int sample = 0; sample < 8; ++sample) {
      const auto plan = generator.plan(problem);
      if (!plan) continue;
      ++plans;
      if (const auto time = compat::evaluate_plan(problem, *plan, CostModelKind::Compat)) {
        EXPECT_LE(compat_answer->time_per_batch, *time) << where << " random plan " << sample;
      }
      if (const auto time = compat::evaluate_plan(problem, *plan, CostModelKind::Corrected)) {
        EXPECT_LE(corrected_answer->time_per_batch, *time) << where << " random plan " << sample;
      }
    }
    for (const auto& baseline : corrected_answer->baselines) {
      if (baseline.time_per_batch) {
        EXPECT_LE(corrected_answer->time_per_batch, *baseline.time_per_batch) << where;
      }
    }
    // The written answer reads back as the same plan, and where the stage
    // shape fits the network's groups (so that any device of a stage gives
    // the same levels) its skeleton prices it as the layout does.
    const std::string written = io::to_artifact_json(*compat_answer, problem).dump();
    const auto reread = io::parse_nest_output(written, where + " (written)", problem);
    EXPECT_EQ(reread.time_per_batch, compat_answer->time_per_batch) << where;
    ASSERT_EQ(reread.plan.stages.size(), compat_answer->plan.stages.size()) << where;
    for (std::size_t stage = 0; stage < reread.plan.stages.size(); ++stage) {
      EXPECT_EQ(reread.plan.stages[stage].first, compat_answer->plan.stages[stage].first) << where;
      EXPECT_EQ(reread.plan.stages[stage].end, compat_answer->plan.stages[stage].end) << where;
    }
    const auto priced = compat::evaluate_plan(problem, reread.plan, CostModelKind::Compat, &reread.skeleton);
    ASSERT_TRUE(priced.has_value()) << where;
    if (groups_fit(problem, problem.stage_devices(compat_answer->plan.tp))) {
      ++skeleton_priced;
      EXPECT_EQ(*priced, compat_answer->time_per_batch) << where;
    }
  }
  std::printf("%d problems solved by both models (%d also priced from their written skeleton), %d with no plan "
              "that fits, %d refused by the reader; %d random plans priced\n",
              checked, skeleton_priced, unplaceable, rejected, plans);
  // The generator must mostly make problems that have a plan.
  EXPECT_GT(checked, kProblems / 2);
}

}  // namespace
}  // namespace nestfast
