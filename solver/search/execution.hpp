#pragma once
// The execution: how one model is laid out on one cluster (Calculon's third
// input, beside ModelSpec and ClusterSpec). Plain data; validate_execution()
// in execution_layout.hpp checks it and derives where everything sits.
//
// Degrees and how expert parallelism folds into data parallelism
// ---------------------------------------------------------------
// devices = tp * cp * pp * dp                 (ep does NOT multiply the world)
// ep divides dp: the data-parallel dimension is split into an inner factor
// `ep` (the expert-parallel group) and an outer factor dp/ep ("dp_rest").
// This is Megatron-LM's classic MoE layout (expert-model-parallel ranks are a
// sub-group of the data-parallel ranks; each dense weight is replicated over
// all dp*cp ranks, each expert weight over dp/ep * cp ranks).
//   dense gradients  are reduced over the tp-peers' dp * cp ranks  (size dp*cp)
//   expert gradients are reduced over dp/ep * cp ranks
//   MoE all-to-all runs inside the ep group (size ep).
// Every ep group thus holds all E experts, E/ep per device (ep divides E).
// That is the Nest framework's layout. Under MegatronCore the dense ranks
// form tp, cp, dp, pp (Ep has size 1 in the placement) and the experts live on
// Megatron's own grid over the same ranks: expert-tp (= tp) innermost, then
// ep, then expert-dp = cp*dp/ep, then pp (or ep, pp, expert-dp with the
// tp-pp-dp mapping; parallel_state.py:887). The ep group is then the ep
// consecutive (cp, dp) coordinates next to tp, so with cp > 1 it overlaps the
// cp groups.
//
// Placement: where each dimension sits
// ------------------------------------
// `placement` lists the five dimensions innermost first; the Ep entry is the
// ep factor of dp and the Dp entry is the dp/ep factor. Device index =
//   sum over dims of coordinate(dim) * stride(dim),
//   stride(first) = 1, stride(next) = stride(prev) * size(prev).
// Default tp, cp, ep, dp, pp (Megatron-LM's RankGenerator order
// "tp-cp-ep-dp-pp"): TP on NVLink, pipeline outermost. "dp inside pp" is
// tp, cp, ep, pp, dp reversed accordingly: {Tp, Cp, Ep, Pp, Dp} puts the
// replicas of one stage far apart; {Tp, Cp, Ep, Dp, Pp} keeps them together.
// Devices are numbered so that level-0 groups (nodes) are consecutive runs of
// levels[0].group_size devices, level-1 groups consecutive runs of
// levels[0].group_size * levels[1].group_size devices, and so on.
//
// Stages
// ------
// The layer chain is embedding = 0, transformer blocks 1..L, head (final
// norm + LM head + loss) = L+1. A plan has pp * vpp stages ("model chunks"),
// each a contiguous inclusive range [first_layer, last_layer]; together they
// cover 0..L+1 in order with no gap. Stage i runs on pipeline rank i % pp
// (Megatron's interleaved assignment; with vpp = 1 stage i is rank i).
// Derived fields (filled by derive_stage_layout, checked by validation):
//   first_device   = (i % pp) * stride(Pp): the device of pipeline rank i%pp
//                    whose other coordinates are all 0;
//   boundary_level = the network level of the p2p INTO stage i from stage
//                    i-1 (rank (i-1)%pp -> rank i%pp): the lowest level whose
//                    groups contain both ends for EVERY copy of the pair
//                    (all tp/cp/dp coordinates); -1 for stage 0 and when
//                    both stages sit on the same rank (pp = 1).
#include <cstdint>
#include <string>
#include <vector>

#include "solver/model/recompute_modules.hpp"

namespace nestfast {

enum class Recompute { None, Selective, Full };
inline constexpr int kRecomputeModes = 3;

// Which framework the plan targets, and so which rules it obeys and how its
// expert groups sit (solver/search/megatron_rules.hpp):
//   MegatronCore: what Megatron-LM's pretrain_gpt.py runs as emitted: its two
//     rank orders, its expert grid (expert-tp, ep, expert-dp, pp: the ep group
//     spans the cp and dp ranks next to tp, ep divides cp*dp), one recompute
//     setting for every stage, ZeRO as its distributed optimizer or
//     Megatron-FSDP.
//   Nest: the wider space of the NEST paper (any placement order, ep carved
//     out of dp, recompute per stage). Megatron-LM cannot run such plans as
//     they are; every output says so.
enum class Framework { MegatronCore, Nest };

enum class ParallelDim { Tp, Cp, Ep, Pp, Dp };
inline constexpr int kParallelDims = 5;

enum class Optimizer { Adam, Sgd };

// How the MoE all-to-all is run, and so priced (solver/cluster/collectives.hpp):
//   Fast: nestfast's FAST (intra-server rebalancing, then one-to-one stages
//     between servers: the server-level bound). Nest plans only: Megatron-LM
//     has no FAST dispatcher.
//   Fanout: every device posts all its sends at once, each (token, expert)
//     copy on its own: NCCL's all-to-all, which Megatron-Core's alltoall
//     dispatcher runs (token_dispatcher.py:556, 705-711 at d98e8a64).
//   DeepEp: DeepEP's normal kernels behind Megatron-Core's flex dispatcher
//     (--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep):
//     a token crosses the network once per destination node, on its rail to
//     the GPU of the same local index, which forwards it over NVLink once per
//     destination rank; the combine is the reverse (deepseek-ai/DeepEP
//     567632dd, csrc/kernels/internode.cu:628-690, 960-998, 1955-1960).
enum class AllToAllAlgorithm { Fast, Fanout, DeepEp };

// The attention core: fused (FlashAttention-style, what Megatron-Core runs
// with TransformerEngine: no s^2 tensor in HBM or in the stash, the scores
// recomputed in the backward, causal blocks above the diagonal skipped) or
// Megatron-LM's unfused scale-mask-softmax-dropout path of 2021-22.
enum class Attention { Flash, Unfused };

// The dtype of the gradient buffer the backward accumulates into and the DP
// collectives reduce. Megatron-LM with bf16 keeps and reduces fp32 gradients
// unless --grad-reduce-in-bf16 (megatron/training/arguments.py:1213 sets
// accumulate_allreduce_grads_in_fp32 False; param_and_grad_buffer.py:924
// then allocates the buffer in the parameters' dtype): half the gradient
// memory and half the reduce-scatter / all-reduce bytes. A numerics choice,
// so the user's, never the search's.
enum class GradReduce { Fp32, Bf16 };

// Which communication runs concurrently with compute, as Megatron-Core's
// flags switch it on (each is priced as max(0, comm - the compute it hides
// behind) plus the slowdown of that compute while the two share SMs and HBM:
// solver/search/overlap.hpp). Where a flag cannot apply (tp_comm without
// sequence parallelism, p2p without interleaving, moe_a2a and moe_shared
// without expert parallelism) the communication is priced serial, as
// Megatron runs it.
struct Overlap {
  bool grad_reduce = true;   // --overlap-grad-reduce: DP gradient all-reduce / reduce-scatter, bucket by
                             // bucket, behind the last micro-batch's backward
  bool param_gather = true;  // --overlap-param-gather: ZeRO-1/2 weight all-gather behind the next forward;
                             // ZeRO-3's per-micro-batch gathers prefetched one layer ahead
  bool tp_comm = true;       // --tp-comm-overlap: TP all-gather / reduce-scatter pipelined with the GEMMs
                             // next to them (needs sequence parallelism)
  bool p2p = true;           // interleaved 1F1B's p2p behind the chunk's compute (Megatron-Core's default;
                             // --no-overlap-p2p-communication turns it off); plain 1F1B is blocking
  bool moe_a2a = true;       // --overlap-moe-expert-parallel-comm: a layer's EP all-to-alls behind another
                             // micro-batch's compute (needs ep > 1, interleaving when pp > 1, no full recompute)
  bool moe_shared = true;    // --moe-shared-expert-overlap: the shared experts on a side stream beside the
                             // same layer's dispatch and combine (needs ep > 1, not beside moe_a2a; inert
                             // on a model without shared experts, as Megatron's flag is)
  bool moe_dispatch_wgrad = true;  // --overlap-dispatch-backward-with-experts-wgrad: the routed experts'
                                   // weight gradients on a side stream beside the dispatch's backward
                                   // all-to-all (needs ep > 1, not beside moe_a2a)

  static Overlap none() { return {false, false, false, false, false, false, false}; }
  bool operator==(const Overlap&) const = default;
};

struct StagePlan {
  int first_layer = 0;  // inclusive, in the chain 0..L+1
  int last_layer = 0;   // inclusive
  Recompute recompute = Recompute::None;  // Selective: the plan's recompute_modules
  // Full only: 0 = every block of the stage is recomputed; N > 0 = only its
  // first N blocks (Megatron's --recompute-method block --recompute-num-layers N,
  // which counts per model chunk).
  int recompute_layers = 0;
  int first_device = 0;     // derived, see above
  int boundary_level = -1;  // derived, see above
};

struct Execution {
  Framework framework = Framework::Nest;
  int tp = 1;
  int cp = 1;
  int ep = 1;   // divides the expert count, and dp (Nest) or cp*dp (MegatronCore)
  // Megatron's --expert-tensor-parallel-size (model_parallel_config.py:130):
  // 0 = tp (the experts split like the dense MLP). MegatronCore also takes 1:
  // whole experts, the expert grid etp-ep-edp-pp over the same tp*cp*dp ranks
  // (parallel_state.py:887), so the ep group can span the tp ranks.
  int expert_tp = 0;
  int pp = 1;
  int dp = 1;
  bool sp = false;  // sequence parallelism (needs tp > 1 to matter)

  int micro_batch = 1;   // sequences per micro-batch per dp replica
  int global_batch = 1;  // sequences per iteration; m = global_batch / (dp * micro_batch)
  int seq_len = 0;       // 0 = the model's default

  int zero_stage = 0;  // 0..3 over the data-parallel group
  int vpp = 1;         // interleaved 1F1B chunks per rank; 1 = plain 1F1B
  Optimizer optimizer = Optimizer::Adam;

  AllToAllAlgorithm a2a = AllToAllAlgorithm::Fast;
  // Routing skew: tokens received by the hottest device / the mean (>= 1).
  // 1 = uniform routing. See solver/cluster/collectives.hpp for how FAST and
  // fan-out pay for it.
  double expert_imbalance = 1.0;

  Attention attention = Attention::Flash;
  Overlap overlap;
  GradReduce grad_reduce = GradReduce::Fp32;
  // What a Selective stage checkpoints (Megatron's --recompute-modules,
  // solver/model/recompute_modules.hpp; core_attn alone by default).
  RecomputeModules recompute_modules = kDefaultRecomputeModules;

  // Innermost first; a permutation of all five dims.
  std::vector<ParallelDim> placement = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep,
                                        ParallelDim::Dp, ParallelDim::Pp};

  std::vector<StagePlan> stages;  // pp * vpp of them

  int devices() const { return tp * cp * pp * dp; }
  int micro_batches() const { return global_batch / (dp * micro_batch); }
  // Ranks holding the same expert weights (tp*cp*dp / (etp*ep); cp*dp/ep at etp = tp).
  int expert_dp_size() const { return tp * cp * dp / (etp() * ep); }
  int etp() const { return expert_tp > 0 ? expert_tp : tp; }
};

// The overlaps of `plan.overlap` that Megatron-LM can run for this plan, and
// so the ones priced and emitted (the rules: grad_reduce always; param_gather
// with grad_reduce and the distributed optimizer or Megatron-FSDP (ZeRO >= 1
// over dp*cp > 1), arguments.py:1024; tp_comm with sequence parallelism,
// arguments.py:1441; p2p with interleaving, arguments.py:1010; moe_a2a with
// ep > 1 and, when pp > 1, interleaving, transformer_config.py:3007, and
// not beside the moe recompute module, :3030-3032; moe_shared with ep > 1
// (the alltoall or flex dispatcher, transformer_config.py:1820-1826), not
// beside moe_a2a, which takes precedence (:3039-3041), nor beside the
// shared_experts recompute module (:1991-1998), nor where tp or cp > 1
// without Megatron-FSDP leaves one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS
// =1, arguments.py:1477), with which the side stream does not overlap the
// dispatch (moe/token_dispatcher.py:697-698); moe_dispatch_wgrad with ep > 1,
// not beside moe_a2a, which this emitter prefers (Megatron refuses the two
// together, and --delay-wgrad-compute beside it, transformer_config.py:3084-3095)).
Overlap effective_overlap(const Execution& plan);
// Megatron-FSDP runs the plan: ZeRO 2 or 3 over dp*cp > 1 (megatron_args
// emits --use-megatron-fsdp for it).
bool megatron_fsdp(const Execution& plan);
// Whether a Megatron-Core launch of `plan` runs one hardware queue
// (CUDA_DEVICE_MAX_CONNECTIONS=1): tp or cp > 1 (asserted on Hopper and
// before, arguments.py:1477), unless Megatron-FSDP (which needs more, :1166)
// or the 1F1B A2A overlap (`a2a_overlap`: its two streams need more,
// moe/README.md:437; Megatron only warns there, :1466) runs. What the
// emitted environment sets and what the shared-expert overlap needs.
bool one_hardware_queue(const Execution& plan, bool a2a_overlap);
// The same as a plan of `model` runs it: the shared-expert overlap only on a
// model with shared experts (elsewhere Megatron's flag does nothing, the
// price does not change and the line leaves it out). What a plan records as
// priced and what its line carries.
Overlap effective_overlap(const Execution& plan, const ModelSpec& model);

const char* to_string(Recompute mode);
const char* to_string(ParallelDim dim);
const char* to_string(AllToAllAlgorithm algorithm);
const char* to_string(Optimizer optimizer);
const char* to_string(Framework framework);  // "megatron-core", "nest"
const char* to_string(Attention attention);  // "flash", "unfused"
const char* to_string(GradReduce dtype);     // "fp32", "bf16"
// "grad,param,tp,p2p,a2a,shared,wgrad" (the ones on), "all" or "none".
std::string to_string(const Overlap& overlap);
// Parse "none|selective|full", "tp|cp|ep|pp|dp", "adam|sgd", "fast|fanout|deepep",
// "megatron-core|nest", "flash|unfused", "fp32|bf16" and the names of the overlaps that
// are on (or "all", or "none", alone); throw std::invalid_argument naming `what`.
Framework parse_framework(const std::string& text, const std::string& what);
Recompute parse_recompute(const std::string& text, const std::string& what);
ParallelDim parse_parallel_dim(const std::string& text, const std::string& what);
Optimizer parse_optimizer(const std::string& text, const std::string& what);
AllToAllAlgorithm parse_all_to_all(const std::string& text, const std::string& what);
Attention parse_attention(const std::string& text, const std::string& what);
GradReduce parse_grad_reduce(const std::string& text, const std::string& what);  // "fp32|bf16"
Overlap parse_overlap(const std::vector<std::string>& names, const std::string& what);
// The inverse of to_string(const Overlap&): "all", "none" or "grad,tp".
Overlap parse_overlap_text(const std::string& text, const std::string& what);

}  // namespace nestfast
