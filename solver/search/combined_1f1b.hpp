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

}  // namespace nestfast
