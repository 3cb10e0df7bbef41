#include "io/presets/preset_summary.hpp"

#include <fmt/format.h>

namespace nestfast::io {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string preset_summary(const ModelSpec& model) {
  std::string summary = fmt::format("{} layers, hidden {}, ffn {}, heads {}", model.num_layers, model.hidden,
                                    model.ffn_hidden, model.heads);
  if (model.kv_heads != model.heads) summary += fmt::format(" (kv {})", model.kv_heads);
  summary += fmt::format(", vocab {}, seq {}, {}", model.vocab, model.seq_len,
                         model.mlp == MlpKind::Swiglu ? "swiglu" : "gelu");
  if (model.moe.enabled()) {
    summary += fmt::format(", MoE {} x {} top-{}", model.moe.num_experts, model.moe.expert_ffn_hidden,
                           model.moe.top_k);
    if (model.moe.shared_experts > 0) summary += fmt::format(" +{} shared", model.moe.shared_experts);
  }
  return summary;
}

std::string preset_summary(const GpuSpec& gpu) {
  std::string summary = fmt::format("{:g} GiB at {:g} TB/s, {:g} TFLOPS bf16", static_cast<double>(gpu.hbm_bytes) / kGiB,
                                    gpu.hbm_bandwidth_Bps / 1e12, gpu.peak_flops_bf16 / 1e12);
  if (gpu.peak_flops_fp8 > 0) summary += fmt::format(", {:g} fp8", gpu.peak_flops_fp8 / 1e12);
  return summary;
}

std::string preset_summary(const ClusterSpec& cluster) {
  std::string summary = fmt::format("{} ({:g} GiB)", cluster.gpu.name, static_cast<double>(cluster.gpu.hbm_bytes) / kGiB);
  for (const auto& level : cluster.levels) {
    const std::string size = level.group_size == 0 ? "*" : std::to_string(level.group_size);
    summary += fmt::format("; {} x{} {:g} GB/s", level.name, size, level.bandwidth_Bps / 1e9);
    if (level.oversubscription > 1) summary += fmt::format(" {:g}:1", level.oversubscription);
  }
  if (cluster.deepep != DeepEpSupport::None) summary += fmt::format("; DeepEP {}", to_string(cluster.deepep));
  return summary;
}

}  // namespace nestfast::io
