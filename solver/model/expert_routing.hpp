#pragma once
// Where a token's experts land, in expectation, under uniform routing: the
// chance that a token's top-k choice touches a given range of experts (the
// experts one device or one node holds). A dispatcher that sends a token once
// per destination device or node (DeepEP, Megatron-Core's flex dispatcher)
// moves bytes in proportion to these chances; one that sends every (token,
// expert) copy on its own (NCCL's all-to-all, Megatron's alltoall dispatcher)
// does not need them.
//
// The router is taken as uniform: a token's k experts are k distinct experts
// drawn with equal chance. With group-limited routing (RouterSpec::groups G,
// group_topk g; DeepSeek-V3's node-limited routing) the experts form G equal
// groups of consecutive experts, a token first takes g of the G groups with
// equal chance, then its k experts among those groups' g E / G experts
// (Megatron-Core's group_limited_topk, moe_utils.py, picks groups by their
// best scores, which under uniform scores is a uniform choice). Experts sit
// on devices in order: expert-parallel rank r holds experts
// [r E / ep, (r + 1) E / ep) (Megatron's local_expert_indices).
#include "solver/model/model_spec.hpp"

namespace nestfast {

// P(a token's experts include at least one of [first, first + count)), for
// 0 <= first, first + count <= num_experts. 0 for count <= 0.
double expert_range_hit_probability(const MoeSpec& moe, int first, int count);

}  // namespace nestfast
