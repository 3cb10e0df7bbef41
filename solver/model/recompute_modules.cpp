#include "solver/model/recompute_modules.hpp"

#include <sstream>
#include <stdexcept>

#include "solver/model/layer_work.hpp"

namespace nestfast {

namespace {

constexpr RecomputeModule kAll[] = {RecomputeModule::CoreAttn,  RecomputeModule::Layernorm, RecomputeModule::MoeAct,
                                    RecomputeModule::MlaUpProj, RecomputeModule::Mlp,       RecomputeModule::Moe,
                                    RecomputeModule::SharedExperts};

}  // namespace

const char* to_string(RecomputeModule module) {
  switch (module) {
    case RecomputeModule::CoreAttn: return "core_attn";
    case RecomputeModule::Layernorm: return "layernorm";
    case RecomputeModule::MoeAct: return "moe_act";
    case RecomputeModule::MlaUpProj: return "mla_up_proj";
    case RecomputeModule::Mlp: return "mlp";
    case RecomputeModule::Moe: return "moe";
    case RecomputeModule::SharedExperts: return "shared_experts";
  }
  return "?";
}

std::vector<std::string> module_names(RecomputeModules set) {
  std::vector<std::string> names;
  for (RecomputeModule module : kAll)
    if (has_module(set, module)) names.emplace_back(to_string(module));
  return names;
}

std::string to_string_modules(RecomputeModules set) {
  std::string text;
  for (const std::string& name : module_names(set)) text += (text.empty() ? "" : ",") + name;
  return text;
}

RecomputeModules parse_recompute_modules(const std::string& text, const std::string& what) {
  std::string words = text;
  for (char& c : words)
    if (c == ',') c = ' ';
  std::istringstream in(words);
  RecomputeModules set = 0;
  for (std::string word; in >> word;) {
    bool known = false;
    for (RecomputeModule module : kAll) {
      if (word != to_string(module)) continue;
      if (has_module(set, module)) throw std::invalid_argument(what + ": '" + word + "' is listed twice");
      set |= module_bit(module);
      known = true;
    }
    if (!known)
      throw std::invalid_argument(what + ": '" + word +
                                  "' is not one of core_attn, layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts");
  }
  if (set == 0) throw std::invalid_argument(what + ": names no module (core_attn is Megatron's default)");
  return set;
}

RecomputeModules modules_that_apply(const ModelSpec& model) {
  RecomputeModules set = module_bit(RecomputeModule::CoreAttn);
  const bool mla = model.attention == AttentionKind::MultiLatent;
  bool dense = false, moe = false;
  for (int i = 1; i <= model.num_layers; ++i) (layer_kind(model, i) == LayerKind::MoeBlock ? moe : dense) = true;
  if (mla || moe) set |= module_bit(RecomputeModule::Layernorm);
  if (mla) set |= module_bit(RecomputeModule::MlaUpProj);
  if (dense) set |= module_bit(RecomputeModule::Mlp);
  if (moe) set |= module_bit(RecomputeModule::MoeAct) | module_bit(RecomputeModule::Moe);
  if (moe && model.moe.shared_experts > 0) set |= module_bit(RecomputeModule::SharedExperts);
  return set;
}

}  // namespace nestfast
