#include "solver/search/megatron_args.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <system_error>

#include "solver/model/layer_work.hpp"
#include "solver/search/megatron_rules.hpp"

namespace nestfast::search {
namespace {

// Appends flags, each checked against the upstream flag table.
class Line {
 public:
  void add(std::string_view name) { append(name, FlagKind::Switch, ""); }
  void add(std::string_view name, int value) { append(name, FlagKind::Int, std::to_string(value)); }
  // The shortest decimal that reads back as `value` ("2.5", "0.0001").
  void add(std::string_view name, double value) {
    char text[400];  // a fixed-point double has at most ~330 digits
    const auto [end, error] = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed);
    if (error != std::errc()) throw std::logic_error(std::string("megatron_arguments: no decimal for ").append(name));
    append(name, FlagKind::Real, std::string(text, end));
  }
  void add(std::string_view name, std::string_view value) {
    const MegatronFlag* flag = known(name);
    if (flag->kind == FlagKind::Choice) {
      if (!is_choice(*flag, value))
        throw std::logic_error(std::string("megatron_arguments: a value is not a choice of ").append(name));
    } else if (flag->kind != FlagKind::Text) {
      throw std::logic_error(std::string("megatron_arguments: no text value for ").append(name));
    }
    // Values with shell metacharacters (layouts, MoE patterns) are quoted.
    const bool quote = value.find_first_of("|*()[]+, ") != std::string_view::npos;
    text_.append(" ").append(name).append(" ");
    if (quote) text_.append("\"").append(value).append("\"");
    else text_.append(value);
  }
  // A List flag: one or more of its choices, space-separated (nargs '+').
  void add_list(std::string_view name, const std::vector<std::string>& values) {
    const MegatronFlag* flag = known(name);
    if (flag->kind != FlagKind::List || values.empty())
      throw std::logic_error(std::string("megatron_arguments: not a list flag ").append(name));
    text_.append(" ").append(name);
    for (const std::string& value : values) {
      if (!is_choice(*flag, value))
        throw std::logic_error(std::string("megatron_arguments: a value is not a choice of ").append(name));
      text_.append(" ").append(value);
    }
  }
  std::string take() { return text_.empty() ? text_ : text_.substr(1); }

 private:
  static const MegatronFlag* known(std::string_view name) {
    const MegatronFlag* flag = megatron_flag(name);
    if (flag == nullptr) throw std::logic_error(std::string("megatron_arguments: no such Megatron-LM flag ").append(name));
    return flag;
  }
  void append(std::string_view name, FlagKind kind, const std::string& value) {
    if (known(name)->kind != kind)
      throw std::logic_error(std::string("megatron_arguments: the wrong kind of value for ").append(name));
    text_.append(" ").append(name);
    if (!value.empty()) text_.append(" ").append(value);
  }
  std::string text_;
};

int stage_blocks(const ModelSpec& model, const StagePlan& stage) {
  return std::max(0, std::min(stage.last_layer, model.num_layers) - std::max(stage.first_layer, 1) + 1);
}

// Megatron's split without a layout flag: every chunk num_layers/(pp*vpp)
// blocks, the embedding on the first, the head on the last.
bool default_split(const ModelSpec& model, const Execution& plan) {
  const int chunks = static_cast<int>(plan.stages.size());
  if (chunks == 0 || model.num_layers % chunks != 0) return false;
  for (const StagePlan& stage : plan.stages)
    if (stage_blocks(model, stage) != model.num_layers / chunks) return false;
  return true;
}

// "([0]*3+[1]*58)": dense (0) and MoE (1) blocks in order, run-length encoded.
std::string moe_layer_pattern(const ModelSpec& model) {
  std::string pattern;
  int value = -1, run = 0;
  auto flush = [&] {
    if (run == 0) return;
    pattern += std::string(pattern.empty() ? "" : "+") + "[" + std::to_string(value) + "]*" + std::to_string(run);
  };
  for (int block = 1; block <= model.num_layers; ++block) {
    const int moe = layer_kind(model, block) == LayerKind::MoeBlock ? 1 : 0;
    if (moe != value) {
      flush();
      value = moe;
      run = 0;
    }
    ++run;
  }
  flush();
  return "(" + pattern + ")";
}

// The dense dims larger than 1 in placement order (Megatron's dense grid has no ep factor).
bool uses_tp_pp_dp_mapping(const Execution& plan) {
  if (plan.pp == 1 || plan.dp == 1) return false;
  const auto pp = std::find(plan.placement.begin(), plan.placement.end(), ParallelDim::Pp);
  const auto dp = std::find(plan.placement.begin(), plan.placement.end(), ParallelDim::Dp);
  return pp < dp;
}

}  // namespace

std::string pipeline_layout(const ModelSpec& model, const Execution& plan) {
  std::vector<std::string> chunks;
  for (const StagePlan& stage : plan.stages) {
    std::string chunk;
    if (stage.first_layer == 0) chunk += 'E';
    const int blocks = stage_blocks(model, stage);
    if (blocks == 1) chunk += 't';
    if (blocks > 1) chunk += "t*" + std::to_string(blocks);
    // The MTP layers sit before the loss in the last chunk (the last virtual
    // stage of its rank, pipeline_parallel_layer_layout.py:111-131).
    if (stage.last_layer == model.num_layers + 1) chunk += std::string(static_cast<std::size_t>(model.mtp_layers), 'm') + 'L';
    chunks.push_back(chunk);
  }
  // Runs of equal chunks in Megatron's repetition syntax "(t*2|)*29"
  // (pipeline_parallel_layer_layout.py:295 unrolls it), so long layouts stay short.
  std::string layout;
  for (std::size_t i = 0; i + 1 < chunks.size();) {
    std::size_t run = 1;
    while (i + run + 1 < chunks.size() && chunks[i + run] == chunks[i]) ++run;
    layout += run > 1 ? "(" + chunks[i] + "|)*" + std::to_string(run) : chunks[i] + "|";
    i += run;
  }
  if (!chunks.empty()) layout += chunks.back();
  return layout;
}

std::string environment_line(const std::vector<EnvironmentSetting>& environment) {
  std::string line;
  for (const EnvironmentSetting& setting : environment) {
    if (!line.empty()) line += ' ';
    line += setting.value.empty() ? "unset " + setting.name + ";" : setting.name + "=" + setting.value;
  }
  return line;
}

MegatronArguments megatron_arguments(const ModelSpec& model, const Execution& plan) {
  MegatronArguments out;
  Line a;
  const bool moe = model.moe.enabled();
  const bool fsdp = megatron_fsdp(plan);
  const int seq = plan.seq_len > 0 ? plan.seq_len : model.seq_len;
  const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const bool mla = model.attention == AttentionKind::MultiLatent;

  a.add("--tensor-model-parallel-size", plan.tp);
  a.add("--pipeline-model-parallel-size", plan.pp);
  a.add("--context-parallel-size", plan.cp);
  if (moe) {
    a.add("--expert-model-parallel-size", plan.ep);
    a.add("--expert-tensor-parallel-size", plan.etp());
  }
  if (plan.sp && plan.tp > 1) a.add("--sequence-parallel");
  if (uses_tp_pp_dp_mapping(plan)) a.add("--use-tp-pp-dp-mapping");
  a.add("--micro-batch-size", plan.micro_batch);
  a.add("--global-batch-size", plan.global_batch);
  a.add("--seq-length", seq);
  a.add("--max-position-embeddings", seq);

  a.add("--num-layers", model.num_layers);
  a.add("--hidden-size", model.hidden);
  a.add("--ffn-hidden-size", model.ffn_hidden);
  a.add("--num-attention-heads", model.heads);
  a.add("--kv-channels", model.head_dim > 0 ? model.head_dim : model.hidden / model.heads);
  if (kv_heads != model.heads) {
    a.add("--group-query-attention");
    a.add("--num-query-groups", kv_heads);
  }
  if (mla) {
    // MLATransformerConfig's fields (transformer_config.py:3278); the latent
    // norms are the model's (q_a_layernorm, kv_a_layernorm in DeepSeek's
    // checkpoints). Positions are plain RoPE as in pre-training (the config's
    // default is yarn, transformer_config.py:3306), which Megatron fuses only
    // for yarn (transformer_config.py:3345).
    a.add("--multi-latent-attention");
    a.add("--q-lora-rank", model.mla.q_lora_rank);
    a.add("--kv-lora-rank", model.mla.kv_lora_rank);
    a.add("--qk-head-dim", model.mla.qk_head_dim);
    a.add("--qk-pos-emb-head-dim", model.mla.qk_rope_head_dim);
    a.add("--v-head-dim", model.mla.v_head_dim);
    a.add("--qk-layernorm");
    a.add("--rope-type", "rope");
    a.add("--no-rope-fusion");
  }
  a.add("--normalization", model.normalization == Normalization::RmsNorm ? "RMSNorm" : "LayerNorm");
  if (model.mlp == MlpKind::Swiglu) a.add("--swiglu");
  a.add("--position-embedding-type", model.position_embedding == PositionEmbedding::Rope ? "rope" : "learned_absolute");
  if (!model.tied_embeddings) a.add("--untie-embeddings-and-output-weights");
  if (!model.linear_bias) a.add("--disable-bias-linear");
  // The priced vocabulary is the preset's; Megatron pads it to a multiple of this times tp.
  a.add("--make-vocab-size-divisible-by", 1);
  // The priced fused attention: TransformerEngine's flash backend for
  // standard heads; MLA's unequal head widths run only in its fused (cuDNN)
  // backend (MegatronRule::MlaAttentionBackend).
  a.add("--attention-backend", plan.attention == Attention::Unfused ? "unfused" : mla ? "fused" : "flash");
  if (model.dtype_bytes == 2) a.add("--bf16");
  // Priced with bf16 gradients (memory_model.hpp): Megatron keeps fp32 ones
  // under --bf16 unless told (arguments.py:1213).
  if (model.dtype_bytes == 2 && plan.grad_reduce == GradReduce::Bf16) a.add("--grad-reduce-in-bf16");

  // Multi-token prediction, built on the last pipeline stage before the loss.
  if (model.mtp_layers > 0) a.add("--mtp-num-layers", model.mtp_layers);

  if (moe) {
    a.add("--num-experts", model.moe.num_experts);
    a.add("--moe-ffn-hidden-size", model.moe.expert_ffn_hidden);
    a.add("--moe-router-topk", model.moe.top_k);
    if (model.moe.shared_experts > 0)
      a.add("--moe-shared-expert-intermediate-size", model.moe.shared_experts * model.moe.expert_ffn_hidden);
    a.add("--moe-layer-freq", moe_layer_pattern(model));
    a.add("--moe-grouped-gemm");
    // The model's router (not priced: model_spec.hpp RouterSpec).
    const RouterSpec& router = model.moe.router;
    if (router.score == RouterScore::Sigmoid) a.add("--moe-router-score-function", "sigmoid");
    if (router.expert_bias) a.add("--moe-router-enable-expert-bias");
    if (router.topk_scaling > 0) a.add("--moe-router-topk-scaling-factor", router.topk_scaling);
    if (router.groups > 0) {
      a.add("--moe-router-num-groups", router.groups);
      a.add("--moe-router-group-topk", router.group_topk);
    }
    if (router.balance == RouterBalance::SeqAuxLoss) a.add("--moe-router-load-balancing-type", "seq_aux_loss");
    if (router.balance_coeff > 0) a.add("--moe-aux-loss-coeff", router.balance_coeff);
    // The priced all-to-all among the ep ranks (Megatron's default
    // dispatcher is an all-gather, transformer_config.py:891): the alltoall
    // dispatcher (NCCL's all-to-all), or the flex dispatcher with DeepEP,
    // which takes fp32 routing probabilities (token_dispatcher.py:1312-1318).
    if (plan.ep > 1 && plan.a2a == AllToAllAlgorithm::DeepEp) {
      a.add("--moe-token-dispatcher-type", "flex");
      a.add("--moe-flex-dispatcher-backend", "deepep");
      a.add("--moe-router-dtype", "fp32");
    } else if (plan.ep > 1) {
      a.add("--moe-token-dispatcher-type", "alltoall");
    }
  }

  if (plan.pp > 1 && !plan.stages.empty() && !default_split(model, plan)) {
    a.add("--pipeline-model-parallel-layout", pipeline_layout(model, plan));
  } else if (plan.vpp > 1) {
    a.add("--num-layers-per-virtual-pipeline-stage", model.num_layers / (plan.pp * plan.vpp));
  }

  const StagePlan first = plan.stages.empty() ? StagePlan{} : plan.stages.front();
  if (first.recompute == Recompute::Selective) {
    a.add("--recompute-granularity", "selective");
    // The checkpointed modules when they are not Megatron's default
    // (core_attn alone, transformer_config.py:1940).
    if (plan.recompute_modules != kDefaultRecomputeModules)
      a.add_list("--recompute-modules", module_names(plan.recompute_modules));
  }
  if (first.recompute == Recompute::Full) {
    a.add("--recompute-granularity", "full");
    a.add("--recompute-method", first.recompute_layers > 0 ? "block" : "uniform");
    a.add("--recompute-num-layers", first.recompute_layers > 0 ? first.recompute_layers : 1);
  }

  if (plan.optimizer == Optimizer::Sgd) a.add("--optimizer", "sgd");
  if (plan.zero_stage == 1 && plan.dp * plan.cp > 1) a.add("--use-distributed-optimizer");
  if (fsdp) {
    a.add("--use-megatron-fsdp");
    a.add("--data-parallel-sharding-strategy", plan.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    a.add("--ckpt-format", "fsdp_dtensor");
  }
  // Exactly the overlaps the price assumes (effective_overlap: the ones
  // Megatron-LM runs for this plan). p2p overlap is Megatron's default when
  // interleaved (arguments.py:3118).
  const Overlap overlap = effective_overlap(plan, model);
  if (overlap.grad_reduce) a.add("--overlap-grad-reduce");
  if (overlap.param_gather) a.add("--overlap-param-gather");
  if (overlap.tp_comm) a.add("--tp-comm-overlap");
  if (plan.vpp > 1 && !overlap.p2p) a.add("--no-overlap-p2p-communication");
  // transformer_config.py:3021 refuses it with full recompute; a fully
  // recomputed stage is priced with the all-to-alls serial (stage_cost_kernel.hpp).
  // With it, --delay-wgrad-compute: the pair schedule the price assumes
  // (combined_layer_pair_exposed; transformer_config.py:3074-3077 allows it
  // only beside the overlap).
  const bool a2a_overlap = overlap.moe_a2a && first.recompute != Recompute::Full;
  if (a2a_overlap) {
    a.add("--overlap-moe-expert-parallel-comm");
    a.add("--delay-wgrad-compute");
  }
  if (overlap.moe_shared) a.add("--moe-shared-expert-overlap");
  // Exclusive with the A2A overlap and so with --delay-wgrad-compute
  // (transformer_config.py:3084-3095): effective_overlap keeps it off
  // wherever moe_a2a is on, so a line never carries both.
  if (overlap.moe_dispatch_wgrad) a.add("--overlap-dispatch-backward-with-experts-wgrad");
  out.arguments = a.take();

  // One hardware queue or more (one_hardware_queue); where tp or cp > 1
  // needs more (the 1F1B A2A overlap), 32, what the MoE Model Zoo runs it
  // with (sbatch_benchmarking.sh, A2A_OVERLAP=1). Unset is the driver's 8.
  if (fsdp) out.environment.push_back({"CUDA_DEVICE_MAX_CONNECTIONS", ""});
  else if (plan.tp > 1 || plan.cp > 1)
    out.environment.push_back({"CUDA_DEVICE_MAX_CONNECTIONS", one_hardware_queue(plan, a2a_overlap) ? "1" : "32"});

  if (plan.framework == Framework::Nest) {
    out.notes.push_back("framework nest: Megatron-LM cannot run this plan as priced (search with --framework "
                        "megatron-core for plans it runs as emitted)");
    for (MegatronRule rule : megatron_violations(model, plan)) out.notes.push_back(describe(rule));
    if (plan.cp > 1 && plan.ep > 1)
      out.notes.push_back("its expert groups are carved out of dp, Megatron's expert grid spans cp and dp "
                          "(megatron/core/parallel_state.py:887)");
  }
  return out;
}

}  // namespace nestfast::search
