// nestfast-gpu-bench: the device measurements of gpu/device-check.sh, as one
// JSON object on stdout (docs/gpu.md describes the keys).
//  - dp:   every DP instance of a solve sweep (preset model and cluster, full
//          strategy space), solved without a bound by the CPU DP (one thread,
//          then OpenMP) and by the batched kernel (one batch per Pareto
//          round); every device result is compared with the CPU's, bit for bit.
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
#include "io/presets/presets.hpp"
#include "solver/search/search_context.hpp"

namespace {

using nestfast::search::InstanceResult;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool same(const InstanceResult& a, const InstanceResult& b) {
  if (a.feasible != b.feasible || a.iteration_time_s != b.iteration_time_s ||
      a.plan.stages.size() != b.plan.stages.size() || a.stats.transitions != b.stats.transitions) {
    return false;
  }
  for (std::size_t s = 0; s < a.plan.stages.size(); ++s) {
    if (a.plan.stages[s].first_layer != b.plan.stages[s].first_layer ||
        a.plan.stages[s].recompute != b.plan.stages[s].recompute) {
      return false;
    }
  }
  return true;
}

nlohmann::json bench_dp(const std::string& model, const std::string& cluster, int gpus, int gbs, bool device) {
  namespace search = nestfast::search;
  search::SolveProblem problem;
  problem.model = nestfast::io::load_model(model);
  problem.cluster = nestfast::io::load_cluster(cluster);
  problem.gpus = gpus;
  problem.global_batch = gbs;
  const search::StrategySpace space;
  const std::vector<search::DpInstance> instances = search::enumerate_instances(problem, space);
  search::SearchContext context(problem, instances);
  nlohmann::json out = {{"model", model}, {"cluster", cluster}, {"gpus", gpus}, {"gbs", gbs}};
  auto start = std::chrono::steady_clock::now();
  std::vector<search::PreparedInstance> prepared(instances.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (long k = 0; k < static_cast<long>(instances.size()); ++k) {
    prepared[static_cast<std::size_t>(k)] = context.prepare(static_cast<std::size_t>(k));
  }
  std::vector<search::PreparedItem> items;
  for (std::size_t k = 0; k < instances.size(); ++k) {
    items.push_back({&problem, &instances[k], prepared[k].layout.get(), prepared[k].table.get()});
  }
  out["instances"] = instances.size();
  out["prepare_openmp_s"] = seconds_since(start);

  start = std::chrono::steady_clock::now();
  std::vector<InstanceResult> cpu;
  for (const search::PreparedItem& item : items) {
    cpu.push_back(search::solve_prepared(problem, *item.spec, *item.layout, *item.table, search::kDpInfinity, false));
  }
  out["cpu_serial_s"] = seconds_since(start);

  start = std::chrono::steady_clock::now();
  std::vector<InstanceResult> parallel(items.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (long k = 0; k < static_cast<long>(items.size()); ++k) {
    const search::PreparedItem& item = items[static_cast<std::size_t>(k)];
    parallel[static_cast<std::size_t>(k)] =
        search::solve_prepared(problem, *item.spec, *item.layout, *item.table, search::kDpInfinity, false);
  }
  out["cpu_openmp_s"] = seconds_since(start);
  out["openmp_threads"] = omp_get_max_threads();
  std::uint64_t runs = 0;
  for (const InstanceResult& r : cpu) runs += r.stats.dp_runs;
  out["dp_runs"] = runs;

  if (!device) {
    out["device_s"] = nullptr;
    out["device_note"] = "no device";
    return out;
  }
  (void)search::solve_prepared_batch(std::span(items).first(1), search::kDpInfinity, false,
                                     nestfast::gpu::run_dp_batch_on_device);  // context creation, not timed
  start = std::chrono::steady_clock::now();
  const std::vector<InstanceResult> batch =
      search::solve_prepared_batch(items, search::kDpInfinity, false, nestfast::gpu::run_dp_batch_on_device);
  out["device_s"] = seconds_since(start);
  std::size_t mismatches = 0;
  for (std::size_t k = 0; k < items.size(); ++k) mismatches += same(batch[k], cpu[k]) ? 0 : 1;
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
  std::string model = "llama3-70b";
  std::string cluster = "h100-superpod";
  int gpus = 256;
  int gbs = 1024;
  std::uint64_t copy_mib = 256;
  app.add_option("--model", model, "model preset of the DP sweep");
  app.add_option("--cluster", cluster, "cluster preset of the DP sweep");
  app.add_option("--gpus", gpus, "devices of the DP sweep")->check(CLI::Range(1, 1 << 20));
  app.add_option("--gbs", gbs, "global batch of the DP sweep")->check(CLI::Range(1, 1 << 24));
  app.add_option("--copy-mib", copy_mib, "bytes gathered by the copy benchmark, MiB")->check(CLI::Range(1, 65536));
  CLI11_PARSE(app, argc, argv);

  const bool device = nestfast::gpu::device_count() > 0;
  nlohmann::json report = {{"backend", nestfast::gpu::backend_name()}, {"devices", nestfast::gpu::device_count()}};
  report["dp"] = bench_dp(model, cluster, gpus, gbs, device);
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
