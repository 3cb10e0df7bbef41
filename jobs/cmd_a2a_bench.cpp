// `nestfast a2a bench`: every algorithm over a size sweep of one workload,
// timed and checked byte for byte by comm/exec's harness, printed the way
// osu_alltoallv prints (header lines start with '#', the first column is the
// size) with nccl-tests-like extra columns.
#include <mpi.h>

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/exec/algo_auto.hpp"
#include "comm/exec/device_staging.hpp"
#include "comm/exec/size_range.hpp"
#include "comm/exec/sweep_point.hpp"
#include "comm/workload/workload.hpp"
#include "gpu/device.hpp"
#include "io/atomic_file/atomic_file.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/cli_lists.hpp"

namespace nestfast::jobs {

namespace {

struct BenchOptions {
  std::vector<std::string> algos = {"fast", "mpi", "pairwise", "fanout"};
  std::string workload = "uniform";
  std::string sizes = "1K:4M";
  int iterations = 20;
  int warmup = 2;
  int virtual_servers = 0;
  std::uint64_t seed = 1;
  bool no_check = false;
  std::string auto_threshold;  // empty: measured
  std::string quantum = "0";
  bool device = false;
  std::string json_path;
};

// Ranks sharing this node's memory, against its cores: more ranks than cores
// makes every time a scheduling measurement, which the header must say.
int ranks_on_this_node() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int size = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

void print_row(const comm::PointResult& point, const comm::Measurement& run, int ranks) {
  const double algbw = run.avg_s > 0 ? static_cast<double>(point.bytes_per_rank) / run.avg_s / 1e9 : 0;
  const double busbw = algbw * (ranks - 1) / ranks;
  const double eff = run.avg_s > 0 ? 100 * point.lower_bound_s / run.avg_s : 0;
  const std::string wrong = run.validated ? std::to_string(run.wrong) : "-";
  const std::string algo = run.algo == "auto" ? "auto:" + run.decision : run.algo;
  std::printf("%-12llu %16.2f %16.2f %16.2f %10d %12.3f %12.3f %8s %12.2f %7.1f %7d  %s\n",
              static_cast<unsigned long long>(point.bytes_per_rank), run.avg_s * 1e6, run.min_s * 1e6,
              run.max_s * 1e6, run.iterations, algbw, busbw, wrong.c_str(), point.lower_bound_s * 1e6, eff,
              run.stages, algo.c_str());
  std::fflush(stdout);
}

nlohmann::json json_row(const comm::PointResult& point, const comm::Measurement& run, int ranks) {
  const double algbw = run.avg_s > 0 ? static_cast<double>(point.bytes_per_rank) / run.avg_s / 1e9 : 0;
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& byte : run.first_bad) bad.push_back({{"src", byte.src}, {"dst", byte.dst}, {"offset", byte.offset}});
  return {{"size", point.bytes_per_rank}, {"algo", run.algo}, {"picked", run.algo == "auto" ? run.decision : run.algo},
          {"avg_us", run.avg_s * 1e6}, {"min_us", run.min_s * 1e6}, {"max_us", run.max_s * 1e6},
          {"iterations", run.iterations}, {"algbw_GBps", algbw}, {"busbw_GBps", algbw * (ranks - 1) / ranks},
          {"validated", run.validated}, {"wrong", run.wrong}, {"first_bad", bad},
          {"lb_us", point.lower_bound_s * 1e6}, {"eff", run.avg_s > 0 ? point.lower_bound_s / run.avg_s : 0},
          {"stages", run.stages}};
}

int run_bench(const BenchOptions& options) {
  if (options.device) comm::require_devices_everywhere(MPI_COMM_WORLD, "--device");
  const std::vector<std::string>& algos = options.algos;
  for (const std::string& name : algos) comm::make_alltoallv(name);  // unknown names fail here, before any measurement
  const comm::WorkloadSpec workload = comm::parse_workload(options.workload);
  std::vector<std::uint64_t> sizes = comm::parse_size_range(options.sizes, "--sizes");
  const comm::ServerTopology topology(MPI_COMM_WORLD, options.virtual_servers);
  const int ranks = topology.ranks();
  const bool root = topology.rank() == 0;
  const bool from_file = workload.kind == comm::WorkloadSpec::Kind::file;
  if (from_file) sizes = {0};  // the file fixes the sizes

  comm::AlgorithmSettings settings;
  settings.fast_quantum = comm::parse_size(options.quantum, "--quantum", true);
  std::string auto_note;
  if (std::find(algos.begin(), algos.end(), "auto") != algos.end()) {
    if (options.auto_threshold.empty()) {
      const comm::AutoThreshold measured = comm::measure_auto_threshold(topology);
      settings.auto_threshold_bytes = measured.bytes;
      auto_note = measured.fast_won
                      ? fmt::format("mpi below {} bytes per rank, fast from there (measured on uniform traffic)",
                                    measured.bytes)
                      : fmt::format("mpi below {} bytes per rank (fast never beat mpi up to {} on uniform traffic)",
                                    measured.bytes, measured.largest_measured);
    } else {
      settings.auto_threshold_bytes = comm::parse_size(options.auto_threshold, "--auto-threshold");
      auto_note = fmt::format("mpi below {} bytes per rank, fast from there (--auto-threshold)",
                              settings.auto_threshold_bytes);
    }
  }
  const comm::RankBandwidth bandwidth = comm::measure_rank_bandwidth(topology);
  const int node_ranks = ranks_on_this_node();
  const unsigned cores = std::thread::hardware_concurrency();
  const comm::HarnessOptions harness{.iterations = options.iterations, .warmup = options.warmup,
                                     .validate = !options.no_check, .seed = options.seed,
                                     .device = options.device};

  const comm::ServerMap& map = topology.map();
  if (root) {
    std::printf("# nestfast a2a bench: alltoallv, OSU-style rows with nccl-tests-like columns\n");
    std::printf("# ranks %d, servers %d (%s), gpus per server %d..%d, workload %s, seed %llu\n", ranks,
                map.servers(), options.virtual_servers > 0 ? "virtual" : "shared-memory nodes",
                map.min_gpus_per_server(), map.max_gpus_per_server(), options.workload.c_str(),
                static_cast<unsigned long long>(options.seed));
    std::printf("# rank bandwidth %.3f GB/s (measured: all ranks exchange %s with rank+%d at once, best of 3)\n",
                bandwidth.bytes_per_s / 1e9, comm::format_size(bandwidth.message_bytes).c_str(), bandwidth.shift);
    std::printf("# lb(us): server lower bound at that bandwidth; eff%%: lb / avg; stages: communication rounds\n");
    std::printf("# Size: bytes sent per rank; latencies: the slowest rank's, %d iterations after %d warm-up\n",
                options.iterations, options.warmup);
    std::printf("# #wrong: bytes wrong after one checked exchange (splitmix64 words)%s\n",
                options.no_check ? "; not checked (--no-check)" : "");
    if (!auto_note.empty()) std::printf("# auto: %s\n", auto_note.c_str());
    if (options.device) {
      std::printf("# device buffers (%s): every algorithm staged through pinned host memory, copies timed\n",
                  gpu::backend_name().c_str());
    }
    if (cores > 0 && static_cast<unsigned>(node_ranks) > cores) {
      std::printf("# note: %d ranks share %u cores on this node: times measure scheduling as much as copying;\n"
                  "#       MPI_Alltoallv (mpi) spin-waits, the other algorithms yield the core while they wait\n",
                  node_ranks, cores);
    }
    std::printf("# %-10s %16s %16s %16s %10s %12s %12s %8s %12s %7s %7s  %s\n", "Size", "Avg Latency(us)",
                "Min Latency(us)", "Max Latency(us)", "Iterations", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "lb(us)",
                "eff%", "stages", "algo");
    std::fflush(stdout);
  }

  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t wrong = 0;
  std::string first_bad;
  for (const std::uint64_t size : sizes) {
    const comm::TrafficMatrix demand = comm::make_workload(workload, ranks, size, options.seed);
    const std::uint64_t nominal = from_file ? demand.total() / static_cast<std::uint64_t>(ranks) : size;
    const comm::PointResult point = comm::measure_point(topology, demand, nominal, algos, settings, harness, bandwidth);
    for (const comm::Measurement& run : point.runs) {
      if (root) print_row(point, run, ranks);
      rows.push_back(json_row(point, run, ranks));
      wrong += run.wrong;
      if (first_bad.empty() && run.wrong > 0) {
        first_bad = run.algo + " at size " + std::to_string(point.bytes_per_rank) + ": " +
                    comm::describe_bad_bytes(run.first_bad);
      }
    }
  }

  if (root && !options.json_path.empty()) {
    nlohmann::json doc = {{"ranks", ranks}, {"servers", map.servers()}, {"rank_server", map.rank_server()},
                          {"workload", options.workload}, {"seed", options.seed},
                          {"rank_bandwidth_Bps", bandwidth.bytes_per_s}, {"rows", rows}};
    io::write_file_atomically(options.json_path, doc.dump(2) + '\n');
  }
  if (wrong > 0) {
    if (root) {
      std::printf("# FAILED: %llu wrong bytes; first: %s\n", static_cast<unsigned long long>(wrong), first_bad.c_str());
      std::fprintf(stderr, "nestfast a2a bench: %llu bytes arrived wrong; first: %s\n",
                   static_cast<unsigned long long>(wrong), first_bad.c_str());
    }
    return kExitRuntimeError;
  }
  return 0;
}

}  // namespace

void register_a2a_bench(CLI::App& a2a, CliContext& context) {
  auto* command = a2a.add_subcommand("bench", "OSU-style alltoallv benchmark: fast, mpi, pairwise, fanout, auto");
  auto options = std::make_shared<BenchOptions>();
  add_list_option(*command, "--algos", options->algos, "Comma-separated: fast, mpi, pairwise, fanout, auto")
      ->capture_default_str();
  command->add_option("--workload", options->workload,
                      "uniform | random | zipf:S | hot:K | moe:E,topk,zipf | file:PATH (nccl-tests matrix)")
      ->capture_default_str();
  command->add_option("--sizes", options->sizes, "Bytes sent per rank, MIN:MAX doubling (K, M, G suffixes)")
      ->capture_default_str();
  command->add_option("--iters", options->iterations, "Timed iterations per size and algorithm")
      ->capture_default_str()->check(CLI::PositiveNumber);
  command->add_option("--warmup", options->warmup, "Untimed iterations before them")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  command->add_option("--virtual-servers", options->virtual_servers,
                      "Group consecutive ranks into K servers (0: one server per shared-memory node)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  command->add_option("--seed", options->seed, "Seed of the workload and of the validation words")
      ->capture_default_str();
  command->add_flag("--no-check", options->no_check, "Skip the byte-exact check of the delivered data");
  command->add_option("--auto-threshold", options->auto_threshold,
                      "auto: mpi below this many bytes per rank (default: measured at start)");
  command->add_option("--quantum", options->quantum,
                      "fast: round the server matrix to multiples of this many bytes, K/M/G suffixes (0 = exact)")
      ->capture_default_str();
  command->add_flag("--device", options->device,
                    "GPU buffers on every rank, each algorithm staged through pinned host memory");
  command->add_option("--json", options->json_path, "Also write the rows as JSON to FILE (rank 0)");
  command->callback([options, &context] { context.exit_code = run_bench(*options); });
}

}  // namespace nestfast::jobs
