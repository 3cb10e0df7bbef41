#pragma once
// Iteration time of a pipeline from its per-micro-batch bottleneck.
//   1F1B (vpp = 1):        (m + pp - 1) * t_max
//   interleaved (vpp > 1): (m + (pp - 1) / vpp) * t_max
// where t_max = max over pipeline ranks of the rank's summed stage times per
// micro-batch. The bubble is the (pp - 1) / vpp * t_max part.
namespace nestfast {

struct PipelineTime {
  double steady_s = 0;  // m * t_max
  double bubble_s = 0;  // (pp - 1) / vpp * t_max
  double total_s() const { return steady_s + bubble_s; }
};

PipelineTime pipeline_time(int micro_batches, int pp, int vpp, double bottleneck_stage_s);

}  // namespace nestfast
