#pragma once
// Seeded random small problems for the search tests: a transformer of 2..5
// blocks (dense, or MoE every other block), a 3-level cluster with random
// group sizes, bandwidths and latencies, and an HBM size drawn around what
// the model needs so memory binds (pruning and recompute matter).
#include <cstdint>
#include <random>

#include "solver/search/memory_model.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::search::testing {

inline GpuSpec small_gpu(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  GpuSpec gpu;
  gpu.name = "test-gpu";
  gpu.hbm_bytes = 80ull << 30;
  gpu.hbm_bandwidth_Bps = 1e12 * (1 + 2 * unit(rng));
  gpu.peak_flops_bf16 = 1e14 * (1 + 9 * unit(rng));
  gpu.peak_flops_fp32 = gpu.peak_flops_bf16 / 10;
  gpu.hbm_efficiency = 0.8;
  gpu.matmul_efficiency = {{1e6, 0.2}, {1e9, 0.5}, {1e12, 0.8}};
  gpu.fused_attention_efficiency_forward = 0.4 + 0.3 * unit(rng);
  gpu.fused_attention_efficiency_backward = 0.3 + 0.3 * unit(rng);
  gpu.kernel_overhead_s = 3e-6 * unit(rng);
  gpu.overlap_slowdown = 0.2 * unit(rng);
  return gpu;
}

// Three levels: devices per node 2 or 4, nodes per rack 2 or 3, unbounded top.
inline ClusterSpec small_cluster(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  ClusterSpec cluster;
  cluster.name = "test-cluster";
  cluster.gpu = small_gpu(rng);
  const int node = (rng() % 2) ? 4 : 2;
  const int rack = (rng() % 2) ? 3 : 2;
  const double fast = 1e11 * (1 + 4 * unit(rng));
  cluster.levels = {
      {"node", node, fast, 2e-6 * (1 + unit(rng)), 1.0, 1, {}},
      {"rack", rack, fast / (4 + 20 * unit(rng)), 1e-5 * (1 + unit(rng)), 1.0, 1, {}},
      {"spine", 0, fast / (8 + 40 * unit(rng)), 3e-5 * (1 + unit(rng)), 1.0 + 2 * unit(rng), 1, {}},
  };
  return cluster;
}

inline ModelSpec small_model(std::mt19937_64& rng) {
  ModelSpec model;
  model.name = "test-model";
  model.num_layers = 2 + static_cast<int>(rng() % 4);
  model.heads = 8;
  model.kv_heads = (rng() % 2) ? 8 : 4;
  model.head_dim = 64 * (1 + static_cast<int>(rng() % 2));
  model.hidden = model.heads * model.head_dim;
  model.ffn_hidden = model.hidden * (2 + static_cast<int>(rng() % 3));
  model.vocab = 4096 * (1 + static_cast<int>(rng() % 8));
  model.seq_len = 512 * (1 + static_cast<int>(rng() % 4));
  model.mlp = (rng() % 2) ? MlpKind::Swiglu : MlpKind::Gelu;
  if (rng() % 4 == 0) {
    model.moe.num_experts = 4;
    model.moe.top_k = 2;
    model.moe.expert_ffn_hidden = model.hidden;
    model.moe.layer_interval = 2;
  }
  return model;
}

// A problem whose space is small enough to enumerate: one micro-batch size,
// 1F1B, one placement order per case (random), pp <= 4.
struct RandomCase {
  SolveProblem problem;
  StrategySpace space;
};

inline RandomCase random_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  RandomCase c;
  c.problem.model = small_model(rng);
  c.problem.cluster = small_cluster(rng);
  const int gpus_choices[] = {4, 6, 8, 12, 16};
  c.problem.gpus = gpus_choices[rng() % 5];
  c.problem.global_batch = 4 * c.problem.gpus;
  c.space.micro_batch = {1 + static_cast<int>(rng() % 2)};
  c.space.vpp = {1};
  c.space.pp = {1, 2, 3, 4};
  c.space.cp = {1};
  c.space.zero_stage = {static_cast<int>(rng() % 4)};
  static const std::vector<std::vector<ParallelDim>> kOrders = {
      {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp, ParallelDim::Pp},
      {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp},
      {ParallelDim::Pp, ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp},
      {ParallelDim::Dp, ParallelDim::Pp, ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep},
  };
  c.space.placements = {kOrders[rng() % kOrders.size()]};
  return c;
}

// Sets HBM to the runtime reserve plus `fraction` of what the plainest plan
// (no pipeline, no recompute, no ZeRO) needs beyond it: below 1, memory binds.
inline void set_hbm_fraction(RandomCase& c, double fraction) {
  c.problem.cluster.gpu.hbm_bytes = 1ull << 50;
  Execution plain;
  plain.dp = c.problem.gpus;
  plain.micro_batch = c.space.micro_batch.front();
  plain.global_batch = c.problem.global_batch;
  const double need = evaluate_plan(c.problem.model, c.problem.cluster, plain).memory_peak_bytes;
  c.problem.cluster.gpu.hbm_bytes =
      static_cast<std::uint64_t>(kRuntimeReserveBytes + fraction * (need - kRuntimeReserveBytes));
}

// A seeded fraction in [0.2, 1.05), so some plans do not fit.
inline void tighten_memory(RandomCase& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 1);
  set_hbm_fraction(c, std::uniform_real_distribution<double>(0.2, 1.05)(rng));
}

}  // namespace nestfast::search::testing
