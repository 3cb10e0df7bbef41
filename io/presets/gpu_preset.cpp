// jobs/presets/gpus/*.toml -> GpuSpec. The file speaks datasheet units
// (GiB, TB/s, TFLOPS, GFLOP); they become bytes, bytes/s and FLOP/s here.
#include <fmt/format.h>

#include <cmath>

#include "io/presets/decimal_scale.hpp"
#include "io/presets/preset_readers.hpp"

namespace nestfast::io {

namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
// Far above any device, far below 2^64 bytes: rejects typos in the exponent.
constexpr double kMaxHbmGiB = 1024.0 * 1024.0;

double read_fraction(const TomlTableReader& table, std::string_view key) {
  const double value = table.number(key, Bound::Positive);
  if (value > 1) table.fail(key, fmt::format("must be a fraction in (0, 1], got {}", value));
  return value;
}

std::vector<EfficiencyPoint> read_efficiency_curve(const TomlTableReader& gpu) {
  std::vector<EfficiencyPoint> curve;
  const auto points = gpu.table_array("matmul_efficiency");
  for (std::size_t index = 0; index < points.size(); ++index) {
    const TomlTableReader point(*points[index], gpu.file(),
                                fmt::format("{}[{}]", gpu.key_path("matmul_efficiency"), index),
                                {"gflop", "efficiency"});
    const double flops = decimal_scaled(point.number("gflop", Bound::Positive), 9);
    if (!curve.empty() && flops <= curve.back().flops) {
      point.fail("gflop", "must increase from one point to the next");
    }
    curve.push_back({flops, read_fraction(point, "efficiency")});
  }
  return curve;
}

}  // namespace

std::uint64_t hbm_bytes_from_GiB(const TomlTableReader& table, std::string_view key) {
  const double gib = table.number(key, Bound::Positive);
  if (gib > kMaxHbmGiB) table.fail(key, fmt::format("{} GiB is implausibly large", gib));
  return static_cast<std::uint64_t>(std::llround(gib * kBytesPerGiB));
}

GpuSpec read_gpu_preset(const PresetFile& file) {
  const toml::table document = parse_toml_file(file.path);
  const TomlTableReader root(document, file.path, "", {"gpu"});
  const TomlTableReader table(root.table("gpu"), file.path, "gpu",
                              {"name", "source", "hbm_GiB", "hbm_bandwidth_TBps", "peak_tflops_bf16",
                               "peak_tflops_fp8", "peak_tflops_fp32", "hbm_efficiency", "matmul_efficiency",
                               "fused_attention_efficiency", "kernel_overhead_us", "overlap_slowdown"});
  GpuSpec gpu;
  auto header = read_preset_header(table, file);
  gpu.name = std::move(header.name);
  gpu.source = std::move(header.source);
  gpu.hbm_bytes = hbm_bytes_from_GiB(table, "hbm_GiB");
  gpu.hbm_bandwidth_Bps = decimal_scaled(table.number("hbm_bandwidth_TBps", Bound::Positive), 12);
  gpu.peak_flops_bf16 = decimal_scaled(table.number("peak_tflops_bf16", Bound::Positive), 12);
  gpu.peak_flops_fp8 = decimal_scaled(table.number("peak_tflops_fp8", Bound::NonNegative), 12);
  gpu.peak_flops_fp32 = decimal_scaled(table.number("peak_tflops_fp32", Bound::Positive), 12);
  gpu.hbm_efficiency = read_fraction(table, "hbm_efficiency");
  gpu.matmul_efficiency = read_efficiency_curve(table);
  const TomlTableReader attention(table.table("fused_attention_efficiency"), file.path,
                                  table.key_path("fused_attention_efficiency"), {"forward", "backward"});
  gpu.fused_attention_efficiency_forward = read_fraction(attention, "forward");
  gpu.fused_attention_efficiency_backward = read_fraction(attention, "backward");
  gpu.kernel_overhead_s = decimal_scaled(table.number("kernel_overhead_us", Bound::NonNegative), -6);
  gpu.overlap_slowdown = table.number("overlap_slowdown", Bound::NonNegative);
  if (gpu.overlap_slowdown >= 1) {
    table.fail("overlap_slowdown", fmt::format("must be a fraction in [0, 1), got {}", gpu.overlap_slowdown));
  }
  return gpu;
}

}  // namespace nestfast::io
