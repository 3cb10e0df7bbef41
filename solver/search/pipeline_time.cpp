#include "solver/search/pipeline_time.hpp"

namespace nestfast {

PipelineTime pipeline_time(int micro_batches, int pp, int vpp, double bottleneck_stage_s, double warmup_p2p_s) {
  PipelineTime time;
  time.steady_s = micro_batches * bottleneck_stage_s;
  time.bubble_s = static_cast<double>(pp - 1) / vpp * bottleneck_stage_s + warmup_p2p_s;
  return time;
}

}  // namespace nestfast
