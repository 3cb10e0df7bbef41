#include "solver/search/memory_model.hpp"

#include <algorithm>

namespace nestfast {

ParamStateBytes param_state_bytes(double params, int group_size, int zero_stage, Optimizer optimizer) {
  return param_state_bytes_of(params, group_size, zero_stage, optimizer_state_bytes_per_param(optimizer));
}

double stash_depth(int rank, int pp, int vpp, int micro_batches) {
  if (vpp == 1) return std::min(pp - rank, micro_batches);
  const int chunk_microbatches = std::min(2 * (pp - rank - 1) + (vpp - 1) * pp + 1, micro_batches * vpp);
  return static_cast<double>(chunk_microbatches) / vpp;
}

}  // namespace nestfast
