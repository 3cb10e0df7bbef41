#include "tests/unit/megatron/megatron_line.hpp"

#include <algorithm>
#include <numeric>
#include <regex>
#include <set>
#include <stdexcept>

#include "solver/search/execution_layout.hpp"
#include "solver/search/megatron_rules.hpp"

namespace nestfast::megatron_test {
namespace {

using search::FlagKind;
using search::is_choice;
using search::MegatronRule;

std::string rule(MegatronRule id) { return search::describe(id); }

// Shell words, double quotes grouping (the line quotes layouts and patterns).
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(word);
      word.clear();
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) out.push_back(word);
  return out;
}

bool is_int(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What Python's float() accepts of the emitter's numbers: a whole decimal or scientific literal.
bool is_real(const std::string& text) {
  return std::regex_match(text, std::regex(R"([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)"));
}

// The layout string unrolled as pipeline_parallel_layer_layout.py:284 does,
// split into stages.
std::vector<std::string> layout_stages(std::string layout) {
  layout.erase(std::remove(layout.begin(), layout.end(), ','), layout.end());
  for (const char* pattern : {R"(\(([^)]+)\)\*(\d+))", R"((.)\*(\d+))"}) {
    const std::regex expression(pattern);
    std::string out;
    auto begin = std::sregex_iterator(layout.begin(), layout.end(), expression);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += layout.substr(last, static_cast<std::size_t>(it->position()) - last);
      for (int k = 0; k < std::stoi((*it)[2]); ++k) out += (*it)[1];
      last = static_cast<std::size_t>(it->position() + it->length());
    }
    layout = out + layout.substr(last);
  }
  std::vector<std::string> stages(1);
  for (char c : layout) {
    if (c == '|') stages.emplace_back();
    else stages.back() += c;
  }
  return stages;
}

}  // namespace

int ParsedLine::integer(const std::string& flag, int fallback) const {
  const auto it = values.find(flag);
  return it == values.end() || !is_int(it->second) ? fallback : std::stoi(it->second);
}

std::string ParsedLine::text(const std::string& flag, const std::string& fallback) const {
  const auto it = values.find(flag);
  return it == values.end() ? fallback : it->second;
}

ParsedLine parse_line(const std::string& line) {
  ParsedLine parsed;
  const std::vector<std::string> tokens = words(line);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& name = tokens[i];
    const search::MegatronFlag* flag = search::megatron_flag(name);
    if (flag == nullptr) {
      parsed.problems.push_back("'" + name + "' is not a flag of Megatron-LM's pretrain_gpt.py");
      continue;
    }
    if (parsed.has(name)) parsed.problems.push_back(name + " is given twice");
    if (flag->kind == FlagKind::Switch) {
      parsed.values[name] = "";
      continue;
    }
    if (i + 1 >= tokens.size() || tokens[i + 1].rfind("--", 0) == 0) {
      parsed.problems.push_back(name + " needs a value");
      continue;
    }
    if (flag->kind == FlagKind::List) {
      // nargs '+': the values up to the next flag, each one of the choices; kept space-separated.
      std::string list;
      while (i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0) {
        const std::string& value = tokens[++i];
        if (!is_choice(*flag, value))
          parsed.problems.push_back(name + " " + value + " is not one of " + std::string(flag->choices));
        list += (list.empty() ? "" : " ") + value;
      }
      parsed.values[name] = list;
      continue;
    }
    const std::string value = tokens[++i];
    if (flag->kind == FlagKind::Int && !is_int(value)) parsed.problems.push_back(name + " " + value + " is not an integer");
    if (flag->kind == FlagKind::Real && !is_real(value)) parsed.problems.push_back(name + " " + value + " is not a number");
    if (flag->kind == FlagKind::Choice && !is_choice(*flag, value))
      parsed.problems.push_back(name + " " + value + " is not one of " + std::string(flag->choices));
    parsed.values[name] = value;
  }
  return parsed;
}

RankGroups masked_groups(const std::vector<int>& sizes, const std::vector<bool>& mask) {
  std::vector<int> stride(sizes.size(), 1);
  for (std::size_t i = 1; i < sizes.size(); ++i) stride[i] = stride[i - 1] * sizes[i - 1];
  std::vector<std::size_t> inside, outside;
  for (std::size_t i = 0; i < sizes.size(); ++i) (mask[i] ? inside : outside).push_back(i);
  auto count = [&](const std::vector<std::size_t>& dims) {
    int n = 1;
    for (std::size_t d : dims) n *= sizes[d];
    return n;
  };
  // The rank of coordinates `index` (mixed radix over `dims`, first fastest).
  auto offset = [&](const std::vector<std::size_t>& dims, int index) {
    int rank = 0;
    for (std::size_t d : dims) {
      rank += (index % sizes[d]) * stride[d];
      index /= sizes[d];
    }
    return rank;
  };
  RankGroups groups;
  for (int g = 0; g < count(outside); ++g) {
    std::vector<int> group;
    for (int m = 0; m < count(inside); ++m) group.push_back(offset(outside, g) + offset(inside, m));
    groups.push_back(group);
  }
  return groups;
}

std::vector<std::string> validate_line(const ModelSpec& model, int world, const search::MegatronArguments& emitted,
                                       MegatronGroups* groups) {
  const ParsedLine line = parse_line(emitted.arguments);
  std::vector<std::string> problems = line.problems;
  auto check = [&problems](bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  };
  const int tp = line.integer("--tensor-model-parallel-size", 1);
  const int pp = line.integer("--pipeline-model-parallel-size", 1);
  const int cp = line.integer("--context-parallel-size", 1);
  const int ep = line.integer("--expert-model-parallel-size", 1);
  const int etp = line.integer("--expert-tensor-parallel-size", tp);
  const int mbs = line.integer("--micro-batch-size", 0);
  const int gbs = line.integer("--global-batch-size", 0);
  const int seq = line.integer("--seq-length", 0);
  const int layers = line.integer("--num-layers", 0);
  const int experts = line.integer("--num-experts", 0);
  const bool sp = line.has("--sequence-parallel");
  const bool fsdp = line.has("--use-megatron-fsdp");
  const bool pp_dp_order = line.has("--use-tp-pp-dp-mapping");

  // The architecture is the model's.
  check(layers == model.num_layers, "--num-layers differs from the model's");
  check(line.integer("--hidden-size", 0) == model.hidden, "--hidden-size differs from the model's");
  check(line.integer("--num-attention-heads", 0) == model.heads, "--num-attention-heads differs from the model's");
  check(line.integer("--max-position-embeddings", 0) >= seq, rule(MegatronRule::MaxPositions));
  check(model.moe.enabled() == (experts > 0), "--num-experts does not match the model");
  const bool mla = line.has("--multi-latent-attention");
  check(mla == (model.attention == AttentionKind::MultiLatent), "--multi-latent-attention does not match the model");
  if (mla && model.attention == AttentionKind::MultiLatent) {
    // MLATransformerConfig's defaults (transformer_config.py:3288-3300) are not DeepSeek-V3's: each must be given.
    check(line.integer("--q-lora-rank", 0) == model.mla.q_lora_rank, "--q-lora-rank differs from the model's");
    check(line.integer("--kv-lora-rank", 0) == model.mla.kv_lora_rank, "--kv-lora-rank differs from the model's");
    check(line.integer("--qk-head-dim", 0) == model.mla.qk_head_dim, "--qk-head-dim differs from the model's");
    check(line.integer("--qk-pos-emb-head-dim", 0) == model.mla.qk_rope_head_dim,
          "--qk-pos-emb-head-dim differs from the model's");
    check(line.integer("--v-head-dim", 0) == model.mla.v_head_dim, "--v-head-dim differs from the model's");
    check(line.has("--qk-layernorm"), "the model's latent norms need --qk-layernorm (gpt_layer_specs.py:246)");
  }
  if (mla) {
    check(!line.has("--group-query-attention"), rule(MegatronRule::MlaWithoutQueryGroups));
    check(line.text("--rope-type", "yarn") == "yarn" || line.has("--no-rope-fusion"), rule(MegatronRule::MlaRopeFusion));
    check(line.text("--attention-backend", "auto") != "flash", rule(MegatronRule::MlaAttentionBackend));
    check(line.integer("--context-parallel-size", 1) == 1, rule(MegatronRule::MlaContextParallel));
  }
  // The router: Megatron's checks, then the model's own settings.
  const std::string score = line.text("--moe-router-score-function", "softmax");
  check(!line.has("--moe-router-enable-expert-bias") || score == "sigmoid" || score == "sqrtsoftplus",
        rule(MegatronRule::RouterExpertBias));
  if (line.has("--moe-router-group-topk")) {
    const int router_groups = line.integer("--moe-router-num-groups", 0);
    check(router_groups > 0 && experts % router_groups == 0 &&
              line.integer("--moe-router-group-topk", 0) <= router_groups,
          rule(MegatronRule::RouterGroups));
  }
  if (model.moe.enabled()) {
    const RouterSpec& router = model.moe.router;
    auto real = [&line](const std::string& flag) { return line.has(flag) ? std::stod(line.text(flag)) : 0.0; };
    check((score == "sigmoid") == (router.score == RouterScore::Sigmoid), "--moe-router-score-function differs from the model's");
    check(line.has("--moe-router-enable-expert-bias") == router.expert_bias, "the expert bias differs from the model's");
    check(real("--moe-router-topk-scaling-factor") == router.topk_scaling, "the top-k scaling differs from the model's");
    check(line.integer("--moe-router-num-groups", 0) == router.groups &&
              line.integer("--moe-router-group-topk", 0) == router.group_topk,
          "group-limited routing differs from the model's");
    check((line.text("--moe-router-load-balancing-type", "aux_loss") == "seq_aux_loss") ==
                  (router.balance == RouterBalance::SeqAuxLoss) &&
              real("--moe-aux-loss-coeff") == router.balance_coeff,
          "the router's balancing loss differs from the model's");
  }

  check(line.integer("--mtp-num-layers", 0) == model.mtp_layers, "the multi-token-prediction layers differ from the model's");
  check(tp >= 1 && pp >= 1 && cp >= 1 && world % (tp * pp * cp) == 0, rule(MegatronRule::ModelSizeDividesWorld));
  if (world % (tp * pp * cp) != 0 || tp * pp * cp == 0) return problems;
  const int dp = world / (tp * pp * cp);
  check(world % (etp * ep * pp) == 0, rule(MegatronRule::ExpertGridDividesWorld));
  check(ep == 1 || experts > 0, rule(MegatronRule::EpNeedsExperts));
  check(experts == 0 || experts % ep == 0, rule(MegatronRule::ExpertsDivisibleByEp));
  const int kv = line.has("--group-query-attention") ? line.integer("--num-query-groups", 1) : model.heads;
  check(model.heads % tp == 0 && kv % tp == 0, rule(MegatronRule::HeadsDivisibleByTp));
  check(line.integer("--ffn-hidden-size", 0) % tp == 0 &&
            (experts == 0 || line.integer("--moe-ffn-hidden-size", 0) % etp == 0),
        rule(MegatronRule::FfnDivisibleByTp));
  check(!sp || tp > 1, rule(MegatronRule::SequenceParallelNeedsTp));
  check(experts == 0 || tp == 1 || sp, rule(MegatronRule::MoeTpNeedsSequenceParallel));
  check(cp == 1 || seq % (2 * cp) == 0, rule(MegatronRule::CpSeqMultiple));
  const std::string backend = line.text("--attention-backend", "auto");
  check(cp == 1 || backend == "flash" || backend == "fused" || backend == "auto", rule(MegatronRule::CpNeedsFusedAttention));
  check(mbs > 0 && gbs % (mbs * dp) == 0, rule(MegatronRule::GlobalBatchDivisible));
  const int m = mbs > 0 ? gbs / (mbs * dp) : 0;

  // Schedule and layer split.
  int chunks = pp;
  if (line.has("--pipeline-model-parallel-layout")) {
    check(!line.has("--num-layers-per-virtual-pipeline-stage"), "layout and --num-layers-per-virtual-pipeline-stage together");
    const std::vector<std::string> stages = layout_stages(line.text("--pipeline-model-parallel-layout"));
    chunks = static_cast<int>(stages.size());
    check(chunks % pp == 0, rule(MegatronRule::LayoutStagesMultipleOfPp));
    std::string flat;
    for (const std::string& stage : stages) flat += stage;
    // MTP layers: --mtp-num-layers m's, after every t, together in one chunk
    // that is the last of its rank (pipeline_parallel_layer_layout.py:111-131).
    const int mtp = line.integer("--mtp-num-layers", 0);
    bool mtp_placed = std::count(flat.begin(), flat.end(), 'm') == mtp &&
                      (mtp == 0 || flat.find('t', flat.find('m')) == std::string::npos);
    for (std::size_t c = 0; c < stages.size() && mtp > 0; ++c) {
      const auto here = std::count(stages[c].begin(), stages[c].end(), 'm');
      if (here > 0) mtp_placed = mtp_placed && here == mtp && c + static_cast<std::size_t>(pp) >= stages.size();
    }
    check(!flat.empty() && flat.front() == 'E' && flat.back() == 'L' && std::count(flat.begin(), flat.end(), 'E') == 1 &&
              std::count(flat.begin(), flat.end(), 'L') == 1 && std::count(flat.begin(), flat.end(), 't') == layers &&
              flat.find_first_not_of("EtmL") == std::string::npos && mtp_placed,
          rule(MegatronRule::LayoutChain));
  } else {
    check(layers % pp == 0, rule(MegatronRule::LayersDivisibleByPp));
    if (line.has("--num-layers-per-virtual-pipeline-stage")) {
      const int per = line.integer("--num-layers-per-virtual-pipeline-stage", 1);
      check(per > 0 && (layers / pp) % per == 0, rule(MegatronRule::LayersDivisibleByPp));
      chunks = per > 0 ? layers / per : pp;
    }
  }
  if (chunks > pp) {
    check(pp > (line.has("--no-overlap-p2p-communication") ? 2 : 1), rule(MegatronRule::InterleavedNeedsPp));
    check(pp <= m && m % pp == 0, rule(MegatronRule::InterleavedMicroBatches));
  }

  // Recompute (one setting; the line cannot say anything else).
  const std::string granularity = line.text("--recompute-granularity");
  if (granularity == "full")
    check(line.has("--recompute-method") && line.integer("--recompute-num-layers", 0) >= 1,
          rule(MegatronRule::FullRecomputeNeedsMethod));
  if (granularity == "selective" || granularity.empty())
    check(!line.has("--recompute-method") && !line.has("--recompute-num-layers"), rule(MegatronRule::FullRecomputeNeedsMethod));
  // transformer_config.py:1964-1973: moe_act runs in grouped-GEMM experts, mla_up_proj in MLA.
  const std::string modules = line.text("--recompute-modules", "core_attn");
  auto listed = [&modules](const std::string& name) { return (" " + modules + " ").find(" " + name + " ") != std::string::npos; };
  if (granularity == "selective")
    check((!listed("moe_act") || line.has("--moe-grouped-gemm")) &&
              (!listed("mla_up_proj") || line.has("--multi-latent-attention")),
          rule(MegatronRule::RecomputeModulesApply));

  // The dispatcher: the priced all-to-all is alltoall's (NCCL) or flex's
  // with DeepEP, whose group is expert-tp x ep ranks of its configured sizes.
  const std::string dispatcher = line.text("--moe-token-dispatcher-type", "allgather");
  check(ep == 1 || dispatcher == "alltoall" || dispatcher == "flex", rule(MegatronRule::MoeDispatcher));
  if (dispatcher == "flex") {
    check(line.text("--moe-flex-dispatcher-backend", "deepep") == "deepep", "a flex backend nestfast does not price");
    check(std::find(std::begin(search::kDeepEpGroupSizes), std::end(search::kDeepEpGroupSizes), etp * ep) !=
              std::end(search::kDeepEpGroupSizes),
          rule(MegatronRule::DeepEpGroupSize));
  }

  // Overlaps.
  if (line.has("--overlap-param-gather"))
    check((line.has("--use-distributed-optimizer") || fsdp) && line.has("--overlap-grad-reduce"),
          rule(MegatronRule::ParamGatherOverlap));
  if (line.has("--tp-comm-overlap")) check(sp, rule(MegatronRule::TpCommOverlap));
  if (line.has("--overlap-moe-expert-parallel-comm")) {
    check(ep > 1 && (pp == 1 || chunks > pp) && (dispatcher == "alltoall" || dispatcher == "flex") &&
              granularity != "full" && !line.has("--recompute-method") && !line.has("--recompute-num-layers") &&
              !listed("moe") && line.has("--bf16"),
          rule(MegatronRule::MoeA2aOverlap));
  }
  if (line.has("--delay-wgrad-compute"))
    check(line.has("--overlap-moe-expert-parallel-comm"), rule(MegatronRule::DelayWgradCompute));
  if (line.has("--overlap-dispatch-backward-with-experts-wgrad"))
    check(!line.has("--overlap-moe-expert-parallel-comm") && !line.has("--delay-wgrad-compute"),
          rule(MegatronRule::DispatchWgradOverlap));
  if (line.has("--moe-shared-expert-overlap")) {
    check((dispatcher == "alltoall" || dispatcher == "flex") && !line.has("--overlap-moe-expert-parallel-comm") &&
              !listed("shared_experts"),
          rule(MegatronRule::MoeSharedExpertOverlap));
  }

  // Sharding and environment.
  std::string connections = "<unset>";
  for (const search::EnvironmentSetting& setting : emitted.environment)
    if (setting.name == "CUDA_DEVICE_MAX_CONNECTIONS") connections = setting.value.empty() ? "<unset>" : setting.value;
  if (fsdp) {
    check(line.text("--ckpt-format") == "fsdp_dtensor", rule(MegatronRule::FsdpCheckpointFormat));
    check(line.text("--optimizer", "adam") == "adam" || line.text("--optimizer") == "sgd", rule(MegatronRule::FsdpOptimizer));
    check(connections != "1", rule(MegatronRule::FsdpConnections));
    check(pp == 1, rule(MegatronRule::FsdpWithoutPipeline));
  } else if (line.has("--overlap-moe-expert-parallel-comm")) {
    check(connections != "1", rule(MegatronRule::MoeA2aConnections));
  } else if (tp > 1 || cp > 1) {
    check(connections == "1", rule(MegatronRule::TpCpConnections));
  }
  check(!(fsdp && line.has("--use-distributed-optimizer")), "Megatron-FSDP v1 sets the distributed optimizer itself");

  // Rank groups (parallel_state.py:857-906).
  const int edp = world % (etp * ep * pp) == 0 ? world / (etp * ep * pp) : 0;
  if (edp == 0) return problems;
  // Orders innermost first: tp-cp-ep-dp-pp or tp-cp-ep-pp-dp (cp = 1 on the expert grid, ep = 1 on the dense one).
  const std::vector<int> dense = pp_dp_order ? std::vector<int>{tp, cp, pp, dp} : std::vector<int>{tp, cp, dp, pp};
  const std::vector<int> expert = pp_dp_order ? std::vector<int>{etp, ep, pp, edp} : std::vector<int>{etp, ep, edp, pp};
  const int pp_index = pp_dp_order ? 2 : 3;
  const int dp_index = pp_dp_order ? 3 : 2;
  MegatronGroups built;
  built.tp = masked_groups(dense, {true, false, false, false});
  built.cp = masked_groups(dense, {false, true, false, false});
  std::vector<bool> dp_cp = {false, true, false, false};
  dp_cp[static_cast<std::size_t>(dp_index)] = true;
  built.dp_cp = masked_groups(dense, dp_cp);
  std::vector<bool> pp_mask(4, false);
  pp_mask[static_cast<std::size_t>(pp_index)] = true;
  built.pp = masked_groups(dense, pp_mask);
  built.ep = masked_groups(expert, {false, true, false, false});
  std::vector<bool> edp_mask(4, false);
  edp_mask[static_cast<std::size_t>(dp_index)] = true;
  built.expert_dp = masked_groups(expert, edp_mask);
  built.expert_pp = masked_groups(expert, pp_mask);
  check(pp_dp_order == false || pp == 1 || edp == dp, rule(MegatronRule::TpPpDpMappingGroups));
  check(built.pp == built.expert_pp, rule(MegatronRule::TpPpDpMappingGroups));
  if (groups != nullptr) *groups = built;
  return problems;
}

Execution plan_of_line(const ModelSpec& model, int world, const ParsedLine& line) {
  Execution plan;
  plan.framework = Framework::MegatronCore;
  plan.tp = line.integer("--tensor-model-parallel-size", 1);
  plan.pp = line.integer("--pipeline-model-parallel-size", 1);
  plan.cp = line.integer("--context-parallel-size", 1);
  plan.ep = line.integer("--expert-model-parallel-size", 1);
  const int etp = line.integer("--expert-tensor-parallel-size", plan.tp);
  plan.expert_tp = etp == plan.tp ? 0 : etp;
  plan.dp = world / (plan.tp * plan.pp * plan.cp);
  plan.sp = line.has("--sequence-parallel");
  plan.micro_batch = line.integer("--micro-batch-size", 1);
  plan.global_batch = line.integer("--global-batch-size", 1);
  plan.seq_len = line.integer("--seq-length", 0);
  plan.attention = line.text("--attention-backend", "auto") == "unfused" ? Attention::Unfused : Attention::Flash;
  // The overlaps the line runs (p2p overlap is Megatron's default when interleaved).
  plan.overlap = Overlap::none();
  plan.overlap.grad_reduce = line.has("--overlap-grad-reduce");
  plan.overlap.param_gather = line.has("--overlap-param-gather");
  plan.overlap.tp_comm = line.has("--tp-comm-overlap");
  plan.overlap.p2p = !line.has("--no-overlap-p2p-communication");
  plan.overlap.moe_a2a = line.has("--overlap-moe-expert-parallel-comm");
  plan.overlap.moe_shared = line.has("--moe-shared-expert-overlap");
  plan.overlap.moe_dispatch_wgrad = line.has("--overlap-dispatch-backward-with-experts-wgrad");
  plan.a2a = line.text("--moe-token-dispatcher-type", "allgather") == "flex" ? AllToAllAlgorithm::DeepEp
                                                                              : AllToAllAlgorithm::Fanout;
  plan.optimizer = line.text("--optimizer", "adam") == "sgd" ? Optimizer::Sgd : Optimizer::Adam;
  plan.grad_reduce = line.has("--grad-reduce-in-bf16") ? GradReduce::Bf16 : GradReduce::Fp32;
  const bool sharded = plan.dp * plan.cp > 1;
  plan.zero_stage = !sharded ? 0
                    : line.has("--use-megatron-fsdp")
                        ? (line.text("--data-parallel-sharding-strategy", "optim_grads_params") == "optim_grads" ? 2 : 3)
                        : line.has("--use-distributed-optimizer") ? 1 : 0;
  plan.placement = line.has("--use-tp-pp-dp-mapping")
                       ? std::vector<ParallelDim>{ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp}
                       : std::vector<ParallelDim>{ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp, ParallelDim::Pp};

  // Stages: the layout's chunks, or Megatron's even split.
  std::vector<int> blocks_per_chunk;
  if (line.has("--pipeline-model-parallel-layout")) {
    for (const std::string& stage : layout_stages(line.text("--pipeline-model-parallel-layout")))
      blocks_per_chunk.push_back(static_cast<int>(std::count(stage.begin(), stage.end(), 't')));
  } else {
    const int per = line.integer("--num-layers-per-virtual-pipeline-stage", model.num_layers / plan.pp);
    blocks_per_chunk.assign(static_cast<std::size_t>(model.num_layers / per), per);
  }
  plan.vpp = static_cast<int>(blocks_per_chunk.size()) / plan.pp;
  const std::string granularity = line.text("--recompute-granularity");
  const Recompute mode = granularity == "full" ? Recompute::Full : granularity == "selective" ? Recompute::Selective
                                                                                             : Recompute::None;
  plan.recompute_modules = parse_recompute_modules(line.text("--recompute-modules", "core_attn"), "--recompute-modules");
  const int recompute_layers =
      mode == Recompute::Full && line.text("--recompute-method") == "block" ? line.integer("--recompute-num-layers", 0) : 0;
  int next = 1;
  for (std::size_t i = 0; i < blocks_per_chunk.size(); ++i) {
    StagePlan stage;
    stage.first_layer = i == 0 ? 0 : next;
    next += blocks_per_chunk[i];
    stage.last_layer = i + 1 == blocks_per_chunk.size() ? model.num_layers + 1 : next - 1;
    stage.recompute = mode;
    stage.recompute_layers = recompute_layers;
    plan.stages.push_back(stage);
  }
  return plan;
}

GroupShape shape_of(const ClusterSpec& cluster, const RankGroups& groups) {
  const std::vector<std::int64_t> spans = level_spans(cluster);
  const std::size_t levels = spans.size();
  std::vector<int> worst(levels, 1);
  for (const std::vector<int>& group : groups) {
    std::vector<int> touched(levels, 1);
    for (std::size_t l = 0; l < levels; ++l) {
      std::set<std::int64_t> blocks;
      for (int rank : group) blocks.insert(rank / spans[l]);
      touched[l] = static_cast<int>(blocks.size());
    }
    if (std::lexicographical_compare(worst.rbegin(), worst.rend(), touched.rbegin(), touched.rend())) worst = touched;
  }
  GroupShape shape;
  shape.fanout.assign(levels, 1);
  int inner = groups.empty() ? 1 : static_cast<int>(groups.front().size());
  for (std::size_t l = 0; l < levels; ++l) {
    shape.fanout[l] = (inner + worst[l] - 1) / worst[l];
    inner = worst[l];
  }
  return shape;
}

}  // namespace nestfast::megatron_test
