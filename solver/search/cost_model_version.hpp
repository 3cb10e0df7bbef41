#pragma once
// The version of the cost model that prices a plan (compute, memory,
// communication, overlap, schedules and their constants). Bump it in every
// change that prices some plan differently: a catalog's checkpoint records
// it (jobs/catalog/start.cpp), so a job resumed across the change is refused
// instead of mixing rows priced by two models.
#include <cstdint>

namespace nestfast::search {

// 4: multi-head latent attention priced as such (deepseek-v3 was MHA at head_dim 56).
// 5: selective recompute priced as Megatron-Core runs it under fused attention too.
// 6: the DP collectives of a rank's later interleaved chunks, hidden behind the
//    first chunk's backward, cost overlap_slowdown x their time; the h100-sxm and
//    h200 GEMM curve x 1.04 (docs/cost-model.md).
// 7: expert tensor parallelism > 1 all-gathers and reduce-scatters the k t
//    routed token copies over expert-tp (was the dense MLP's t); shared
//    experts keep their own unit of t.
// 8: Megatron-Core plans' EP all-to-all is Megatron's dispatcher (NCCL's
//    all-to-all, or DeepEP's once-per-node dispatch), not FAST; selective
//    recompute by module; multi-token-prediction layers in the head's row;
//    the expert-tp gather at the hottest group's load.
// 9: under the MoE all-to-all overlap, the combined 1F1B schedule's
//    warm-up forwards and cool-down backwards run their all-to-alls alone.
// 10: --moe-shared-expert-overlap: the shared experts beside their layer's
//    dispatch and combine (Overlap::moe_shared, on by default where it runs).
// 11: under it, the MTP layers' all-to-alls hide beside their shared experts
//    too, and the moe recompute module's shared TP unit runs again serial.
// 12: the 1F1B A2A overlap priced layer pair by layer pair as Megatron's
//    combined 1F1B schedules their nodes on two streams, with
//    --delay-wgrad-compute (emitted beside it), instead of every all-to-all
//    of the pair behind the pair's whole computation.
// 13: the shared-expert overlap not where tp or cp > 1 without Megatron-FSDP
//    leaves one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1).
// 14: --overlap-dispatch-backward-with-experts-wgrad: the routed experts'
//    weight gradients beside their layer's dispatch gradient
//    (Overlap::moe_dispatch_wgrad, on by default where the A2A overlap is not).
inline constexpr std::uint64_t kCostModelVersion = 14;

}  // namespace nestfast::search
