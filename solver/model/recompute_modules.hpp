#pragma once
// Megatron-Core's selective recompute modules (--recompute-granularity
// selective --recompute-modules ..., megatron/core/transformer/
// transformer_config.py:560-583 at d98e8a64): which parts of a block a
// selectively recomputed stage checkpoints. Each drops what it checkpoints
// from the stash and runs its forward again before its backward
// (layer_work.cpp prices both per module):
//   core_attn       the attention core (attention.py:392, :1555); the default
//   layernorm       the norms that are modules of their own (MLA's input norm,
//                   an MoE block's pre-MLP norm; TransformerEngine fuses the
//                   others into the next linear: transformer_layer.py:475-530)
//   moe_act         the experts' activation (experts.py:268-272, :1019-1029)
//   mla_up_proj     MLA's up projections and rotary embedding
//                   (multi_latent_attention.py:171-174, :983-988)
//   mlp             a dense block's MLP (transformer_layer.py:537-539)
//   moe             an MoE block's whole MLP half, dispatch and combine
//                   included (moe/moe_layer.py:247-251, :701-716)
//   shared_experts  the shared experts (moe/moe_layer.py:252-255)
// A set is a bit mask; the default is core_attn alone
// (transformer_config.py:1940-1941).
#include <string>
#include <vector>

#include "solver/model/model_spec.hpp"

namespace nestfast {

enum class RecomputeModule { CoreAttn, Layernorm, MoeAct, MlaUpProj, Mlp, Moe, SharedExperts };
inline constexpr int kRecomputeModuleCount = 7;

using RecomputeModules = unsigned;  // bit m: RecomputeModule m is checkpointed
inline constexpr RecomputeModules module_bit(RecomputeModule module) { return 1u << static_cast<unsigned>(module); }
inline constexpr RecomputeModules kDefaultRecomputeModules = module_bit(RecomputeModule::CoreAttn);
inline constexpr bool has_module(RecomputeModules set, RecomputeModule module) { return (set & module_bit(module)) != 0; }

const char* to_string(RecomputeModule module);  // Megatron's names: "core_attn", "moe_act", ...
// The set's names in Megatron's order: {"core_attn", "layernorm", "moe_act"}.
std::vector<std::string> module_names(RecomputeModules set);
// The same, comma-separated: "core_attn,layernorm,moe_act".
std::string to_string_modules(RecomputeModules set);
// "core_attn,moe_act" (or the same separated by spaces); at least one name,
// each of Megatron's; std::invalid_argument naming `what` otherwise.
RecomputeModules parse_recompute_modules(const std::string& text, const std::string& what);

// The modules that change something in `model` (layernorm: MLA's input norm
// or MoE blocks' pre-MLP norms; moe_act, moe: experts; mla_up_proj: MLA;
// mlp: dense blocks; shared_experts: shared experts). Megatron accepts the
// others as no-ops, except where it refuses them (megatron_rules.hpp).
RecomputeModules modules_that_apply(const ModelSpec& model);

}  // namespace nestfast
