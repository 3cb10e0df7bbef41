#include "solver/search/memory_model.hpp"

#include <algorithm>

namespace nestfast {

ParamStateBytes param_state_bytes(double params, int group_size, int zero_stage, Optimizer optimizer) {
  const double d = group_size;
  const double state = optimizer == Optimizer::Adam ? kAdamStateBytesPerParam : kSgdStateBytesPerParam;
  ParamStateBytes bytes;
  bytes.weights = params * kWeightBytesPerParam / (zero_stage >= 3 ? d : 1);
  bytes.gradients = params * kGradBytesPerParam / (zero_stage >= 2 ? d : 1);
  bytes.optimizer = params * state / (zero_stage >= 1 ? d : 1);
  return bytes;
}

double stash_depth(int rank, int pp, int vpp, int micro_batches) {
  if (vpp == 1) return std::min(pp - rank, micro_batches);
  const int chunk_microbatches = std::min(2 * (pp - rank - 1) + (vpp - 1) * pp + 1, micro_batches * vpp);
  return static_cast<double>(chunk_microbatches) / vpp;
}

}  // namespace nestfast
