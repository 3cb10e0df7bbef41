// Memory model vs Megatron-LM's per-GPU memory (Korthikanti et al. 2022,
// Figure 1; shared/calibration/megatron-memory-fig1.csv, read at test time
// from NESTFAST_SHARED_DIR). Prints predicted vs published for both columns
// and fails above 5% average / 10% maximum relative error on either.
//
// Like for like: Figure 1's parameter column is the state of the
// transformer blocks only (it equals exactly 18 B x 12 h^2 x layers / t for
// all four models, i.e. no embedding), so it is compared with the predicted
// state of the first rank's blocks; the rank's full state (with the
// embedding, which Megatron also keeps there) is printed beside it. The
// activation column is compared with the full predicted stash of rank 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/presets/presets.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/plan_cost.hpp"

namespace nestfast {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Fig1Row {
  std::string model;
  int hidden, ffn, heads, head_dim, layers, gpus, tp, pp, dp, global_batch, micro_batch, vpp;
  std::string mode;
  double state_GiB, activations_GiB;
};

std::string shared_dir() {
  const char* from_env = std::getenv("NESTFAST_SHARED_DIR");
  return from_env != nullptr && *from_env != '\0' ? from_env : NESTFAST_SHARED_DIR;
}

std::vector<Fig1Row> read_fig1(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::vector<Fig1Row> rows;
  std::string line;
  bool header_seen = false;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      header_seen = true;
      continue;
    }
    std::stringstream stream(line);
    std::vector<std::string> cells;
    std::string cell;
    while (std::getline(stream, cell, ',')) cells.push_back(cell);
    if (cells.size() != 16) throw std::runtime_error(path + ": a row without 16 cells: " + line);
    Fig1Row row;
    row.model = cells[0];
    int* ints[] = {&row.hidden, &row.ffn, &row.heads, &row.head_dim, &row.layers, &row.gpus, &row.tp,
                   &row.pp, &row.dp, &row.global_batch, &row.micro_batch, &row.vpp};
    for (std::size_t i = 0; i < 12; ++i) *ints[i] = std::stoi(cells[i + 1]);
    row.mode = cells[13];
    row.state_GiB = std::stod(cells[14]);
    row.activations_GiB = std::stod(cells[15]);
    rows.push_back(row);
  }
  return rows;
}

struct Prediction {
  double block_state_GiB;  // compared
  double rank_state_GiB;   // printed
  double activations_GiB;  // compared
};

Prediction predict(const Fig1Row& row) {
  const ModelSpec model = io::load_model(row.model);
  EXPECT_EQ(model.hidden, row.hidden) << row.model;
  EXPECT_EQ(model.ffn_hidden, row.ffn) << row.model;
  EXPECT_EQ(model.heads, row.heads) << row.model;
  EXPECT_EQ(model.head_dim, row.head_dim) << row.model;
  EXPECT_EQ(model.num_layers, row.layers) << row.model;
  const ClusterSpec cluster = io::load_cluster("selene-a100");

  Execution execution;
  execution.tp = row.tp;
  execution.pp = row.pp;
  execution.dp = row.dp;
  execution.micro_batch = row.micro_batch;
  execution.global_batch = row.global_batch;
  execution.vpp = row.vpp;
  execution.attention = Attention::Unfused;  // Megatron-LM 2022's softmax path, whose s^2 terms Figure 1 measures
  const bool seqsel = row.mode == "seqsel";
  EXPECT_TRUE(seqsel || row.mode == "none") << row.mode;
  execution.sp = seqsel;
  const ExecutionLayout layout = compute_layout(cluster, execution);
  execution.stages = uniform_stages(model, layout, row.pp, row.vpp, seqsel ? Recompute::Selective : Recompute::None);
  const PlanCost cost = evaluate_plan(model, cluster, execution);
  const RankCost& first = cost.ranks.front();

  // The blocks of rank 0 (chain entries 1..L of each of its chunks).
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, execution, layout));
  double block_params = 0;
  for (int index : first.stages) {
    const StagePlan& stage = execution.stages[static_cast<std::size_t>(index)];
    const int a = std::max(stage.first_layer, 1), b = std::min(stage.last_layer, model.num_layers);
    if (a <= b) block_params += table.sum(LayerColumn::DenseParams, a, b) + table.sum(LayerColumn::ExpertParams, a, b);
  }
  Prediction prediction;
  prediction.block_state_GiB = param_state_bytes(block_params, row.dp, 0, Optimizer::Adam).total() / kGiB;
  prediction.rank_state_GiB =
      (first.memory.weights_bytes + first.memory.gradients_bytes + first.memory.optimizer_bytes) / kGiB;
  prediction.activations_GiB = first.memory.activations_bytes / kGiB;
  return prediction;
}

TEST(MemoryCalibration, MegatronFigure1WithinFiveAndTenPercent) {
  const std::string path = shared_dir() + "/calibration/megatron-memory-fig1.csv";
  const std::vector<Fig1Row> rows = read_fig1(path);
  ASSERT_EQ(rows.size(), 8u) << path;

  double state_sum = 0, state_max = 0, act_sum = 0, act_max = 0;
  std::printf("%-12s %-7s | %9s %9s %7s %12s | %9s %9s %7s\n", "model", "mode", "state", "published", "err",
              "(w/ embed.)", "activ.", "published", "err");
  for (const Fig1Row& row : rows) {
    const Prediction p = predict(row);
    const double state_error = std::abs(p.block_state_GiB - row.state_GiB) / row.state_GiB;
    const double act_error = std::abs(p.activations_GiB - row.activations_GiB) / row.activations_GiB;
    std::printf("%-12s %-7s | %9.3f %9.3f %6.2f%% %12.3f | %9.3f %9.3f %6.2f%%\n", row.model.c_str(),
                row.mode.c_str(), p.block_state_GiB, row.state_GiB, 100 * state_error, p.rank_state_GiB,
                p.activations_GiB, row.activations_GiB, 100 * act_error);
    state_sum += state_error;
    act_sum += act_error;
    state_max = std::max(state_max, state_error);
    act_max = std::max(act_max, act_error);
  }
  const double n = static_cast<double>(rows.size());
  std::printf("params+grads+optimizer: avg %.2f%% max %.2f%%; activations: avg %.2f%% max %.2f%%\n",
              100 * state_sum / n, 100 * state_max, 100 * act_sum / n, 100 * act_max);
  EXPECT_LE(state_sum / n, 0.05);
  EXPECT_LE(state_max, 0.10);
  EXPECT_LE(act_sum / n, 0.05);
  EXPECT_LE(act_max, 0.10);
}

}  // namespace
}  // namespace nestfast
