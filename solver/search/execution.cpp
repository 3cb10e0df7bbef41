#include "solver/search/execution.hpp"

#include <stdexcept>

namespace nestfast {

const char* to_string(Recompute mode) {
  switch (mode) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const char* to_string(ParallelDim dim) {
  switch (dim) {
    case ParallelDim::Tp: return "tp";
    case ParallelDim::Cp: return "cp";
    case ParallelDim::Ep: return "ep";
    case ParallelDim::Pp: return "pp";
    case ParallelDim::Dp: return "dp";
  }
  return "?";
}

const char* to_string(Framework framework) {
  return framework == Framework::MegatronCore ? "megatron-core" : "nest";
}

Framework parse_framework(const std::string& text, const std::string& what) {
  if (text == "megatron-core") return Framework::MegatronCore;
  if (text == "nest") return Framework::Nest;
  throw std::invalid_argument(what + ": '" + text + "' is not megatron-core or nest");
}

bool megatron_fsdp(const Execution& plan) { return plan.zero_stage >= 2 && plan.dp * plan.cp > 1; }

bool one_hardware_queue(const Execution& plan, bool a2a_overlap) {
  return (plan.tp > 1 || plan.cp > 1) && !megatron_fsdp(plan) && !a2a_overlap;
}

Overlap effective_overlap(const Execution& plan) {
  const Overlap& asked = plan.overlap;
  Overlap runs = Overlap::none();
  runs.grad_reduce = asked.grad_reduce;
  runs.param_gather = asked.param_gather && asked.grad_reduce && plan.zero_stage >= 1 && plan.dp * plan.cp > 1;
  runs.tp_comm = asked.tp_comm && plan.sp && plan.tp > 1;
  runs.p2p = asked.p2p && plan.vpp > 1;
  // Megatron refuses it beside the moe recompute module (transformer_config.py:3030-3032).
  runs.moe_a2a = asked.moe_a2a && plan.ep > 1 && (plan.pp == 1 || plan.vpp > 1) &&
                 !has_module(plan.recompute_modules, RecomputeModule::Moe);
  // The shared experts' side stream overlaps the dispatch only with more
  // than one hardware queue (moe/token_dispatcher.py:697-698).
  runs.moe_shared = asked.moe_shared && plan.ep > 1 && !runs.moe_a2a && !one_hardware_queue(plan, runs.moe_a2a) &&
                    !has_module(plan.recompute_modules, RecomputeModule::SharedExperts);
  // The routed experts' wgrad on its own stream beside the dispatch's
  // backward (moe_layer.py:776-814): no queue rule, the all-to-all is
  // launched before the GEMMs it runs beside, the order one queue keeps.
  runs.moe_dispatch_wgrad = asked.moe_dispatch_wgrad && plan.ep > 1 && !runs.moe_a2a;
  return runs;
}

Overlap effective_overlap(const Execution& plan, const ModelSpec& model) {
  Overlap runs = effective_overlap(plan);
  runs.moe_shared = runs.moe_shared && model.moe.enabled() && model.moe.shared_experts > 0;
  return runs;
}

const char* to_string(Attention attention) { return attention == Attention::Flash ? "flash" : "unfused"; }

const char* to_string(GradReduce dtype) { return dtype == GradReduce::Fp32 ? "fp32" : "bf16"; }

namespace {

struct OverlapName {
  const char* name;
  bool Overlap::*flag;
};
constexpr OverlapName kOverlapNames[] = {{"grad", &Overlap::grad_reduce},
                                         {"param", &Overlap::param_gather},
                                         {"tp", &Overlap::tp_comm},
                                         {"p2p", &Overlap::p2p},
                                         {"a2a", &Overlap::moe_a2a},
                                         {"shared", &Overlap::moe_shared},
                                         {"wgrad", &Overlap::moe_dispatch_wgrad}};

}  // namespace

std::string to_string(const Overlap& overlap) {
  if (overlap == Overlap{}) return "all";
  if (overlap == Overlap::none()) return "none";
  std::string text;
  for (const OverlapName& entry : kOverlapNames) {
    if (!(overlap.*entry.flag)) continue;
    if (!text.empty()) text += ",";
    text += entry.name;
  }
  return text;
}

Attention parse_attention(const std::string& text, const std::string& what) {
  if (text == "flash") return Attention::Flash;
  if (text == "unfused") return Attention::Unfused;
  throw std::invalid_argument(what + ": '" + text + "' is not one of flash, unfused");
}

GradReduce parse_grad_reduce(const std::string& text, const std::string& what) {
  if (text == "fp32") return GradReduce::Fp32;
  if (text == "bf16") return GradReduce::Bf16;
  throw std::invalid_argument(what + ": '" + text + "' is not one of fp32, bf16");
}

Overlap parse_overlap(const std::vector<std::string>& names, const std::string& what) {
  if (names.size() == 1 && names.front() == "all") return Overlap{};
  if (names.size() == 1 && names.front() == "none") return Overlap::none();
  Overlap overlap = Overlap::none();
  for (const std::string& item : names) {
    bool known = false;
    for (const OverlapName& entry : kOverlapNames) {
      if (item != entry.name) continue;
      if (overlap.*entry.flag) throw std::invalid_argument(what + ": '" + item + "' is named twice");
      overlap.*entry.flag = known = true;
    }
    if (!known) {
      throw std::invalid_argument(what + ": '" + item + "' is not one of grad, param, tp, p2p, a2a, shared, wgrad (or all, none alone)");
    }
  }
  return overlap;
}

Overlap parse_overlap_text(const std::string& text, const std::string& what) {
  std::vector<std::string> names(1);
  for (char c : text) {
    if (c == ',') names.emplace_back();
    else names.back() += c;
  }
  return parse_overlap(names, what);
}

Recompute parse_recompute(const std::string& text, const std::string& what) {
  if (text == "none") return Recompute::None;
  if (text == "selective") return Recompute::Selective;
  if (text == "full") return Recompute::Full;
  throw std::invalid_argument(what + ": '" + text + "' is not one of none, selective, full");
}

ParallelDim parse_parallel_dim(const std::string& text, const std::string& what) {
  for (ParallelDim dim : {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp})
    if (text == to_string(dim)) return dim;
  throw std::invalid_argument(what + ": '" + text + "' is not one of tp, cp, ep, pp, dp");
}

const char* to_string(AllToAllAlgorithm algorithm) {
  switch (algorithm) {
    case AllToAllAlgorithm::Fast: return "fast";
    case AllToAllAlgorithm::Fanout: return "fanout";
    case AllToAllAlgorithm::DeepEp: return "deepep";
  }
  return "?";
}

const char* to_string(Optimizer optimizer) { return optimizer == Optimizer::Adam ? "adam" : "sgd"; }

Optimizer parse_optimizer(const std::string& text, const std::string& what) {
  if (text == "adam") return Optimizer::Adam;
  if (text == "sgd") return Optimizer::Sgd;
  throw std::invalid_argument(what + ": '" + text + "' is not one of adam, sgd");
}

AllToAllAlgorithm parse_all_to_all(const std::string& text, const std::string& what) {
  if (text == "fast") return AllToAllAlgorithm::Fast;
  if (text == "fanout") return AllToAllAlgorithm::Fanout;
  if (text == "deepep") return AllToAllAlgorithm::DeepEp;
  throw std::invalid_argument(what + ": '" + text + "' is not one of fast, fanout, deepep");
}

}  // namespace nestfast
