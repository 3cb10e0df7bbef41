#pragma once
// Specs built in code for the cost-model tests (independent of the preset
// files, so a preset retune does not move these tests).
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::test {

// GPT-style block: GELU MLP 4h, MHA.
inline ModelSpec gpt_model(int layers, int hidden, int heads, int seq = 2048) {
  ModelSpec model;
  model.name = "test-gpt";
  model.num_layers = layers;
  model.hidden = hidden;
  model.ffn_hidden = 4 * hidden;
  model.heads = heads;
  model.kv_heads = heads;
  model.head_dim = hidden / heads;
  model.vocab = 51200;
  model.seq_len = seq;
  model.mlp = MlpKind::Gelu;
  model.tied_embeddings = true;
  return model;
}

inline ModelSpec moe_model() {
  ModelSpec model = gpt_model(8, 2048, 16);
  model.name = "test-moe";
  model.mlp = MlpKind::Swiglu;
  model.kv_heads = 4;
  model.moe.num_experts = 8;
  model.moe.top_k = 2;
  model.moe.expert_ffn_hidden = 4096;
  return model;
}

// DGX-A100-like: 8 GPUs on 300 GB/s, 25 GB/s per GPU across nodes, 4 nodes per leaf, oversubscribed spine.
inline ClusterSpec a100_cluster() {
  ClusterSpec cluster;
  cluster.name = "test-a100";
  GpuSpec& gpu = cluster.gpu;
  gpu.name = "test-a100";
  gpu.hbm_bytes = 80ull << 30;
  gpu.hbm_bandwidth_Bps = 2.039e12;
  gpu.hbm_efficiency = 0.85;
  gpu.peak_flops_bf16 = 312e12;
  gpu.matmul_efficiency = {{1e7, 0.1}, {1e9, 0.5}, {1e11, 0.8}};
  gpu.fused_attention_efficiency_forward = 0.6;
  gpu.fused_attention_efficiency_backward = 0.5;
  cluster.levels = {{"nvswitch", 8, 300e9, 2e-6, 1, 1, {}}, {"leaf", 4, 25e9, 4e-6, 1, 1, {}}, {"spine", 0, 25e9, 6e-6, 2, 1, {}}};
  return cluster;
}

// moe_model's 8 experts, one per device: ep 8 across dp 8, one sequence per
// replica; the dispatcher is the caller's choice.
inline Execution moe_execution(AllToAllAlgorithm a2a) {
  Execution e;
  e.dp = 8;
  e.ep = 8;
  e.global_batch = 8;
  e.a2a = a2a;
  return e;
}

}  // namespace nestfast::test
