#pragma once
// The application: a transformer's hyperparameters (Calculon's "application" input).
// Plain data, no behaviour; presets fill it from jobs/presets/models/*.toml.
#include <cstdint>
#include <string>

namespace nestfast {

enum class MlpKind { Gelu, Swiglu };
// Architecture details the cost model does not price (norms and position
// embeddings are a rounding error of the time) but a launch must get right.
enum class Normalization { LayerNorm, RmsNorm };
enum class PositionEmbedding { LearnedAbsolute, Rope };

// How a block's attention forms its queries, keys and values.
//   Standard: one QKV projection (MHA, or GQA with kv_heads < heads).
//   MultiLatent: DeepSeek-V2/V3's multi-head latent attention (MLA): the
//   hidden state is projected down to a query latent and a key/value latent
//   (plus one rotary key part shared by all heads), each latent normed and
//   projected up to the heads; a query/key head is qk_head_dim (no position)
//   + qk_rope_head_dim (rotary) wide, a value head v_head_dim.
enum class AttentionKind { Standard, MultiLatent };

struct MlaSpec {
  int q_lora_rank = 0;       // query latent width (DeepSeek-V3: 1536)
  int kv_lora_rank = 0;      // key/value latent width (512)
  int qk_head_dim = 0;       // per-head query/key part without positions (qk_nope_head_dim, 128)
  int qk_rope_head_dim = 0;  // per-head rotary part; on the key side one part shared by all heads (64)
  int v_head_dim = 0;        // per-head value width (128)
};

// The router's arithmetic: what a token's expert choice and weights are.
// Its compute is not priced (the router is one GEMM to num_experts either
// way; the expert load is the search's expert_imbalance), but a launch must
// run the model's router, and group-limited routing bounds the nodes a
// token reaches under DeepEP (solver/model/expert_routing.hpp).
enum class RouterScore { Softmax, Sigmoid };
enum class RouterBalance { AuxLoss, SeqAuxLoss };  // the load-balancing loss on the router

struct RouterSpec {
  RouterScore score = RouterScore::Softmax;
  bool expert_bias = false;        // auxiliary-loss-free balancing: a learned per-expert bias on the choice
  double topk_scaling = 0;         // routed weights scaled by this (0 = not scaled)
  int groups = 0;                  // group-limited routing: experts in this many equal groups (0 = off)
  int group_topk = 0;              // a token picks its experts from this many groups
  RouterBalance balance = RouterBalance::AuxLoss;
  double balance_coeff = 0;        // the balancing loss's weight (0 = none)
};

struct MoeSpec {
  int num_experts = 0;        // 0 = dense model
  int top_k = 0;
  int expert_ffn_hidden = 0;  // per-expert FFN width
  int shared_experts = 0;     // always-on experts (DeepSeek style)
  int first_dense_layers = 0; // leading blocks that stay dense
  int layer_interval = 1;     // every k-th block (after the dense ones) is MoE
  RouterSpec router;

  bool enabled() const { return num_experts > 0; }
};

struct ModelSpec {
  std::string name;
  std::string source;  // citation of the published hyperparameters
  int num_layers = 0;  // transformer blocks
  int hidden = 0;
  int ffn_hidden = 0;  // dense FFN width
  int heads = 0;
  int kv_heads = 0;    // == heads without GQA
  int head_dim = 0;    // usually hidden / heads; with MLA the value head width (Megatron's --kv-channels)
  int vocab = 0;
  int seq_len = 0;     // default sequence length
  MlpKind mlp = MlpKind::Gelu;
  bool tied_embeddings = false;
  Normalization normalization = Normalization::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::LearnedAbsolute;
  bool linear_bias = true;  // biases in the linear layers (GPT-3 style); Llama-style models have none
  bool causal = true;   // a decoder's causal mask (false: a bidirectional encoder such as BERT)
  bool dropout = true;  // hidden and attention dropout (GPT, BERT); Llama-style models train without
  int dtype_bytes = 2;  // activations and weights (bf16/fp16)
  AttentionKind attention = AttentionKind::Standard;
  MlaSpec mla;          // AttentionKind::MultiLatent only
  MoeSpec moe;
  // Multi-token prediction layers (DeepSeek-V3's num_nextn_predict_layers;
  // Megatron's --mtp-num-layers): each predicts one more token ahead from the
  // last block's output and the next token's embedding, through a block of
  // the last block's kind and the shared output layer, on the last pipeline
  // stage (layer_work.cpp's mtp_layer_work).
  int mtp_layers = 0;
};

}  // namespace nestfast
