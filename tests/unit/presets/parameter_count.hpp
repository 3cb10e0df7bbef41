#pragma once
// Weight count of a transformer from its hyperparameters (matmul weights and
// embeddings; norms, biases and position tables are < 0.1% and left out).
// A test-side yardstick for the presets' published sizes, independent of the
// solver's cost model.
#include "solver/model/model_spec.hpp"

namespace nestfast::test {

struct ParameterCount {
  double total = 0;
  double active = 0;  // per token: routed experts counted top_k times
};

inline double mlp_weights(const ModelSpec& model, double ffn) {
  return (model.mlp == MlpKind::Swiglu ? 3.0 : 2.0) * model.hidden * ffn;
}

// Multi-head latent attention (DeepSeek-V2 paper, section 2.1): W^DQ, W^UQ
// (a query head is nope + rope wide), W^DKV with the shared rotary key
// W^KR, W^UK and W^UV, and W^O.
inline double latent_attention_weights(const ModelSpec& model) {
  const MlaSpec& m = model.mla;
  const double hidden = model.hidden, heads = model.heads;
  return hidden * m.q_lora_rank + m.q_lora_rank * heads * (m.qk_head_dim + m.qk_rope_head_dim) +
         hidden * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * heads * (m.qk_head_dim + m.v_head_dim) +
         heads * m.v_head_dim * hidden;
}

inline ParameterCount count_parameters(const ModelSpec& model) {
  const double hidden = model.hidden;
  const double attention = model.attention == AttentionKind::MultiLatent
                               ? latent_attention_weights(model)
                               : hidden * model.heads * model.head_dim * 2.0  // q and o
                                     + hidden * model.kv_heads * model.head_dim * 2.0;  // k and v
  const double embeddings = static_cast<double>(model.vocab) * hidden * (model.tied_embeddings ? 1.0 : 2.0);
  ParameterCount count{embeddings, embeddings};
  const auto& moe = model.moe;
  for (int layer = 0; layer < model.num_layers; ++layer) {
    count.total += attention;
    count.active += attention;
    const bool moe_block = moe.enabled() && layer >= moe.first_dense_layers &&
                           (layer - moe.first_dense_layers) % moe.layer_interval == 0;
    if (!moe_block) {
      count.total += mlp_weights(model, model.ffn_hidden);
      count.active += mlp_weights(model, model.ffn_hidden);
      continue;
    }
    const double expert = mlp_weights(model, moe.expert_ffn_hidden);
    const double router = hidden * moe.num_experts;
    count.total += (moe.num_experts + moe.shared_experts) * expert + router;
    count.active += (moe.top_k + moe.shared_experts) * expert + router;
  }
  return count;
}

}  // namespace nestfast::test
