#include "solver/cluster/gpu_throughput.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace nestfast {

double matmul_efficiency(const GpuSpec& gpu, double flops) {
  const auto& curve = gpu.matmul_efficiency;
  if (curve.empty()) return 1.0;
  if (flops <= curve.front().flops) return curve.front().efficiency;
  if (flops >= curve.back().flops) return curve.back().efficiency;
  const double x = std::log(flops);
  for (std::size_t i = 1; i < curve.size(); ++i) {
    if (flops <= curve[i].flops) {
      const double x0 = std::log(curve[i - 1].flops);
      const double x1 = std::log(curve[i].flops);
      const double w = (x - x0) / (x1 - x0);
      return curve[i - 1].efficiency + w * (curve[i].efficiency - curve[i - 1].efficiency);
    }
  }
  return curve.back().efficiency;
}

double matmul_time(const GpuSpec& gpu, double flops) {
  if (flops <= 0) return 0;
  return flops / (gpu.peak_flops_bf16 * matmul_efficiency(gpu, flops));
}

double hbm_time(const GpuSpec& gpu, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / (gpu.hbm_bandwidth_Bps * gpu.hbm_efficiency);
}

double fused_attention_time(const GpuSpec& gpu, double flops, bool backward) {
  if (flops <= 0) return 0;
  const double efficiency =
      backward ? gpu.fused_attention_efficiency_backward : gpu.fused_attention_efficiency_forward;
  return flops / (gpu.peak_flops_bf16 * efficiency);
}

namespace {

void require(bool ok, const std::string& owner, const std::string& key, double value, const char* rule) {
  if (!ok || std::isnan(value))
    throw std::invalid_argument(owner + ": " + key + " = " + std::to_string(value) + " (must be " + rule + ")");
}

}  // namespace

void validate_gpu(const GpuSpec& gpu) {
  const std::string owner = "gpu '" + gpu.name + "'";
  require(gpu.hbm_bytes > 0, owner, "hbm_bytes", static_cast<double>(gpu.hbm_bytes), "> 0");
  require(std::isfinite(gpu.hbm_bandwidth_Bps) && gpu.hbm_bandwidth_Bps > 0, owner, "hbm_bandwidth_Bps",
          gpu.hbm_bandwidth_Bps, "> 0 and finite");
  require(std::isfinite(gpu.peak_flops_bf16) && gpu.peak_flops_bf16 > 0, owner, "peak_flops_bf16",
          gpu.peak_flops_bf16, "> 0 and finite");
  require(gpu.hbm_efficiency > 0 && gpu.hbm_efficiency <= 1, owner, "hbm_efficiency", gpu.hbm_efficiency,
          "in (0, 1]");
  require(gpu.fused_attention_efficiency_forward > 0 && gpu.fused_attention_efficiency_forward <= 1, owner,
          "fused_attention_efficiency.forward", gpu.fused_attention_efficiency_forward, "in (0, 1]");
  require(gpu.fused_attention_efficiency_backward > 0 && gpu.fused_attention_efficiency_backward <= 1, owner,
          "fused_attention_efficiency.backward", gpu.fused_attention_efficiency_backward, "in (0, 1]");
  require(std::isfinite(gpu.kernel_overhead_s) && gpu.kernel_overhead_s >= 0, owner, "kernel_overhead_s",
          gpu.kernel_overhead_s, ">= 0 and finite");
  require(gpu.overlap_slowdown >= 0 && gpu.overlap_slowdown < 1, owner, "overlap_slowdown", gpu.overlap_slowdown,
          "in [0, 1)");
  for (std::size_t i = 0; i < gpu.matmul_efficiency.size(); ++i) {
    const EfficiencyPoint& point = gpu.matmul_efficiency[i];
    const std::string key = "matmul_efficiency[" + std::to_string(i) + "]";
    require(std::isfinite(point.flops) && point.flops > 0, owner, key + ".flops", point.flops, "> 0 and finite");
    require(point.efficiency > 0 && point.efficiency <= 1, owner, key + ".efficiency", point.efficiency,
            "in (0, 1]");
    if (i > 0)
      require(point.flops > gpu.matmul_efficiency[i - 1].flops, owner, key + ".flops", point.flops,
              "greater than the previous point's");
  }
}

void validate_cluster(const ClusterSpec& cluster) {
  validate_gpu(cluster.gpu);
  const std::string owner = "cluster '" + cluster.name + "'";
  if (cluster.levels.empty()) throw std::invalid_argument(owner + ": no network levels");
  for (std::size_t l = 0; l < cluster.levels.size(); ++l) {
    const NetworkLevel& level = cluster.levels[l];
    const std::string key = "levels[" + std::to_string(l) + "] (" + level.name + ")";
    const bool outermost = l + 1 == cluster.levels.size();
    require(level.group_size >= 1 || (outermost && level.group_size == 0), owner, key + ".group_size",
            level.group_size, outermost ? ">= 1, or 0 = unbounded" : ">= 1");
    require(std::isfinite(level.bandwidth_Bps) && level.bandwidth_Bps > 0, owner, key + ".bandwidth_Bps",
            level.bandwidth_Bps, "> 0 and finite");
    require(std::isfinite(level.latency_s) && level.latency_s >= 0, owner, key + ".latency_s", level.latency_s,
            ">= 0 and finite");
    require(std::isfinite(level.oversubscription) && level.oversubscription >= 1, owner,
            key + ".oversubscription", level.oversubscription, ">= 1");
    require(level.efficiency > 0 && level.efficiency <= 1, owner, key + ".efficiency", level.efficiency, "in (0, 1]");
  }
}

}  // namespace nestfast
