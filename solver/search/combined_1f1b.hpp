#pragma once
// Megatron-Core's combined 1F1B schedule (--overlap-moe-expert-parallel-comm):
// each step runs one model chunk's forward beside another's backward, layer
// by layer, so each one's EP all-to-alls hide behind the other's compute
// (megatron/core/pipeline_parallel/combined_1f1b.py at Megatron-LM d98e8a64).
// The steps that have no partner run alone, their all-to-alls exposed:
// - pp = 1: the first micro-batch's forward and the last one's backward
//   (combined_1f1b_schedule_for_no_pipelining, combined_1f1b.py:76-93 and
//   118-133), 1 of m each;
// - interleaved: the warm-up forwards and the cool-down backwards. Pipeline
//   rank r warms up with 2 (pp - r - 1) + (vpp - 1) x g chunk forwards, g =
//   --microbatch-group-size-per-virtual-pipeline-stage (pp unless set), plus
//   one more under this overlap "to ensure the forward and backward
//   computations are independent in all 1f1b steps" (schedules.py:963-970,
//   get_pp_rank_microbatches), of its m x vpp chunk forwards; as many
//   backwards cool down alone.
// Each pipeline rank prices its own fraction, so the slowest rank's time
// per micro-batch, what the schedule's steady state and bubble scale, holds
// its own exposed all-to-alls.
//
// Header-only and device-compilable: the stage kernel prices with it.
#include "solver/cluster/host_device.hpp"
#include "solver/search/pipeline_time.hpp"

namespace nestfast {

// The fraction of pipeline rank `rank`'s chunk forwards (and, as many, of
// its chunk backwards) that the combined 1F1B schedule of `pp` ranks, `vpp`
// chunks and `micro_batches` per step runs alone: 1 where it combines none
// (pp > 1 without interleaving, where Megatron does not run it, or every
// chunk in warm-up).
NESTFAST_HD inline double combined_1f1b_alone_fraction(int pp, int vpp, int micro_batches, int rank) {
  if (micro_batches <= 0) return 1.0;
  if (pp == 1) return 1.0 / micro_batches;
  if (vpp <= 1) return 1.0;
  const int total = micro_batches * vpp;
  const int warmup = interleaved_warmup_chunks(pp, vpp, rank) + 1;  // one more under this overlap
  return static_cast<double>(warmup < total ? warmup : total) / total;
}

// One MoE layer's forward (micro-batch F) beside the backward of a layer of
// another micro-batch (B), as a combined 1F1B step runs each layer pair
// (TransformerLayerSchedulePlan.run, models/common/model_chunk_schedule_plan.py
// :236-310 at d98e8a64): two streams, each in order,
//   comm: combine_bwd(B) | dispatch_fwd(F), dispatch_bwd(B)          | combine_fwd(F)
//   comp: pre_fwd(F)     | experts_dgrad(B), experts_wgrad(B), experts_fwd(F) | pre_dgrad(B), pre_wgrad(B)
// every node waiting for what it consumes (experts_dgrad the combine's
// gradient, dispatch_fwd pre_fwd, experts_fwd the dispatch, dispatch_bwd
// experts_dgrad, combine_fwd experts_fwd, pre_dgrad dispatch_bwd). "pre" is
// the rest of the layer: attention, the router, shared experts
// (fine_grained_callables.py:67-150). --delay-wgrad-compute, which the plans
// run with this overlap, splits each backward into its data gradients and
// its weight gradients (backward_dw, :277 and :301): the dispatch's gradient
// leaves after the experts' data gradients, and the pre part's weight
// gradients run last, beside the next pair's combine_bwd. Pairs start
// together, each with the previous pair's pre_wgrad on the compute stream
// (the steady state): what one pair leaves idle is not filled otherwise.
struct CombinedLayerPair {
  double pre_forward_s = 0;
  double pre_dgrad_s = 0;
  double pre_wgrad_s = 0;
  double experts_forward_s = 0;
  double experts_dgrad_s = 0;
  double experts_wgrad_s = 0;
  double all_to_all_s = 0;  // each of the four
};

// The seconds the pair takes beyond its computation: the all-to-alls that
// nothing hides.
NESTFAST_HD inline double combined_layer_pair_exposed(const CombinedLayerPair& pair) {
  auto later = [](double x, double y) { return x > y ? x : y; };
  const double a = pair.all_to_all_s;
  const double combine_bwd = a;
  const double pre_fwd = pair.pre_wgrad_s + pair.pre_forward_s;
  const double dispatch_fwd = later(combine_bwd, pre_fwd) + a;
  const double experts_dgrad = later(pre_fwd, combine_bwd) + pair.experts_dgrad_s;
  const double dispatch_bwd = later(dispatch_fwd, experts_dgrad) + a;
  const double experts_fwd = later(experts_dgrad + pair.experts_wgrad_s, dispatch_fwd) + pair.experts_forward_s;
  const double combine_fwd = later(dispatch_bwd, experts_fwd) + a;
  const double pre_dgrad = later(experts_fwd, dispatch_bwd) + pair.pre_dgrad_s;
  const double compute = pair.pre_forward_s + pair.pre_dgrad_s + pair.pre_wgrad_s + pair.experts_forward_s +
                         pair.experts_dgrad_s + pair.experts_wgrad_s;
  return later(later(combine_fwd, pre_dgrad) - compute, 0.0);  // not below 0 by rounding
}

}  // namespace nestfast
