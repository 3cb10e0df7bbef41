#pragma once
// Iteration time of a pipeline from its per-micro-batch bottleneck.
//   1F1B (vpp = 1):        (m + pp - 1) * t_max
//   interleaved (vpp > 1): (m + (pp - 1) / vpp) * t_max + W
// where t_max = max over pipeline ranks of the rank's summed stage times per
// micro-batch, and W = the sum over all stages of StageTime::p2p_warmup_s.
// The bubble is the (pp - 1) / vpp * t_max + W part.
//
// W: with p2p overlap (interleaved only) the steady state hides a chunk's
// transfer behind the other micro-batches' work, but in warm-up (forwards
// only) and cool-down (backwards only) the next rank has nothing else to
// run: rank 0 runs chunk c of pp micro-batches (pp forwards) while the first
// of them travels through all pp ranks, pp forwards plus pp transfers, before
// chunk c + 1 can start (Megatron's interleaved schedule advances chunks in
// groups of pp micro-batches, schedules.py get_model_chunk_id). So each of
// the pp * vpp - 1 chunk boundaries exposes its forward transfer once in
// warm-up and its backward transfer once in cool-down: the stage's
// fw + bw p2p, once per iteration. With blocking p2p (1F1B, or interleaved
// without overlap) every transfer is already in t_max and W = 0.
#include "solver/cluster/host_device.hpp"

namespace nestfast {

// Chunk forwards pipeline rank `rank` runs before its first backward in
// Megatron's interleaved 1F1B: 2 (pp - rank - 1) + (vpp - 1) g with g =
// --microbatch-group-size-per-virtual-pipeline-stage, pp unless set
// (megatron/core/pipeline_parallel/schedules.py get_pp_rank_microbatches at
// d98e8a64), not capped at the m x vpp there are. Device-compilable: the
// stage kernel's combined 1F1B term counts with it too.
NESTFAST_HD inline int interleaved_warmup_chunks(int pp, int vpp, int rank) {
  return 2 * (pp - rank - 1) + (vpp - 1) * pp;
}

struct PipelineTime {
  double steady_s = 0;  // m * t_max
  double bubble_s = 0;  // (pp - 1) / vpp * t_max + warm-up / cool-down transfers
  double total_s() const { return steady_s + bubble_s; }
};

PipelineTime pipeline_time(int micro_batches, int pp, int vpp, double bottleneck_stage_s, double warmup_p2p_s = 0);

}  // namespace nestfast
