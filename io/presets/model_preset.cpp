// jobs/presets/models/*.toml -> ModelSpec. Hyperparameters are counts, so
// nothing needs a unit conversion; the checks keep the model buildable
// (heads split evenly, GQA groups whole, MoE routing possible).
#include <fmt/format.h>

#include "io/presets/preset_readers.hpp"

namespace nestfast::io {

namespace {

MlpKind read_mlp(const TomlTableReader& table) {
  const std::string mlp = table.string("mlp");
  if (mlp == "gelu") return MlpKind::Gelu;
  if (mlp == "swiglu") return MlpKind::Swiglu;
  table.fail("mlp", fmt::format("must be \"gelu\" or \"swiglu\", got \"{}\"", mlp));
}

// The router keys of [model.moe], checked as Megatron-Core checks them
// (megatron/core/transformer/transformer_config.py:2617, 2671-2688 at d98e8a64).
void read_router(const TomlTableReader& table, MoeSpec& moe) {
  RouterSpec& router = moe.router;
  const std::string score = table.optional_string("router_score").value_or("softmax");
  if (score == "sigmoid") router.score = RouterScore::Sigmoid;
  else if (score != "softmax") table.fail("router_score", fmt::format("must be \"softmax\" or \"sigmoid\", got \"{}\"", score));
  router.expert_bias = table.optional_boolean("router_expert_bias").value_or(false);
  if (router.expert_bias && router.score != RouterScore::Sigmoid)
    table.fail("router_expert_bias", "needs router_score = \"sigmoid\" (Megatron-Core's aux-loss-free bias)");
  router.topk_scaling = table.optional_number("router_topk_scaling", Bound::Positive).value_or(0.0);
  router.groups = table.optional_integer("router_groups", Bound::AtLeastOne).value_or(0);
  router.group_topk = table.optional_integer("router_group_topk", Bound::AtLeastOne).value_or(0);
  if ((router.groups > 0) != (router.group_topk > 0))
    table.fail(router.groups > 0 ? "router_group_topk" : "router_groups", "router_groups and router_group_topk go together");
  if (router.groups > 0 && moe.num_experts % router.groups != 0)
    table.fail("router_groups", fmt::format("{} does not divide the {} experts", router.groups, moe.num_experts));
  if (router.group_topk > router.groups)
    table.fail("router_group_topk", fmt::format("{} is more than the {} groups", router.group_topk, router.groups));
  const std::string balance = table.optional_string("router_balance").value_or("aux_loss");
  if (balance == "seq_aux_loss") router.balance = RouterBalance::SeqAuxLoss;
  else if (balance != "aux_loss") table.fail("router_balance", fmt::format("must be \"aux_loss\" or \"seq_aux_loss\", got \"{}\"", balance));
  router.balance_coeff = table.optional_number("router_balance_coeff", Bound::NonNegative).value_or(0.0);
}

MoeSpec read_moe(const TomlTableReader& table, int num_layers) {
  MoeSpec moe;
  moe.num_experts = table.integer("experts", Bound::AtLeastOne);
  moe.top_k = table.integer("top_k", Bound::AtLeastOne);
  if (moe.top_k > moe.num_experts) {
    table.fail("top_k", fmt::format("{} is more than the {} experts", moe.top_k, moe.num_experts));
  }
  moe.expert_ffn_hidden = table.integer("expert_ffn_hidden", Bound::AtLeastOne);
  moe.shared_experts = table.optional_integer("shared_experts", Bound::NonNegative).value_or(0);
  moe.first_dense_layers = table.optional_integer("first_dense_layers", Bound::NonNegative).value_or(0);
  if (moe.first_dense_layers >= num_layers) {
    table.fail("first_dense_layers",
               fmt::format("{} leaves no MoE block among the {} layers", moe.first_dense_layers, num_layers));
  }
  moe.layer_interval = table.optional_integer("layer_interval", Bound::AtLeastOne).value_or(1);
  read_router(table, moe);
  return moe;
}

// [model.mla], named as in DeepSeek's config.json.
MlaSpec read_mla(const TomlTableReader& table) {
  MlaSpec mla;
  mla.q_lora_rank = table.integer("q_lora_rank", Bound::AtLeastOne);
  mla.kv_lora_rank = table.integer("kv_lora_rank", Bound::AtLeastOne);
  mla.qk_head_dim = table.integer("qk_nope_head_dim", Bound::AtLeastOne);
  mla.qk_rope_head_dim = table.integer("qk_rope_head_dim", Bound::AtLeastOne);
  mla.v_head_dim = table.integer("v_head_dim", Bound::AtLeastOne);
  return mla;
}

}  // namespace

ModelSpec read_model_preset(const PresetFile& file) {
  const toml::table document = parse_toml_file(file.path);
  const TomlTableReader root(document, file.path, "", {"model"});
  const toml::table& raw = root.table("model");
  const TomlTableReader table(raw, file.path, "model",
                              {"name", "source", "layers", "hidden", "ffn_hidden", "heads", "kv_heads",
                               "head_dim", "vocab", "seq_len", "mlp", "tied_embeddings", "dtype_bytes", "moe",
                               "normalization", "position_embedding", "linear_bias", "causal", "dropout", "mla",
                               "mtp_layers"});
  ModelSpec model;
  auto header = read_preset_header(table, file);
  model.name = std::move(header.name);
  model.source = std::move(header.source);
  model.num_layers = table.integer("layers", Bound::AtLeastOne);
  model.hidden = table.integer("hidden", Bound::AtLeastOne);
  model.ffn_hidden = table.integer("ffn_hidden", Bound::AtLeastOne);
  model.heads = table.integer("heads", Bound::AtLeastOne);
  model.kv_heads = table.integer("kv_heads", Bound::AtLeastOne);
  if (model.heads % model.kv_heads != 0) {
    table.fail("kv_heads",
               fmt::format("{} does not divide the {} heads into whole groups", model.kv_heads, model.heads));
  }
  if (const auto* mla = table.optional_table("mla")) {
    const TomlTableReader mla_table(*mla, file.path, "model.mla",
                                    {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    model.attention = AttentionKind::MultiLatent;
    model.mla = read_mla(mla_table);
    // Megatron-LM refuses query groups with MLA (arguments.py:1974).
    if (model.kv_heads != model.heads) {
      table.fail("kv_heads", fmt::format("{} differs from the {} heads; multi-head latent attention has no query groups",
                                         model.kv_heads, model.heads));
    }
  }
  if (const auto head_dim = table.optional_integer("head_dim", Bound::AtLeastOne)) {
    model.head_dim = *head_dim;
  } else if (model.attention == AttentionKind::MultiLatent) {
    model.head_dim = model.mla.v_head_dim;  // the value head: what Megatron's --kv-channels means under MLA
  } else if (model.hidden % model.heads != 0) {
    table.fail("head_dim", fmt::format("missing, and hidden {} is not a multiple of heads {}; give head_dim",
                                       model.hidden, model.heads));
  } else {
    model.head_dim = model.hidden / model.heads;
  }
  model.vocab = table.integer("vocab", Bound::AtLeastOne);
  model.seq_len = table.integer("seq_len", Bound::AtLeastOne);
  model.mlp = read_mlp(table);
  model.tied_embeddings = table.boolean("tied_embeddings");
  // Optional; the defaults follow the MLP (SwiGLU models are Llama-style:
  // RMSNorm, rotary positions, no biases; GELU models GPT-style).
  const bool llama_style = model.mlp == MlpKind::Swiglu;
  const std::string norm = raw.contains("normalization") ? table.string("normalization") : (llama_style ? "rmsnorm" : "layernorm");
  if (norm == "rmsnorm") model.normalization = Normalization::RmsNorm;
  else if (norm == "layernorm") model.normalization = Normalization::LayerNorm;
  else table.fail("normalization", fmt::format("must be \"layernorm\" or \"rmsnorm\", got \"{}\"", norm));
  const std::string position = raw.contains("position_embedding") ? table.string("position_embedding") : (llama_style ? "rope" : "learned");
  if (position == "rope") model.position_embedding = PositionEmbedding::Rope;
  else if (position == "learned") model.position_embedding = PositionEmbedding::LearnedAbsolute;
  else table.fail("position_embedding", fmt::format("must be \"rope\" or \"learned\", got \"{}\"", position));
  model.linear_bias = raw.contains("linear_bias") ? table.boolean("linear_bias") : !llama_style;
  model.causal = table.optional_boolean("causal").value_or(true);  // decoder LMs; encoders say false
  model.dropout = table.optional_boolean("dropout").value_or(true);  // GPT's 0.1; Llama-style models say false
  model.dtype_bytes = table.integer("dtype_bytes", Bound::AtLeastOne);
  model.mtp_layers = raw.contains("mtp_layers") ? table.integer("mtp_layers", Bound::NonNegative) : 0;
  if (model.dtype_bytes != 1 && model.dtype_bytes != 2 && model.dtype_bytes != 4) {
    table.fail("dtype_bytes", fmt::format("must be 1, 2 or 4, got {}", model.dtype_bytes));
  }
  if (const auto* moe = table.optional_table("moe")) {
    const TomlTableReader moe_table(*moe, file.path, "model.moe",
                                    {"experts", "top_k", "expert_ffn_hidden", "shared_experts",
                                     "first_dense_layers", "layer_interval", "router_score", "router_expert_bias",
                                     "router_topk_scaling", "router_groups", "router_group_topk", "router_balance",
                                     "router_balance_coeff"});
    model.moe = read_moe(moe_table, model.num_layers);
  }
  return model;
}

}  // namespace nestfast::io
