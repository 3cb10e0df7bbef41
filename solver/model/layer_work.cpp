#include "solver/model/layer_work.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace nestfast {

LayerKind layer_kind(const ModelSpec& model, int chain_index) {
  if (chain_index == 0) return LayerKind::Embedding;
  if (chain_index == model.num_layers + 1) return LayerKind::Head;
  const int block = chain_index - 1;
  const MoeSpec& moe = model.moe;
  if (moe.enabled() && block >= moe.first_dense_layers &&
      (block - moe.first_dense_layers) % moe.layer_interval == 0)
    return LayerKind::MoeBlock;
  return LayerKind::DenseBlock;
}

namespace {

constexpr double kMaskBytes = 1;  // dropout masks are bytes
constexpr double kFp32Bytes = 4;

// Shorthands for one layer's arithmetic.
struct Dims {
  double h, q, kv, heads, head_dim, f, vocab, s, tokens, tp, replicated, e;
  double mask;  // bytes of a dropout mask per element: kMaskBytes, 0 without dropout
  bool gelu;
  // Multi-head latent attention (model_spec.hpp): latent widths and head
  // widths; q_head is a query/key head (qk_head_dim + qk_rope_head_dim).
  bool mla;
  double q_lora, kv_lora, rope, q_head, v_head;
};

Dims dims_of(const ModelSpec& model, const Sharding& sharding) {
  Dims d{};
  d.h = model.hidden;
  d.head_dim = model.head_dim;
  d.heads = model.heads;
  d.q = static_cast<double>(model.heads) * model.head_dim;
  d.kv = static_cast<double>(model.kv_heads) * model.head_dim;
  d.f = model.ffn_hidden;
  d.vocab = model.vocab;
  d.s = sharding.seq_len;
  d.tokens = static_cast<double>(sharding.micro_batch) * sharding.seq_len / sharding.cp;
  d.tp = sharding.tp;
  d.replicated = sharding.sp ? 1.0 / sharding.tp : 1.0;  // share of a replicated (non-TP) tensor a device keeps
  d.e = model.dtype_bytes;
  d.mask = model.dropout ? kMaskBytes : 0;
  d.gelu = model.mlp == MlpKind::Gelu;
  d.mla = model.attention == AttentionKind::MultiLatent;
  if (d.mla) {
    d.q_lora = model.mla.q_lora_rank;
    d.kv_lora = model.mla.kv_lora_rank;
    d.rope = model.mla.qk_rope_head_dim;
    d.q_head = static_cast<double>(model.mla.qk_head_dim) + model.mla.qk_rope_head_dim;
    d.v_head = model.mla.v_head_dim;
  }
  return d;
}

double mlp_gemm_count(const Dims& d) { return d.gelu ? 2 : 3; }
// Bytes kept per token of an MLP of width `width` (before /tp): GeLU keeps
// its input and output (2 x f), SwiGLU the gate and up outputs and their
// product (3 x f).
double mlp_stash_per_token(const Dims& d, double width) { return (d.gelu ? 2 : 3) * width * d.e; }
double mlp_params(const Dims& d, double width) {
  return mlp_gemm_count(d) * d.h * width + (d.gelu ? width + d.h : 0);  // GPT-style MLPs carry biases
}

// Forward work of a dense MLP of width `width` over `tokens` tokens,
// sharded by tp; GEMM count multiplied by `repeat`.
void add_mlp(LayerWork& work, const Dims& d, double tokens, double width, double repeat) {
  work.kernels += 3;  // two GEMMs (grouped over local experts) and the fused activation
  if (d.gelu) {
    work.gemms.push_back({2 * tokens * d.h * width / d.tp, 2 * repeat});
    work.hbm_bytes += repeat * tokens * 2 * width / d.tp * d.e;  // bias-GeLU reads f, writes f
  } else {
    work.gemms.push_back({2 * tokens * d.h * 2 * width / d.tp, repeat});  // gate and up fused
    work.gemms.push_back({2 * tokens * width * d.h / d.tp, repeat});
    work.hbm_bytes += repeat * tokens * 3 * width / d.tp * d.e;  // SwiGLU reads 2f, writes f
  }
}

// The GEMMs work.gemms[first, end) as a module's forward that runs again.
void recompute_gemms(LayerWork& work, std::size_t first, std::size_t end) {
  for (std::size_t i = first; i < end; ++i) work.selective.gemms.push_back(work.gemms[i]);
}

// The attention core, for standard and latent attention alike. Fused: one
// kernel reads Q, K, V and writes O (qkvo_bytes), and runs core_flops (its
// QK^T and attention x V), less the causal blocks it skips; its backward
// recomputes QK^T before the four gradient GEMMs. Unfused: scale + mask +
// softmax (read, write) and dropout (read, write, mask) over the local score
// matrix.
void add_attention_core(LayerWork& work, const Dims& d, const Sharding& sharding, double core_flops,
                        double qkvo_bytes) {
  if (sharding.flash_attention) {
    work.attention_hbm_bytes += qkvo_bytes;
    const double causal_fraction = sharding.causal ? 0.5 * (1 + kFusedAttentionTile / d.s) : 1.0;
    work.fused_attention_flops = core_flops * (causal_fraction < 1 ? causal_fraction : 1.0);
    work.kernels += 1;
  } else {
    work.kernels += 4;
    const double scores = d.tokens * (d.heads / d.tp) * d.s;
    work.attention_hbm_bytes += scores * (2 * d.e + (d.mask > 0 ? 2 * d.e + d.mask : 0));
  }
}

// Multi-head latent attention as Megatron-Core's MLASelfAttention runs it
// under the TransformerEngine spec (Megatron-LM d98e8a64,
// megatron/core/models/gpt/gpt_layer_specs.py:246-310 and
// megatron/core/transformer/multi_latent_attention.py:221, 527, 557, 604,
// 638-680, 763):
// - the down projections linear_q_down_proj (h -> q_lora) and
//   linear_kv_down_proj (h -> kv_lora + rope) are TELinear 'duplicated':
//   every tp rank holds the whole weight and runs them on its tokens (its
//   sequence share with sp, all tokens without);
// - the up projections linear_q_up_proj (q_lora -> heads x q_head) and
//   linear_kv_up_proj (kv_lora -> heads x (qk_head_dim + v_head)), each with
//   its latent norm fused in (TELayerNormColumnParallelLinear with
//   --qk-layernorm), are column parallel over the heads;
// - linear_proj (heads x v_head -> h) is row parallel;
// - the core attends with query/key heads q_head wide and value heads v_head
//   wide.
// TP traffic: with sp the up projections all-gather the latents and the
// rotary key part is gathered beside them (q_lora + kv_lora + rope per
// token, forward; reduce-scattered gradients backward), linear_proj
// reduce-scatters h; without sp linear_proj all-reduces h forward and the
// up projections all-reduce their input gradients (q_lora + kv_lora)
// backward. The latents' share of that is LayerWork::tp_latent_bytes.
// Returns the FLOPs every tp rank repeats beyond its share (the down
// projections without sp), which are not model FLOPs.
double add_latent_attention(LayerWork& work, const Dims& d, const Sharding& sharding) {
  const double t = d.tokens;
  const double local = t * d.replicated;  // tokens of the duplicated down projections on this device
  const double heads = d.heads / d.tp;
  const double q = d.heads * d.q_head, k = d.heads * d.q_head, v = d.heads * d.v_head;
  const double nope = d.q_head - d.rope;
  work.gemms.push_back({2 * local * d.h * d.q_lora, 1});
  work.gemms.push_back({2 * local * d.h * (d.kv_lora + d.rope), 1});
  const std::size_t up = work.gemms.size();
  work.gemms.push_back({2 * t * d.q_lora * heads * d.q_head, 1});
  work.gemms.push_back({2 * t * d.kv_lora * heads * (nope + d.v_head), 1});
  const std::size_t up_end = work.gemms.size();
  work.gemms.push_back({2 * t * heads * d.v_head * d.h, 1});
  // QK^T at the query/key head width, attention x V at the value width.
  const double scores_qk = 2 * (d.s / sharding.cp) * d.s * d.q_head;
  const double scores_v = 2 * (d.s / sharding.cp) * d.s * d.v_head;
  const double batched = sharding.micro_batch * heads;
  work.attention_gemms.push_back({scores_qk, batched});
  work.attention_gemms.push_back({scores_v, batched});
  // Input norm, the two down projections, two fused norm + up projections
  // (2 kernels each), rotary on the query and key parts, the concatenations
  // of query and key and the contiguous copy of the value, linear_proj, two
  // bias-dropout-adds and the pre-MLP norm.
  work.kernels += 16;
  add_attention_core(work, d, sharding, (scores_qk + scores_v) * batched, t * (q + k + v + v) * d.e / d.tp);
  // As add_attention's norms and residual adds on the hidden state, plus the
  // latent norms (read, write) and the head reshuffles: rotary on the query
  // part (read, write), the query concatenation (read, write q), the key
  // built from its nope part and the shared rotary part (read nope, write
  // q_head per head) and the value made contiguous (read, write).
  work.hbm_bytes += t * d.replicated * d.h * (4 * d.e + 2 * (3 * d.e + d.mask));
  const double latent_norms_hbm = local * (d.q_lora + d.kv_lora) * 2 * d.e;
  const double head_copies_hbm = t * heads * (2 * d.rope + 2 * d.q_head + nope + d.q_head + 2 * d.v_head) * d.e;
  work.hbm_bytes += latent_norms_hbm;
  work.hbm_bytes += head_copies_hbm;
  const bool sp = d.replicated < 1;
  work.tp_collectives_forward = sp ? 1.5 : 2;  // linear_proj's reduce-scatter (all-reduce) and the MLP's unit
  work.tp_collectives_backward = sp ? 1.5 : 1;
  work.tp_bytes = t * d.h * d.e;
  work.tp_latent_collectives_forward = sp ? 0.5 : 0;
  work.tp_latent_collectives_backward = sp ? 0.5 : 1;
  work.tp_latent_bytes = t * (d.q_lora + d.kv_lora + (sp ? d.rope : 0)) * d.e;
  work.cp_kv_bytes = t * (k + v) / d.tp * d.e;
  // mla_up_proj: the latent norms, both up projections (their latent gather
  // under sp with them) and the rotary / concatenation copies run again
  // (multi_latent_attention.py:983-988, the QKV they make discarded at
  // :455-457): two norms, two GEMMs, rotary on two parts, two
  // concatenations and the contiguous value.
  if (has_module(sharding.recompute_modules, RecomputeModule::MlaUpProj)) {
    recompute_gemms(work, up, up_end);
    work.selective.hbm_bytes += latent_norms_hbm + head_copies_hbm;
    work.selective.kernels += 9;
    work.selective.tp_latent_units += work.tp_latent_collectives_forward;
  }
  return 2 * (local - t / d.tp) * d.h * (d.q_lora + d.kv_lora + d.rope);
}

// Returns the FLOPs every tp rank repeats beyond its share (0 but for MLA).
double add_attention(LayerWork& work, const Dims& d, const Sharding& sharding) {
  if (d.mla) return add_latent_attention(work, d, sharding);
  const double t = d.tokens;
  work.gemms.push_back({2 * t * d.h * (d.q + 2 * d.kv) / d.tp, 1});
  work.gemms.push_back({2 * t * d.q * d.h / d.tp, 1});
  // QK^T and attention x V: one GEMM per (sequence, local head) of s/cp
  // queries against s keys.
  const double per_head = 2 * (d.s / sharding.cp) * d.s * d.head_dim;
  const double batched = sharding.micro_batch * d.heads / d.tp;
  work.attention_gemms.push_back({per_head, 2 * batched});
  work.kernels += 6;  // 2 norms, QKV, output projection, 2 bias-dropout-adds
  add_attention_core(work, d, sharding, per_head * 2 * batched, t * (2 * d.q + 2 * d.kv) * d.e / d.tp);
  // Two layer norms (read, write) and two dropout + residual adds (read 2,
  // write 1, mask) on the replicated hidden state.
  work.hbm_bytes += t * d.replicated * d.h * (4 * d.e + 2 * (3 * d.e + d.mask));
  // TP: one collective after attention, one after the MLP; mirrored in bw.
  work.tp_collectives_forward = 2;
  work.tp_collectives_backward = 2;
  work.tp_bytes = t * d.h * d.e;
  work.cp_kv_bytes = t * 2 * d.kv / d.tp * d.e;
  return 0;
}

double attention_params(const Dims& d) {
  if (d.mla) {
    // Down projections and latent norms whole on every tp rank, up and
    // output projections split over the heads (add_latent_attention). MLA's
    // linears carry no bias (multi_latent_attention.py: bias=False).
    const double replicated = d.h * d.q_lora + d.h * (d.kv_lora + d.rope) + (d.gelu ? 2 : 1) * (d.q_lora + d.kv_lora);
    const double sharded = d.q_lora * d.heads * d.q_head + d.kv_lora * d.heads * (d.q_head - d.rope + d.v_head) +
                           d.heads * d.v_head * d.h;
    return replicated + sharded / d.tp;
  }
  double params = (d.h * (d.q + 2 * d.kv) + d.q * d.h) / d.tp;
  if (d.gelu) params += (d.q + 2 * d.kv) / d.tp + d.h;  // biases (the output bias is replicated)
  return params;
}
double norm_params(const Dims& d) { return d.gelu ? 2 * d.h : d.h; }  // one norm: LayerNorm has a bias, RMSNorm not

// Stash of the attention half and the replicated tensors of a block, in
// the pieces selective recompute can drop.
struct BlockStash {
  double replicated = 0;  // 2 norm inputs, QKV input, MLP input and 2 dropout masks: Korthikanti's 10 s b h
  double attention = 0;   // Q, K, V and the output-projection input (MLA: and each latent twice)
  double core = 0;        // the attention core's own: the s^2 scores, or a fused kernel's log-sum-exp
};

BlockStash block_stash_common(LayerWork& work, const Dims& d, const Sharding& sharding) {
  const double t = d.tokens;
  BlockStash stash;
  stash.replicated = t * d.replicated * d.h * (4 * d.e + 2 * d.mask);
  // Q, K, V and the output-projection input: 8 s b h / t for MHA. MLA
  // keeps Q and K q_head and V and O v_head wide per head, and per token
  // each latent twice on the device's sequence share: its norm's input and
  // the normed up-projection input (TE's LayerNormColumnParallelLinear
  // saves both; with sp the local shard, re-gathered for the weight
  // gradient). The key/value up projection's output is freed once K and V
  // are copied out of it.
  stash.attention =
      d.mla ? t * d.heads * (2 * d.q_head + 2 * d.v_head) * d.e / d.tp + t * d.replicated * 2 * (d.q_lora + d.kv_lora) * d.e
            : t * (2 * d.q + 2 * d.kv) * d.e / d.tp;
  // Softmax output, dropout mask and dropout output: Korthikanti's 5 a s^2 b
  // (without dropout the softmax output alone); fused attention keeps only
  // the row statistics (fp32 log-sum-exp).
  stash.core = sharding.flash_attention ? t * (d.heads / d.tp) * kFp32Bytes
                                        : t * (d.heads / d.tp) * d.s * (d.e + (d.mask > 0 ? d.mask + d.e : 0));
  work.stash_bytes[0] += stash.replicated + stash.attention + stash.core;
  work.stash_bytes[2] += t * d.replicated * d.h * d.e;  // full recompute keeps the block input
  return stash;
}

// What selective recompute keeps of the attention half and the replicated
// tensors, under the sharding's modules, and what those modules run again:
// - core_attn checkpoints the core attention whatever its backend
//   (Megatron-LM d98e8a64, megatron/core/transformer/attention.py:392 and
//   :1555; the default, transformer_config.py:1940): the checkpoint keeps
//   its inputs Q, K, V (attention.py:462), the projection keeps the output,
//   and the core's own stash goes; its forward runs again (layer_table);
// - layernorm discards the output of each norm that is a module of its own
//   and runs the norm again (transformer_layer.py:475-530, 683-690, 820-826):
//   MLA's input norm and an MoE block's pre-MLP norm
//   (gpt_layer_specs.py:296, :313); TransformerEngine fuses the others into
//   the next linear, where there is nothing to discard;
// - mla_up_proj discards Q, K and V (the up projections' output) and the
//   normed latents the up projections would keep (multi_latent_attention.py
//   :455-457, :983-988), keeping the latents themselves as the checkpoint's
//   inputs (add_latent_attention prices what runs again);
// - mlp (a dense block's whole MLP, an ordinary checkpoint,
//   transformer_layer.py:537-539, :992-1010) drops the first linear's saved
//   input beside the MLP's own stash (dense_block_work).
double selective_common(LayerWork& work, const Dims& d, const Sharding& sharding, const BlockStash& stash,
                        int separate_norms, bool dense_mlp_recomputed) {
  const RecomputeModules modules = sharding.recompute_modules;
  const double t = d.tokens;
  const double normed = t * d.replicated * d.h * d.e;  // one norm's output on this device
  double replicated = stash.replicated;
  if (has_module(modules, RecomputeModule::Layernorm) && separate_norms > 0) {
    replicated -= separate_norms * normed;
    work.selective.hbm_bytes += separate_norms * 2 * normed;  // read the input, write the output
    work.selective.kernels += separate_norms;
  }
  if (dense_mlp_recomputed) replicated -= normed;
  double attention = stash.attention;
  if (d.mla && has_module(modules, RecomputeModule::MlaUpProj))
    attention -= t * d.heads * (2 * d.q_head + d.v_head) * d.e / d.tp + t * d.replicated * (d.q_lora + d.kv_lora) * d.e;
  double kept = replicated + attention;
  if (has_module(modules, RecomputeModule::CoreAttn))
    work.selective.attention_core = true;
  else
    kept += stash.core;
  return kept;
}

// Model FLOPs (three times the mean forward), what selective recompute runs
// again (the attention core as executed when checkpointed, and the modules'
// GEMMs), and what full recompute does.
void finish_flops(LayerWork& work, double mean_forward_flops, double attention_flops, bool block) {
  work.model_flops = 3 * mean_forward_flops;
  double selective = 0;
  for (const LayerWork::Gemm& gemm : work.selective.gemms) selective += gemm.flops * gemm.count;
  work.selective_recompute_flops = block ? (work.selective.attention_core ? attention_flops : 0) + selective : 0;
  work.full_recompute_flops = block ? mean_forward_flops : 0;
}

double gemm_flops(const std::vector<LayerWork::Gemm>& gemms) {
  double total = 0;
  for (const LayerWork::Gemm& gemm : gemms) total += gemm.flops * gemm.count;
  return total;
}

LayerWork embedding_work(const Dims& d) {
  LayerWork work;
  const double t = d.tokens;
  // Vocab-parallel lookup writes the full hidden state, then dropout.
  work.hbm_bytes = t * d.h * (2 * d.e) + t * d.replicated * d.h * (2 * d.e + d.mask);
  // All-reduce of the partial lookups; with sp a reduce-scatter, whose
  // backward is an all-gather.
  work.tp_collectives_forward = d.replicated < 1 ? 0.5 : 1;
  work.tp_collectives_backward = d.replicated < 1 ? 0.5 : 0;
  work.tp_bytes = t * d.h * d.e;
  work.dense_params = d.vocab * d.h / d.tp;  // learned position embeddings (GPT) are not modelled
  const double stash = t * d.replicated * d.h * d.mask;
  work.stash_bytes = {stash, stash, stash};
  work.output_bytes = t * d.h * d.e / d.tp;
  work.working_bytes = t * d.h * kFp32Bytes;
  work.kernels = 2;  // lookup, dropout
  return work;
}

LayerWork head_work(const Dims& d) {
  LayerWork work;
  const double t = d.tokens;
  const double logits = t * d.vocab / d.tp;
  work.gemms.push_back({2 * t * d.h * d.vocab / d.tp, 1});
  // Final norm; the vocab-parallel cross-entropy reads the logits in fp32
  // about three times (max, sum of exp, loss) and writes their gradient.
  work.hbm_bytes = t * d.replicated * d.h * 2 * d.e + logits * (d.e + 3 * kFp32Bytes);
  // Identity forward and all-reduce of the input gradient; with sp an
  // all-gather forward and a reduce-scatter backward.
  work.tp_collectives_forward = d.replicated < 1 ? 0.5 : 0;
  work.tp_collectives_backward = d.replicated < 1 ? 0.5 : 1;
  work.tp_bytes = t * d.h * d.e;
  work.dense_params = norm_params(d) + d.vocab * d.h / d.tp;
  // Norm input, LM-head input (gathered) and 4 s b v / t for logits + loss.
  const double stash = t * d.replicated * d.h * d.e + t * d.h * d.e + 4 * logits;
  work.stash_bytes = {stash, stash, stash};
  work.working_bytes = 2 * logits * kFp32Bytes;
  work.kernels = 5;  // final norm, logits GEMM, the vocab-parallel cross-entropy's max, sum and loss
  finish_flops(work, gemm_flops(work.gemms), 0, false);
  return work;
}

LayerWork dense_block_work(const Dims& d, const Sharding& sharding) {
  LayerWork work;
  const double repeated = add_attention(work, d, sharding);
  const std::size_t mlp_first = work.gemms.size();
  const double hbm_before_mlp = work.hbm_bytes;
  add_mlp(work, d, d.tokens, d.f, 1);
  work.dense_params = attention_params(d) + mlp_params(d, d.f) / d.tp + 2 * norm_params(d);
  const BlockStash stash = block_stash_common(work, d, sharding);
  const double mlp = d.tokens * mlp_stash_per_token(d, d.f) / d.tp;
  work.stash_bytes[0] += mlp;
  // mlp: the MLP's forward again, its TP unit with it (the all-gather before
  // the first linear and the reduce-scatter after the second under sp).
  const bool mlp_recomputed = has_module(sharding.recompute_modules, RecomputeModule::Mlp);
  if (mlp_recomputed) {
    recompute_gemms(work, mlp_first, work.gemms.size());
    work.selective.hbm_bytes += work.hbm_bytes - hbm_before_mlp;
    work.selective.kernels += 3;
    work.selective.tp_units += 1;
  }
  work.stash_bytes[1] = selective_common(work, d, sharding, stash, d.mla ? 1 : 0, mlp_recomputed);
  work.stash_bytes[1] += mlp_recomputed ? 0 : mlp;
  work.output_bytes = d.tokens * d.h * d.e / d.tp;
  work.working_bytes = work.stash_bytes[0];
  const double attention = gemm_flops(work.attention_gemms);
  finish_flops(work, gemm_flops(work.gemms) + attention - repeated, attention, true);
  work.full_recompute_flops += repeated;
  return work;
}

LayerWork moe_block_work(const ModelSpec& model, const Dims& d, const Sharding& sharding) {
  LayerWork work;
  const MoeSpec& moe = model.moe;
  const double repeated = add_attention(work, d, sharding);
  const double t = d.tokens;
  const double k = moe.top_k;
  const double experts_here = static_cast<double>(moe.num_experts) / sharding.ep;
  const double width = moe.expert_ffn_hidden;
  // The experts split over the expert-tp group (etp = tp, or 1: whole
  // experts). Megatron's all-to-all dispatcher sends each device's own
  // tokens (its sequence share under sp) to the ep group, then all-gathers
  // what arrived over expert-tp and reduce-scatters it after the experts,
  // both only when etp > 1 (megatron/core/transformer/moe/token_dispatcher.py
  // :741-751, :824-832 at d98e8a64; its tp group is expt_tp, :86): a
  // device's experts see k t etp / tp token copies at width / etp, the same
  // FLOPs for any etp.
  Dims expert = d;
  expert.tp = sharding.etp > 0 ? sharding.etp : sharding.tp;
  const double expert_tokens = k * t * expert.tp / d.tp;
  // Router (replicated over tp, on the device's share of tokens with sp).
  const std::size_t mlp_half = work.gemms.size();
  const double hbm_before_mlp_half = work.hbm_bytes;
  const double kernels_before_mlp_half = work.kernels;
  work.gemms.push_back({2 * t * d.replicated * d.h * moe.num_experts, 1});
  work.kernels += 4;  // router GEMM, top-k, permute, un-permute
  // Routed experts: the ep group's token copies spread over its experts; the
  // hottest device gets `imbalance` times the mean.
  const double tokens_per_expert = expert_tokens / experts_here;
  const std::size_t first_expert_gemm = work.gemms.size();
  const double hbm_before_routed = work.hbm_bytes;
  const double kernels_before_routed = work.kernels;
  add_mlp(work, expert, tokens_per_expert, width, experts_here);
  const double mean_expert_flops = [&] {
    double total = 0;
    for (std::size_t i = first_expert_gemm; i < work.gemms.size(); ++i) total += work.gemms[i].flops * work.gemms[i].count;
    return total;
  }();
  for (std::size_t i = first_expert_gemm; i < work.gemms.size(); ++i) work.gemms[i].count *= sharding.expert_imbalance;
  // Permute and un-permute every token copy (read + write each way).
  work.hbm_bytes += sharding.expert_imbalance * expert_tokens * d.h * 4 * d.e;
  work.routed.gemms.assign(work.gemms.begin() + static_cast<std::ptrdiff_t>(first_expert_gemm), work.gemms.end());
  work.routed.hbm_bytes = work.hbm_bytes - hbm_before_routed;
  work.routed.kernels = work.kernels - kernels_before_routed;
  const std::size_t shared_first = work.gemms.size();
  const double hbm_before_shared = work.hbm_bytes;
  if (moe.shared_experts > 0) {
    add_mlp(work, d, t, width * moe.shared_experts, 1);
    // fc2 is the last GEMM add_mlp adds (GeLU's one entry holds both: half of it).
    work.shared_fc1.gemms.assign(work.gemms.begin() + static_cast<std::ptrdiff_t>(shared_first), work.gemms.end());
    LayerWork::Gemm& last = work.shared_fc1.gemms.back();
    const LayerWork::Gemm fc2{last.flops, d.gelu ? last.count / 2 : last.count};
    last.count -= fc2.count;
    if (last.count <= 0) work.shared_fc1.gemms.pop_back();
    work.shared_fc2.gemms.push_back(fc2);
    work.shared_fc1.hbm_bytes = work.hbm_bytes - hbm_before_shared;  // the activation
    work.shared_fc1.kernels = 2;  // fc1 and the activation
    work.shared_fc2.kernels = 1;
  }
  // TP traffic of the MLP half (add_attention counted the dense MLP's one
  // unit of t h). Shared experts keep it: SharedExpertMLP's TE linears
  // all-gather and reduce-scatter t h under sp (shared_experts.py:574-584).
  // The routed experts with etp > 1: over ep > 1 the all-to-all dispatcher
  // (megatron_args) all-gathers the k t / tp copies each expert-tp rank
  // received, k t per device, and reduce-scatters them after the experts
  // (token_dispatcher.py:741-751, :824-832), k times the dense MLP's unit
  // (dropless, as priced: no capacity factor; the gathered routing
  // probabilities, 4 bytes a copy, are left out); at ep = 1 Megatron's
  // default all-gather dispatcher gathers the t tokens themselves over
  // tp x ep before routing (token_dispatcher.py:290-300), one unit. Whole
  // experts (etp = 1) gather nothing. The gathers are plain NCCL calls in
  // the dispatcher, outside TransformerEngine's userbuffer overlap
  // (layer_table).
  if (moe.shared_experts == 0) {
    work.tp_collectives_forward -= 1;
    work.tp_collectives_backward -= 1;
  }
  if (expert.tp > 1) {
    // Over ep > 1 the hottest expert-tp group gathers `imbalance` x the mean
    // copies (what its experts received), as its experts compute them.
    const double routed_tokens = sharding.ep > 1 ? sharding.expert_imbalance * k * t : t;
    work.tp_expert_collectives_forward = 1;
    work.tp_expert_collectives_backward = 1;
    work.tp_expert_bytes = routed_tokens * d.h * d.e;
  }

  work.ep_bytes = k * t * d.h * d.e / d.tp;
  work.ep_all_to_alls_forward = 2;  // dispatch and combine
  work.dense_params = attention_params(d) + 2 * norm_params(d) + d.h * moe.num_experts +
                      (moe.shared_experts > 0 ? mlp_params(d, width * moe.shared_experts) / d.tp : 0);
  work.expert_params = experts_here * mlp_params(d, width) / expert.tp;

  const BlockStash stash = block_stash_common(work, d, sharding);
  const double routed = sharding.expert_imbalance * expert_tokens * (d.h * d.e + mlp_stash_per_token(d, width) / expert.tp);
  const double shared = moe.shared_experts > 0 ? t * mlp_stash_per_token(d, width * moe.shared_experts) / d.tp : 0;
  const double router = t * d.replicated * moe.num_experts * kFp32Bytes;
  work.stash_bytes[0] += routed + shared + router;
  // Selective recompute of the MLP half (moe/moe_layer.py:247-255, :519-530,
  // :701-716; moe/experts.py:268-272, :1019-1029):
  // - moe checkpoints the whole MoE layer: nothing of it is kept but its
  //   input (the pre-MLP norm's output), and the router, the dispatch,
  //   the experts, the combine and the shared experts run again, with
  //   their TP collectives and both all-to-alls;
  // - else moe_act discards the experts' activation output (the second
  //   GEMM's input, one `width` per token copy; SwiGLU keeps its gate and up
  //   outputs to run it again), and shared_experts checkpoints the shared
  //   experts (their stash goes, their forward and TP unit run again).
  const RecomputeModules modules = sharding.recompute_modules;
  double routed_kept = routed, shared_kept = shared, router_kept = router;
  if (has_module(modules, RecomputeModule::Moe)) {
    recompute_gemms(work, mlp_half, work.gemms.size());
    work.selective.hbm_bytes += work.hbm_bytes - hbm_before_mlp_half;
    work.selective.kernels += work.kernels - kernels_before_mlp_half;
    work.selective.tp_units += moe.shared_experts > 0 ? 1 : 0;
    work.selective.tp_shared_units += moe.shared_experts > 0 ? 1 : 0;
    work.selective.tp_expert_units += work.tp_expert_collectives_forward;
    work.selective.ep_all_to_alls += work.ep_all_to_alls_forward;
    routed_kept = shared_kept = router_kept = 0;
  } else {
    if (has_module(modules, RecomputeModule::MoeAct)) {
      const double copies = sharding.expert_imbalance * expert_tokens / expert.tp;
      routed_kept -= copies * width * d.e;
      work.selective.hbm_bytes += copies * (d.gelu ? 2 : 3) * width * d.e;  // the activation: read 1 or 2 f, write f
      work.selective.kernels += 1;
    }
    if (moe.shared_experts > 0 && has_module(modules, RecomputeModule::SharedExperts)) {
      recompute_gemms(work, shared_first, work.gemms.size());
      work.selective.hbm_bytes += work.hbm_bytes - hbm_before_shared;
      work.selective.kernels += 3;
      work.selective.tp_units += 1;
      work.selective.tp_shared_units += 1;
      shared_kept = 0;
    }
  }
  work.stash_bytes[1] = selective_common(work, d, sharding, stash, d.mla ? 2 : 1, false);
  work.stash_bytes[1] += routed_kept + shared_kept + router_kept;
  work.output_bytes = t * d.h * d.e / d.tp;
  work.working_bytes = work.stash_bytes[0];

  const double attention = gemm_flops(work.attention_gemms);
  const double mean_forward =
      gemm_flops(work.gemms) - (sharding.expert_imbalance - 1) * mean_expert_flops + attention - repeated;
  finish_flops(work, mean_forward, attention, true);
  work.full_recompute_flops = gemm_flops(work.gemms) + attention;  // what the hottest device recomputes
  return work;
}

// `add` run `times` over in the same row as `into` (the head's row holding
// the MTP layers): work, traffic, parameters, stash and FLOPs add up; the
// collectives' per-unit bytes are the same t h or come from the one that has
// them.
void accumulate(LayerWork& into, const LayerWork& add, int times) {
  for (const LayerWork::Gemm& gemm : add.gemms) into.gemms.push_back({gemm.flops, gemm.count * times});
  for (const LayerWork::Gemm& gemm : add.attention_gemms) into.attention_gemms.push_back({gemm.flops, gemm.count * times});
  into.hbm_bytes += times * add.hbm_bytes;
  into.attention_hbm_bytes += times * add.attention_hbm_bytes;
  into.fused_attention_flops += times * add.fused_attention_flops;
  into.kernels += times * add.kernels;
  into.tp_collectives_forward += times * add.tp_collectives_forward;
  into.tp_collectives_backward += times * add.tp_collectives_backward;
  into.tp_latent_collectives_forward += times * add.tp_latent_collectives_forward;
  into.tp_latent_collectives_backward += times * add.tp_latent_collectives_backward;
  into.tp_latent_bytes = std::max(into.tp_latent_bytes, add.tp_latent_bytes);
  into.tp_expert_collectives_forward += times * add.tp_expert_collectives_forward;
  into.tp_expert_collectives_backward += times * add.tp_expert_collectives_backward;
  into.tp_expert_bytes = std::max(into.tp_expert_bytes, add.tp_expert_bytes);
  into.cp_kv_bytes += times * add.cp_kv_bytes;
  into.ep_bytes = std::max(into.ep_bytes, add.ep_bytes);
  into.ep_all_to_alls_forward += times * add.ep_all_to_alls_forward;
  for (auto part : {&LayerWork::shared_fc1, &LayerWork::shared_fc2, &LayerWork::routed}) {
    for (const LayerWork::Gemm& gemm : (add.*part).gemms) (into.*part).gemms.push_back({gemm.flops, gemm.count * times});
    (into.*part).hbm_bytes += times * (add.*part).hbm_bytes;
    (into.*part).kernels += times * (add.*part).kernels;
  }
  into.dense_params += times * add.dense_params;
  into.expert_params += times * add.expert_params;
  for (std::size_t mode = 0; mode < into.stash_bytes.size(); ++mode) into.stash_bytes[mode] += times * add.stash_bytes[mode];
  into.working_bytes = std::max(into.working_bytes, add.working_bytes);
  into.model_flops += times * add.model_flops;
  into.selective_recompute_flops += times * add.selective_recompute_flops;
  into.full_recompute_flops += times * add.full_recompute_flops;
  for (const LayerWork::Gemm& gemm : add.selective.gemms) into.selective.gemms.push_back({gemm.flops, gemm.count * times});
  into.selective.hbm_bytes += times * add.selective.hbm_bytes;
  into.selective.kernels += times * add.selective.kernels;
  into.selective.attention_core = into.selective.attention_core || add.selective.attention_core;
  into.selective.tp_units += times * add.selective.tp_units;
  into.selective.tp_shared_units += times * add.selective.tp_shared_units;
  into.selective.tp_latent_units += times * add.selective.tp_latent_units;
  into.selective.tp_expert_units += times * add.selective.tp_expert_units;
  into.selective.ep_all_to_alls += times * add.selective.ep_all_to_alls;
}

// One multi-token-prediction layer (Megatron-Core's MultiTokenPredictionLayer,
// multi_token_prediction.py:1071-1250 at d98e8a64): the next token's
// embedding looked up again, the hidden state and the embedding each normed
// (hnorm, enorm) and concatenated, eh_proj (a column-parallel linear, 2h to
// h), a transformer block of the last block's kind, and its own final norm
// through the shared output layer to its loss (the head's work). The output
// weights are the main head's; the embedding the lookup needs is a copy on
// this stage of the first stage's (tie_word_embeddings_state_dict, :143-170),
// counted once for all MTP layers in mtp_work.
LayerWork mtp_layer_work(const ModelSpec& model, const Dims& d, const Sharding& sharding) {
  LayerWork work = layer_kind(model, model.num_layers) == LayerKind::MoeBlock ? moe_block_work(model, d, sharding)
                                                                             : dense_block_work(d, sharding);
  const double t = d.tokens;
  const double local = t * d.replicated * d.h * d.e;  // one h-wide tensor on this device
  // The lookup (as the embedding's: the full hidden state written, its TP
  // reduce), the two norms (read, write), the concatenation (read 2h, write
  // 2h) and eh_proj, whose 2h input is gathered over tp and whose h output
  // is reduced back (one TP unit each way).
  work.hbm_bytes += t * d.h * 2 * d.e + 2 * 2 * local + 4 * local;
  const double eh = 2 * t * 2 * d.h * d.h / d.tp;
  work.gemms.push_back({eh, 1});
  work.kernels += 5;
  work.tp_collectives_forward += (d.replicated < 1 ? 0.5 : 1) + 1;
  work.tp_collectives_backward += (d.replicated < 1 ? 0.5 : 0) + 1;
  work.dense_params += 2 * d.h * d.h / d.tp + 2 * norm_params(d);
  // The norms' inputs and eh_proj's (2h) are kept; full recompute keeps the
  // layer's two inputs.
  for (int mode = 0; mode < 2; ++mode) work.stash_bytes[static_cast<std::size_t>(mode)] += 4 * local;
  work.stash_bytes[2] += 2 * local;
  work.model_flops += 3 * eh;
  work.full_recompute_flops += eh;
  // Its loss: final norm, the shared output layer, cross-entropy.
  LayerWork head = head_work(d);
  head.dense_params = norm_params(d);  // the output weights are the main head's
  accumulate(work, head, 1);
  return work;
}

}  // namespace

LayerWork mtp_work(const ModelSpec& model, const Sharding& sharding) {
  LayerWork work;
  if (model.mtp_layers <= 0) return work;
  const Dims d = dims_of(model, sharding);
  accumulate(work, mtp_layer_work(model, d, sharding), model.mtp_layers);
  work.dense_params += d.vocab * d.h / d.tp;  // the embedding copy the lookups read
  return work;
}

LayerWork layer_work(const ModelSpec& model, int chain_index, const Sharding& sharding) {
  const Dims d = dims_of(model, sharding);
  switch (layer_kind(model, chain_index)) {
    case LayerKind::Embedding: return embedding_work(d);
    case LayerKind::Head: {
      // The MTP layers run in the head's row: Megatron builds them on the
      // last pipeline stage, before the loss (multi_token_prediction.py
      // :247-253; its layout's "mL").
      LayerWork work = head_work(d);
      if (model.mtp_layers > 0) accumulate(work, mtp_work(model, sharding), 1);
      return work;
    }
    case LayerKind::DenseBlock: return dense_block_work(d, sharding);
    case LayerKind::MoeBlock: return moe_block_work(model, d, sharding);
  }
  return {};
}

double total_parameters(const ModelSpec& model) {
  Sharding whole;
  whole.seq_len = model.seq_len;
  whole.ep = 1;
  double total = 0;
  for (int i = 0; i <= model.num_layers + 1; ++i) {
    const LayerWork work = layer_work(model, i, whole);
    total += work.dense_params + work.expert_params;
  }
  if (model.tied_embeddings) total -= static_cast<double>(model.vocab) * model.hidden;
  if (model.mtp_layers > 0) total -= static_cast<double>(model.vocab) * model.hidden;  // MTP's embedding copy
  return total;
}

namespace {

void require_positive(int value, const ModelSpec& model, const char* key) {
  if (value <= 0)
    throw std::invalid_argument("model '" + model.name + "': " + key + " = " + std::to_string(value) +
                                " (must be > 0)");
}

}  // namespace

void validate_model(const ModelSpec& model) {
  require_positive(model.num_layers, model, "num_layers");
  require_positive(model.hidden, model, "hidden");
  require_positive(model.heads, model, "heads");
  require_positive(model.kv_heads, model, "kv_heads");
  require_positive(model.head_dim, model, "head_dim");
  require_positive(model.vocab, model, "vocab");
  require_positive(model.seq_len, model, "seq_len");
  require_positive(model.dtype_bytes, model, "dtype_bytes");
  if (model.mtp_layers < 0)
    throw std::invalid_argument("model '" + model.name + "': mtp_layers = " + std::to_string(model.mtp_layers) +
                                " (must be >= 0)");
  if (model.heads % model.kv_heads != 0)
    throw std::invalid_argument("model '" + model.name + "': heads = " + std::to_string(model.heads) +
                                " is not a multiple of kv_heads = " + std::to_string(model.kv_heads));
  if (model.attention == AttentionKind::MultiLatent) {
    require_positive(model.mla.q_lora_rank, model, "mla.q_lora_rank");
    require_positive(model.mla.kv_lora_rank, model, "mla.kv_lora_rank");
    require_positive(model.mla.qk_head_dim, model, "mla.qk_head_dim");
    require_positive(model.mla.qk_rope_head_dim, model, "mla.qk_rope_head_dim");
    require_positive(model.mla.v_head_dim, model, "mla.v_head_dim");
    if (model.kv_heads != model.heads)
      throw std::invalid_argument("model '" + model.name + "': multi-head latent attention has no query groups (kv_heads = " +
                                  std::to_string(model.kv_heads) + ", heads = " + std::to_string(model.heads) + ")");
  }
  const MoeSpec& moe = model.moe;
  const bool all_moe = moe.enabled() && moe.first_dense_layers == 0 && moe.layer_interval == 1;
  if (!all_moe) require_positive(model.ffn_hidden, model, "ffn_hidden");
  if (moe.num_experts < 0)
    throw std::invalid_argument("model '" + model.name + "': moe.num_experts must be >= 0");
  if (moe.enabled()) {
    require_positive(moe.expert_ffn_hidden, model, "moe.expert_ffn_hidden");
    require_positive(moe.layer_interval, model, "moe.layer_interval");
    if (moe.top_k < 1 || moe.top_k > moe.num_experts)
      throw std::invalid_argument("model '" + model.name + "': moe.top_k = " + std::to_string(moe.top_k) +
                                  " (must be in 1.." + std::to_string(moe.num_experts) + ")");
    if (moe.first_dense_layers < 0 || moe.shared_experts < 0)
      throw std::invalid_argument("model '" + model.name +
                                  "': moe.first_dense_layers and moe.shared_experts must be >= 0");
  }
}

}  // namespace nestfast
