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

struct MoeSpec {
  int num_experts = 0;        // 0 = dense model
  int top_k = 0;
  int expert_ffn_hidden = 0;  // per-expert FFN width
  int shared_experts = 0;     // always-on experts (DeepSeek style)
  int first_dense_layers = 0; // leading blocks that stay dense
  int layer_interval = 1;     // every k-th block (after the dense ones) is MoE

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
  int head_dim = 0;    // usually hidden / heads
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
  MoeSpec moe;
};

}  // namespace nestfast
