#include "solver/search/memory_model.hpp"

#include <algorithm>

#include "solver/search/pipeline_time.hpp"

namespace nestfast {

ParamStateBytes param_state_bytes(double params, int group_size, int zero_stage, Optimizer optimizer,
                                  GradReduce grads) {
  return param_state_bytes_of(params, group_size, zero_stage, optimizer_state_bytes_per_param(optimizer),
                              grad_bytes_per_param(grads));
}

double stash_depth(int rank, int pp, int vpp, int micro_batches) {
  if (vpp == 1) return std::min(pp - rank, micro_batches);
  const int chunk_microbatches = std::min(interleaved_warmup_chunks(pp, vpp, rank) + 1, micro_batches * vpp);
  return static_cast<double>(chunk_microbatches) / vpp;
}

double interleaved_stash_depth(int rank, int pp, int vpp, int micro_batches, const std::vector<double>& chunk_stash) {
  double per_microbatch = 0;
  for (double bytes : chunk_stash) per_microbatch += bytes;
  if (vpp == 1 || per_microbatch <= 0) return stash_depth(rank, pp, vpp, micro_batches);
  const int total = micro_batches * vpp;
  const int warmup = std::min(interleaved_warmup_chunks(pp, vpp, rank), total);
  const auto forward_chunk = [&](int k) { return chunk_stash[static_cast<std::size_t>((k / pp) % vpp)]; };
  const auto backward_chunk = [&](int k) { return chunk_stash[static_cast<std::size_t>(vpp - 1 - (k / pp) % vpp)]; };
  double held = 0;
  double peak = 0;
  for (int k = 0; k < warmup; ++k) held += forward_chunk(k);
  peak = held;
  for (int step = 0; step + warmup < total; ++step) {
    held += forward_chunk(warmup + step);
    peak = std::max(peak, held);
    held -= backward_chunk(step);
  }
  return peak / per_microbatch;
}

}  // namespace nestfast
