// nestfast-gpu-bench: the device measurements of gpu/device-check.sh, as one
// JSON object on stdout (docs/gpu.md describes the keys).
//  - dp:   random flat DP instances solved by the CPU DP (one thread, then
//          OpenMP) and by the batched kernel; every device result is compared
//          with the CPU's, bit for bit.
//  - copy: a device copy plan gathering many scattered pieces, its bandwidth
//          and a byte-exact check.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <vector>

#include "gpu/batched_dp.hpp"
#include "gpu/buffers.hpp"
#include "gpu/device.hpp"
#include "gpu/pack.hpp"
#include "gpu/random_dp_instances.hpp"

namespace {

using nestfast::gpu::FlatDpInstance;
using nestfast::gpu::FlatDpResult;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool same(const FlatDpResult& a, const FlatDpResult& b) {
  return a.bottleneck == b.bottleneck && a.boundaries == b.boundaries && a.counters.states == b.counters.states &&
         a.counters.transitions == b.counters.transitions;
}

nlohmann::json bench_dp(int count, int max_layers, int max_stages, bool device) {
  std::mt19937 random(42);
  std::vector<FlatDpInstance> instances;
  for (int k = 0; k < count; ++k) instances.push_back(nestfast::gpu::random_flat_dp_instance(random, max_layers, max_stages));
  nlohmann::json out = {{"instances", count}, {"max_layers", max_layers}, {"max_stages", max_stages}};

  auto start = std::chrono::steady_clock::now();
  std::vector<FlatDpResult> cpu(instances.size());
  for (std::size_t k = 0; k < instances.size(); ++k) cpu[k] = nestfast::gpu::solve_flat_dp_cpu(instances[k]);
  out["cpu_serial_s"] = seconds_since(start);

  start = std::chrono::steady_clock::now();
  std::vector<FlatDpResult> parallel(instances.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (long k = 0; k < static_cast<long>(instances.size()); ++k) {
    parallel[static_cast<std::size_t>(k)] = nestfast::gpu::solve_flat_dp_cpu(instances[static_cast<std::size_t>(k)]);
  }
  out["cpu_openmp_s"] = seconds_since(start);
  out["openmp_threads"] = omp_get_max_threads();

  if (!device) {
    out["device_s"] = nullptr;
    out["device_note"] = "no device";
    return out;
  }
  (void)nestfast::gpu::solve_flat_dp_batch(std::span(instances).first(1));  // context creation, not timed
  start = std::chrono::steady_clock::now();
  const std::vector<FlatDpResult> batch = nestfast::gpu::solve_flat_dp_batch(instances);
  out["device_s"] = seconds_since(start);
  std::size_t mismatches = 0;
  for (std::size_t k = 0; k < instances.size(); ++k) mismatches += same(batch[k], cpu[k]) ? 0 : 1;
  out["device_mismatches"] = mismatches;
  out["device_speedup_vs_openmp"] = out["cpu_openmp_s"].get<double>() / out["device_s"].get<double>();
  return out;
}

nlohmann::json bench_copy(std::uint64_t total_bytes, std::uint64_t piece_bytes) {
  const std::uint64_t pieces = total_bytes / piece_bytes;
  std::mt19937 random(7);
  std::vector<nestfast::gpu::ByteRange> ranges;
  for (std::uint64_t k = 0; k < pieces; ++k) ranges.push_back({k * piece_bytes, piece_bytes});
  std::shuffle(ranges.begin(), ranges.end(), random);
  const std::vector<nestfast::gpu::CopyRange> copies = nestfast::gpu::pack_copies(ranges);
  std::vector<unsigned char> host(pieces * piece_bytes);
  for (std::size_t k = 0; k < host.size(); ++k) host[k] = static_cast<unsigned char>(k * 2654435761u >> 13);
  nestfast::gpu::DeviceBuffer src(host.size()), dst(host.size());
  src.copy_from_host(host.data(), host.size());
  const nestfast::gpu::DeviceCopyPlan plan(copies, host.size(), host.size());
  plan.run(src.data(), dst.data());  // warm-up
  constexpr int kRepeats = 20;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRepeats; ++r) plan.run(src.data(), dst.data());
  const double per_run = seconds_since(start) / kRepeats;
  std::vector<unsigned char> packed(host.size()), expected(host.size());
  dst.copy_to_host(packed.data(), packed.size());
  nestfast::gpu::copy_ranges_host(host.data(), host.size(), expected.data(), expected.size(), copies);
  std::uint64_t wrong = 0;
  for (std::size_t k = 0; k < packed.size(); ++k) wrong += packed[k] != expected[k] ? 1 : 0;
  // Read + write of every byte.
  return {{"bytes", host.size()}, {"piece_bytes", piece_bytes}, {"pieces", pieces}, {"seconds_per_run", per_run},
          {"GBps", 2.0 * static_cast<double>(host.size()) / per_run / 1e9}, {"wrong_bytes", wrong}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("nestfast-gpu-bench: batched DP and copy-plan timings for gpu/device-check.sh");
  int instances = 20000;
  int max_layers = 130;
  int max_stages = 16;
  std::uint64_t copy_mib = 256;
  app.add_option("--instances", instances, "random DP instances")->check(CLI::Range(1, 10000000));
  app.add_option("--max-layers", max_layers, "layers per instance, at most")->check(CLI::Range(1, 2000));
  app.add_option("--max-stages", max_stages, "pipeline stages per instance, at most")->check(CLI::Range(1, 512));
  app.add_option("--copy-mib", copy_mib, "bytes gathered by the copy benchmark, MiB")->check(CLI::Range(1, 65536));
  CLI11_PARSE(app, argc, argv);

  const bool device = nestfast::gpu::device_count() > 0;
  nlohmann::json report = {{"backend", nestfast::gpu::backend_name()}, {"devices", nestfast::gpu::device_count()}};
  report["dp"] = bench_dp(instances, max_layers, max_stages, device);
  if (device) {
    report["copy"] = nlohmann::json::array();
    for (std::uint64_t piece : {std::uint64_t{4096}, std::uint64_t{65536}, std::uint64_t{1} << 20}) {
      report["copy"].push_back(bench_copy(copy_mib << 20, piece));
    }
  }
  std::cout << report.dump(2) << "\n";
  const bool dp_ok = !device || report["dp"]["device_mismatches"].get<std::size_t>() == 0;
  bool copy_ok = true;
  if (device) {
    for (const auto& row : report["copy"]) copy_ok = copy_ok && row["wrong_bytes"].get<std::uint64_t>() == 0;
  }
  return dp_ok && copy_ok ? 0 : 1;
}
