#pragma once
// Bytes of model state per parameter and how ZeRO shards them, plus the
// 1F1B / interleaved stash depth. Megatron-LM mixed precision (its
// docs/distrib_optimizer.md table, "bf16 param, fp32 grads"):
//   weights  2 B (bf16/fp16 working copy)
//   grads    4 B (fp32 main_grad buffer the backward accumulates into), or
//            2 B with --grad-reduce-in-bf16 (the buffer in the parameters'
//            dtype, param_and_grad_buffer.py:924)
//   Adam     12 B (fp32 master copy + first and second moments)
//   SGD       4 B (fp32 master copy, no momentum)
// = 18 B per parameter with Adam and no sharding.
// ZeRO over the data-parallel group of size d (the dense or the expert one):
//   stage 1 divides the optimizer state by d, stage 2 also the grads,
//   stage 3 also the weights.
// With bf16 gradients the optimizer steps on an fp32 copy of the gradients
// it owns (distrib_optimizer.py:2794 `shard_model_grad.float()`; the
// non-distributed optimizer copies all of them, optimizer.py:1092). The copy
// lives from the step until the next iteration's zero_grad frees it
// (set_to_none), so it is held while no activations are: Megatron's table's
// "4 + 16/d" for 16-bit gradients (docs/user-guide/features/dist_optimizer.md:18)
// is that step-time peak; during the forward and backward 4 + 12/d are held.
#include "solver/cluster/host_device.hpp"
#include <vector>

#include "solver/search/execution.hpp"

namespace nestfast {

inline constexpr double kWeightBytesPerParam = 2;
inline constexpr double kAdamStateBytesPerParam = 12;
inline constexpr double kSgdStateBytesPerParam = 4;
// The fp32 copy of a bf16 gradient the optimizer steps on.
inline constexpr double kStepGradCopyBytesPerParam = 4;

// Gradients are kept and reduced in one dtype (the main_grad buffer's).
NESTFAST_HD inline constexpr double grad_bytes_per_param(GradReduce dtype) {
  return dtype == GradReduce::Fp32 ? 4.0 : 2.0;
}
// Bytes per owned parameter of the optimizer's fp32 gradient copy at the step.
NESTFAST_HD inline constexpr double step_grad_copy_bytes_per_param(GradReduce dtype) {
  return dtype == GradReduce::Fp32 ? 0.0 : kStepGradCopyBytesPerParam;
}
// Bytes the optimizer step streams through HBM per parameter it owns, on
// Megatron-LM's mixed-precision path: un-scale + inf check of the fp32
// grads (read 4, write 4), the grad-norm pass (read 4), the fused update
// (Adam: read grad, master, 2 moments 16, write master, moments 12 = 28;
// SGD: read grad, master 8, write master 4 = 12), the copy to the bf16
// working weights (read 4, write 2) and zeroing the grad buffer (write 4).
inline constexpr double kAdamStepBytesPerParam = 8 + 4 + 28 + 6 + 4;
inline constexpr double kSgdStepBytesPerParam = 8 + 4 + 12 + 6 + 4;
// CUDA context, NCCL buffers and allocator slack held on every device.
inline constexpr double kRuntimeReserveBytes = 2.0 * (1ull << 30);

struct ParamStateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  NESTFAST_HD double total() const { return weights + gradients + optimizer; }
};

// The same with the optimizer given by its state bytes per parameter and the
// gradients by theirs.
NESTFAST_HD inline ParamStateBytes param_state_bytes_of(double params, int group_size, int zero_stage,
                                                        double state_bytes_per_param, double grad_bytes) {
  const double d = group_size;
  ParamStateBytes bytes;
  bytes.weights = params * kWeightBytesPerParam / (zero_stage >= 3 ? d : 1);
  bytes.gradients = params * grad_bytes / (zero_stage >= 2 ? d : 1);
  bytes.optimizer = params * state_bytes_per_param / (zero_stage >= 1 ? d : 1);
  return bytes;
}

inline double optimizer_state_bytes_per_param(Optimizer optimizer) {
  return optimizer == Optimizer::Adam ? kAdamStateBytesPerParam : kSgdStateBytesPerParam;
}

// State of `params` parameters replicated over a data-parallel group of
// `group_size` ranks under `zero_stage`.
ParamStateBytes param_state_bytes(double params, int group_size, int zero_stage, Optimizer optimizer,
                                  GradReduce grads = GradReduce::Fp32);

// Micro-batches whose activations pipeline rank `rank` (0 = first) holds at
// its peak, counted in whole-stage units (so the stash is this times the
// rank's summed per-micro-batch chunk stash):
//   vpp = 1: min(pp - rank, m)                         (1F1B warm-up + 1)
//   vpp > 1: min(2 (pp - rank - 1) + (vpp - 1) pp + 1, m vpp) / vpp
//            (Megatron-LM's interleaved warm-up, in chunk-micro-batches)
double stash_depth(int rank, int pp, int vpp, int micro_batches);

// The same depth when the rank's vpp chunks stash different amounts per
// micro-batch (chunk_stash[c], bytes; an embedding-only or head-only chunk
// stashes little): Megatron-LM's interleaved order is followed step by step
// (schedules.py: warm-up of 2 (pp - rank - 1) + (vpp - 1) pp forward chunks,
// then one forward and one backward per step; forward k runs chunk
// (k / pp) % vpp, backward k chunk vpp - 1 - (k / pp) % vpp), and the peak of
// the stashed bytes is divided by the rank's summed per-micro-batch stash,
// so stash bytes = depth x that sum. Equals stash_depth() for equal chunks
// and for vpp = 1.
double interleaved_stash_depth(int rank, int pp, int vpp, int micro_batches, const std::vector<double>& chunk_stash);

}  // namespace nestfast
