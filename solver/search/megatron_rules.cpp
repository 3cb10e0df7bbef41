#include "solver/search/megatron_rules.hpp"

#include <algorithm>
#include <stdexcept>

namespace nestfast::search {
namespace {

// The order of the dense dims larger than 1, innermost first (Ep has no
// factor in Megatron's dense grid).
std::vector<ParallelDim> active_dense_order(const Execution& e) {
  std::vector<ParallelDim> order;
  for (ParallelDim dim : e.placement) {
    const int size = dim == ParallelDim::Tp ? e.tp : dim == ParallelDim::Cp ? e.cp : dim == ParallelDim::Pp ? e.pp
                   : dim == ParallelDim::Dp ? e.dp : 1;
    if (size > 1) order.push_back(dim);
  }
  return order;
}

std::vector<ParallelDim> active(const Execution& e, std::vector<ParallelDim> order) {
  Execution copy = e;
  copy.placement = std::move(order);
  return active_dense_order(copy);
}

}  // namespace

const MegatronRuleText& megatron_rule(MegatronRule rule) {
  for (const MegatronRuleText& entry : kMegatronRules)
    if (entry.rule == rule) return entry;
  throw std::logic_error("megatron_rule: a rule without its text");
}

const MegatronFlag* megatron_flag(std::string_view name) {
  for (const MegatronFlag& flag : kMegatronFlags)
    if (flag.name == name) return &flag;
  return nullptr;
}

bool is_choice(const MegatronFlag& flag, std::string_view value) {
  std::string_view rest = flag.choices;
  while (!rest.empty()) {
    const std::size_t bar = rest.find('|');
    if (rest.substr(0, bar) == value) return true;
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  return false;
}

std::string describe(MegatronRule rule) {
  const MegatronRuleText& entry = megatron_rule(rule);
  return std::string(entry.text) + " (" + std::string(entry.source) + ")";
}

bool recompute_modules_refused(const ModelSpec& model, RecomputeModules modules) {
  // moe_act runs only in the grouped-GEMM experts, which the line asks for
  // with experts (megatron_args); mla_up_proj only in MLA.
  return (has_module(modules, RecomputeModule::MoeAct) && !model.moe.enabled()) ||
         (has_module(modules, RecomputeModule::MlaUpProj) && model.attention != AttentionKind::MultiLatent);
}

std::vector<MegatronRule> megatron_violations(const ModelSpec& model, const Execution& e, const MegatronPolicy& policy) {
  std::vector<MegatronRule> broken;
  auto check = [&broken](bool ok, MegatronRule rule) {
    if (!ok) broken.push_back(rule);
  };
  const int world = e.devices();
  const bool moe = model.moe.enabled();
  const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const int seq = e.seq_len > 0 ? e.seq_len : model.seq_len;
  check(world % (e.tp * e.pp * e.cp) == 0, MegatronRule::ModelSizeDividesWorld);
  check(e.ep >= 1 && world % (e.etp() * e.ep * e.pp) == 0 && (e.tp * e.cp * e.dp) % (e.etp() * e.ep) == 0,
        MegatronRule::ExpertGridDividesWorld);
  check(e.ep == 1 || moe, MegatronRule::EpNeedsExperts);
  check(!moe || model.moe.num_experts % e.ep == 0, MegatronRule::ExpertsDivisibleByEp);
  check(model.heads % e.tp == 0 && kv_heads % e.tp == 0, MegatronRule::HeadsDivisibleByTp);
  check(model.ffn_hidden % e.tp == 0 && (!moe || model.moe.expert_ffn_hidden % e.etp() == 0),
        MegatronRule::FfnDivisibleByTp);

  const std::vector<ParallelDim> order = active_dense_order(e);
  const std::vector<ParallelDim> dp_pp =
      active(e, {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp, ParallelDim::Pp});
  const std::vector<ParallelDim> pp_dp =
      active(e, {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp});
  check(order == dp_pp || order == pp_dp, MegatronRule::RankOrder);
  if (order == pp_dp && order != dp_pp && e.pp > 1) {
    // Expert grid etp-ep-pp-edp: its pp stride etp*ep must equal the dense tp*cp.
    check(e.etp() * e.ep == e.tp * e.cp, MegatronRule::TpPpDpMappingGroups);
  }

  check(!(moe && e.tp > 1) || e.sp, MegatronRule::MoeTpNeedsSequenceParallel);
  check(e.cp == 1 || seq % (2 * e.cp) == 0, MegatronRule::CpSeqMultiple);
  check(e.cp == 1 || e.attention == Attention::Flash, MegatronRule::CpNeedsFusedAttention);
  check(e.cp == 1 || model.attention != AttentionKind::MultiLatent, MegatronRule::MlaContextParallel);
  check(e.dp * e.micro_batch > 0 && e.global_batch % (e.dp * e.micro_batch) == 0, MegatronRule::GlobalBatchDivisible);
  if (e.vpp > 1) {
    check(e.pp > (effective_overlap(e).p2p ? 1 : 2), MegatronRule::InterleavedNeedsPp);
    const int m = e.dp * e.micro_batch > 0 ? e.global_batch / (e.dp * e.micro_batch) : 0;
    check(e.pp <= m && m % e.pp == 0, MegatronRule::InterleavedMicroBatches);
  }
  check(e.ep == 1 || e.a2a != AllToAllAlgorithm::Fast, MegatronRule::MoeDispatcher);
  if (e.ep > 1 && e.a2a == AllToAllAlgorithm::DeepEp) {
    const int group = e.etp() * e.ep;
    check(std::find(std::begin(kDeepEpGroupSizes), std::end(kDeepEpGroupSizes), group) != std::end(kDeepEpGroupSizes),
          MegatronRule::DeepEpGroupSize);
  }
  // The emitted line's --overlap-moe-expert-parallel-comm runs in bf16/fp16 only.
  if (effective_overlap(e).moe_a2a) check(model.dtype_bytes == 2, MegatronRule::MoeA2aOverlap);
  if (e.zero_stage >= 2) check(e.pp == 1 || policy.allow_fsdp_with_pipeline, MegatronRule::FsdpWithoutPipeline);

  if (!e.stages.empty()) {
    const StagePlan& first = e.stages.front();
    bool uniform = true;
    for (const StagePlan& stage : e.stages)
      uniform = uniform && stage.recompute == first.recompute &&
                (stage.recompute != Recompute::Full || stage.recompute_layers == first.recompute_layers);
    check(uniform, MegatronRule::RecomputeUniform);
    if (first.recompute == Recompute::Selective)
      check(!recompute_modules_refused(model, e.recompute_modules), MegatronRule::RecomputeModulesApply);
  }
  return broken;
}

}  // namespace nestfast::search
