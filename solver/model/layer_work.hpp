#pragma once
// What one layer of the chain does on one device for one micro-batch, under
// a sharding (tp, cp, ep, sp): GEMM FLOPs, HBM traffic of the memory-bound
// ops, bytes each collective moves, parameters held, activation bytes kept
// for the backward under each recompute mode. Pure arithmetic on the
// ModelSpec; solver/search/layer_table turns it into seconds on a cluster.
//
// Chain: 0 = embedding, 1..L = transformer blocks, L+1 = head.
//
// Activation bytes follow Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", arXiv 2205.05198, section 4),
// 16-bit activations and 1-byte dropout masks, per layer of a GPT block:
//   no recompute, no sp:  s b h (10 + 24/t + 5 a s / (h t))
//   sp:                   s b h (34/t + 5 a s / (h t))
//   selective (+sp):      s b h 34/t  (the 5 a s^2 b attention core is dropped)
//   full:                 2 s b h (/t with sp)  (only the block input is kept)
// generalised here to GQA (q and kv widths), SwiGLU (gate and up outputs are
// kept), MoE experts (k routed copies of each token), cp (s/cp queries per
// device against all s keys), fused attention (no s^2 terms; selective
// recompute still checkpoints the fused core, as Megatron-Core does, and
// drops its log-sum-exp) and
// multi-head latent attention (its latents, and Q/K/V/O at their own head
// widths, in place of 8 s b h / t).
#include <array>
#include <vector>

#include "solver/model/model_spec.hpp"
#include "solver/model/recompute_modules.hpp"

namespace nestfast {

enum class LayerKind { Embedding, DenseBlock, MoeBlock, Head };

LayerKind layer_kind(const ModelSpec& model, int chain_index);

struct Sharding {
  int tp = 1;
  int cp = 1;
  int ep = 1;
  int etp = 0;  // expert tensor parallelism: 0 = tp, or 1 (whole experts; execution.hpp)
  bool sp = false;
  int micro_batch = 1;
  int seq_len = 0;
  // Hottest expert device's tokens over the mean (scales expert compute and
  // expert activations on the slowest device).
  double expert_imbalance = 1.0;
  // Fused (FlashAttention-style) attention: the score matrix never reaches
  // HBM, nothing of size s^2 is stashed, and the backward recomputes the
  // scores (5 core GEMMs instead of 4). Off = Megatron-LM's unfused
  // softmax/dropout path of the calibration runs (Korthikanti et al. 2022).
  bool flash_attention = false;
  // A causal (decoder) mask: a fused kernel skips the score blocks above the
  // diagonal; the unfused path computes them all and masks them.
  bool causal = true;
  // What selective recompute checkpoints (recompute_modules.hpp).
  RecomputeModules recompute_modules = kDefaultRecomputeModules;
};

// Tile edge of the fused attention kernels (FlashAttention-2/3 and cuDNN
// use 64-128): a causal kernel runs the diagonal blocks whole, so it does
// (1 + tile / s) / 2 of the full score work.
inline constexpr double kFusedAttentionTile = 128;

struct LayerWork {
  // Forward GEMMs on this device: one entry per distinct GEMM (its FLOPs,
  // which sets its efficiency) with how many times it runs.
  struct Gemm {
    double flops = 0;
    double count = 1;
  };
  std::vector<Gemm> gemms;           // all forward GEMMs except the attention core
  std::vector<Gemm> attention_gemms; // QK^T and attention x V (the selective-recompute part)
  double hbm_bytes = 0;              // forward memory-bound traffic outside the attention core
  double attention_hbm_bytes = 0;    // softmax + dropout over the score matrix (fused: Q, K, V in, O out)
  // Fused attention: the forward FLOPs its kernel executes on this device
  // (the attention GEMMs' count times the causal fraction); its backward
  // executes 2.5x as many (QK^T again, then dV, dP, dQ, dK). 0 when unfused:
  // the attention GEMMs run as batched GEMMs, backward 2x forward.
  double fused_attention_flops = 0;
  double kernels = 0;                // kernels the forward launches (the backward about twice as many)

  // Communication volumes (bytes per device, per micro-batch, forward; the
  // backward mirrors them, see layer_table).
  // TP collectives in all-reduce units: 1 = one all-reduce without sp, one
  // all-gather + reduce-scatter pair with sp; 0.5 = a lone all-gather or
  // reduce-scatter (the embedding's and the head's sp boundaries).
  double tp_collectives_forward = 0;
  double tp_collectives_backward = 0;
  double tp_bytes = 0;              // each one's full buffer
  // Multi-head latent attention's narrower TP collectives (the latents, in
  // the same units; 0 for standard attention): layer_work.cpp's
  // add_latent_attention.
  double tp_latent_collectives_forward = 0;
  double tp_latent_collectives_backward = 0;
  double tp_latent_bytes = 0;
  // The routed experts' TP collectives over expert-tp (same units; 0 for
  // dense blocks and whole experts): layer_work.cpp's moe_block_work. Not
  // hidden by --tp-comm-overlap.
  double tp_expert_collectives_forward = 0;
  double tp_expert_collectives_backward = 0;
  double tp_expert_bytes = 0;
  double cp_kv_bytes = 0;           // K and V block one ring step passes
  double ep_bytes = 0;              // one all-to-all's bytes sent per device (dispatch; combine equal)
  int ep_all_to_alls_forward = 0;
  // The shared experts' forward in the two parts Megatron's
  // --moe-shared-expert-overlap runs on a side stream beside the dispatcher
  // (moe/token_dispatcher.py:705-717 and :864-873 at d98e8a64): fc1 and the
  // activation beside the dispatch all-to-all, fc2 beside the combine. A
  // copy of what `gemms` and `hbm_bytes` already hold (empty without shared
  // experts); their TP unit is the one tp_collectives_* keep for them.
  struct SidePart {
    std::vector<Gemm> gemms;
    double hbm_bytes = 0;
    double kernels = 0;
  };
  SidePart shared_fc1;
  SidePart shared_fc2;
  // The routed experts' forward (their GEMMs at the hottest device's load,
  // the activation, the permutes): the computation Megatron's combined 1F1B
  // runs between the dispatch and the combine (the "mlp" node,
  // models/gpt/fine_grained_callables.py:178-203 at d98e8a64); the rest of
  // the block is its "pre_dispatch" node (:67-150). A copy, as above.
  SidePart routed;

  double dense_params = 0;   // on this device, replicated over the dense dp group
  double expert_params = 0;  // on this device, replicated over the expert dp group

  std::array<double, 3> stash_bytes{};  // per micro-batch, by Recompute mode (None, Selective, Full)
  // What selective recompute of the sharding's modules runs again before the
  // backward (stash_bytes[Selective] is the stash without what they drop).
  struct Recomputed {
    std::vector<Gemm> gemms;
    double hbm_bytes = 0;
    double kernels = 0;
    bool attention_core = false;  // core_attn: the attention core again (and under cp its ring)
    double tp_units = 0;          // TP collectives again, in tp_bytes units
    double tp_shared_units = 0;   // of tp_units, the shared experts' unit (moe or shared_experts)
    double tp_latent_units = 0;   // ... in tp_latent_bytes units
    double tp_expert_units = 0;   // ... in tp_expert_bytes units
    int ep_all_to_alls = 0;       // moe: the dispatch and combine again
  };
  Recomputed selective;
  double output_bytes = 0;              // activation handed to the next layer (per device, p2p payload)
  double working_bytes = 0;             // transient peak while the layer runs its backward

  double model_flops = 0;               // fw + bw, mean routing (for MFU)
  double selective_recompute_flops = 0;  // what `selective` runs again (the attention core's as executed)
  double full_recompute_flops = 0;
};

// The head's row (L+1) also holds the model's multi-token-prediction layers,
// which Megatron builds on the last pipeline stage before the loss.
LayerWork layer_work(const ModelSpec& model, int chain_index, const Sharding& sharding);

// The MTP layers alone (what the head's row adds for them; empty without
// MTP): full recompute runs them again, not the head (layer_table).
LayerWork mtp_work(const ModelSpec& model, const Sharding& sharding);

// Total parameters of the model (for reports), counting every expert once.
double total_parameters(const ModelSpec& model);

// Throws std::invalid_argument naming the key for impossible
// hyperparameters (non-positive sizes, heads not divisible by kv_heads,
// top_k > experts, ...).
void validate_model(const ModelSpec& model);

}  // namespace nestfast
