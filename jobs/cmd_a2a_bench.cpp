// `nestfast a2a bench`: every algorithm over a size sweep of one workload,
// timed and checked byte for byte by comm/exec's harness, printed the way
// osu_alltoallv prints (header lines start with '#', the first column is the
// size) with nccl-tests-like extra columns.
#include <mpi.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/exec/algo_auto.hpp"
#include "comm/exec/communicator.hpp"
#include "comm/exec/device_staging.hpp"
#include "comm/exec/size_range.hpp"
#include "comm/exec/bandwidth_probe.hpp"
#include "comm/exec/stage_cost.hpp"
#include "comm/exec/sweep_point.hpp"
#include "io/presets/presets.hpp"
#include "comm/workload/matrix_file.hpp"
#include "comm/workload/workload.hpp"
#include "gpu/device.hpp"
#include "io/atomic_file/atomic_file.hpp"
#include "io/host/files.hpp"
#include "io/host/memory.hpp"
#include "jobs/catalog/agreement.hpp"
#include "jobs/cli_agreement.hpp"
#include "jobs/cli_checks.hpp"
#include "io/record_json/alltoallv_json.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/cli_lists.hpp"
#include "jobs/traffic_price.hpp"
#include "jobs/workload_input.hpp"
#include "nestfast_version.hpp"

namespace nestfast::jobs {

namespace {

struct BenchOptions {
  std::vector<std::string> algos = {"fast", "mpi", "pairwise", "fanout"};
  WorkloadOption workload;
  std::string sizes = "1K:4M";
  int iterations = 20;
  int warmup = 2;
  int virtual_servers = 0;
  int nics_per_server = 0;
  double nic_GBps = 0;
  std::string cluster;
  bool probe = false;
  std::uint64_t seed = 1;
  bool no_check = false;
  std::string auto_threshold;  // empty: measured
  std::string quantum = "0";
  std::string fast_chunk = "0";
  bool device = false;
  std::string json_path;
  std::string timeline_path;
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

std::string fixed_or_dash(bool known, double value, const char* format) {
  return known ? fmt::format(fmt::runtime(format), value) : std::string("-");
}

// One OSU-style row; lb and eff are "-" where there is no bound or an
// iteration beat it (efficiency_pct NaN), pred where there is no --cluster.
void print_row(const comm::ValidationResult& row) {
  const std::string wrong = row.validated ? std::to_string(row.wrong_bytes) : "-";
  const std::string algo = row.algo == "auto" ? "auto:" + row.picked : row.algo;
  const bool bounded = row.lower_bound_us > 0;
  std::printf("%-12llu %16.2f %16.2f %16.2f %10d %12.3f %12.3f %8s %12s %7s %7d %12s  %s\n",
              static_cast<unsigned long long>(row.bytes_per_rank), row.time_avg_us, row.time_min_us, row.time_max_us,
              row.iterations, row.algbw_GBps, row.busbw_GBps, wrong.c_str(),
              fixed_or_dash(bounded, row.lower_bound_us, "{:.2f}").c_str(),
              fixed_or_dash(bounded && std::isfinite(row.efficiency_pct), row.efficiency_pct, "{:.1f}").c_str(),
              row.stages, fixed_or_dash(row.predicted_us > 0, row.predicted_us, "{:.2f}").c_str(), algo.c_str());
  std::fflush(stdout);
}

// The rates the bound rests on: --nic-GBps (per NIC), else the --cluster
// preset's per-GPU rates; none declared: no bound.
comm::LinkRates declared_rates(const BenchOptions& options, const std::optional<ClusterSpec>& cluster,
                               const comm::ServerMap& map, std::string& source) {
  comm::LinkRates rates;
  if (cluster) {
    const double gpu_nic = cluster->levels.size() > 1 ? cluster->levels[1].bandwidth_Bps : 0;
    const double gpu_scaleup = cluster->levels.empty() ? 0 : cluster->levels.front().bandwidth_Bps;
    rates = comm::rates_from_gpu(gpu_nic, gpu_scaleup, map);
    source = "cluster " + cluster->name;
  }
  if (options.nic_GBps > 0) {
    rates.nic_Bps = options.nic_GBps * 1e9;
    source = "--nic-GBps";
  }
  return rates;
}

// Every rank's stage times of one run, gathered on rank 0 (empty elsewhere):
// [{"rank", "server", "stages": [{"stage", "granted", ...}]}].
nlohmann::json gather_timeline(const comm::ServerTopology& topology, const comm::Measurement& run) {
  constexpr int kFields = 6;
  std::vector<double> mine;
  for (const comm::StageTimes& t : run.stage_times) {
    mine.insert(mine.end(), {static_cast<double>(t.stage), t.granted, t.sent, t.send_done, t.grant_given, t.arrived});
  }
  const int ranks = topology.ranks();
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(static_cast<std::size_t>(ranks), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, topology.comm());
  for (int r = 1; r < ranks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<double> all(topology.rank() == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, topology.comm());
  nlohmann::json out = nlohmann::json::array();
  if (topology.rank() != 0) return out;
  auto seconds = [](double value) { return value < 0 ? nlohmann::json(nullptr) : nlohmann::json(value); };
  for (int r = 0; r < ranks; ++r) {
    nlohmann::json stages = nlohmann::json::array();
    for (int i = displs[r]; i < displs[r] + counts[r]; i += kFields) {
      stages.push_back({{"stage", static_cast<int>(all[i])}, {"granted_s", seconds(all[i + 1])}, {"sent_s", seconds(all[i + 2])},
                        {"send_done_s", seconds(all[i + 3])}, {"grant_given_s", seconds(all[i + 4])},
                        {"arrived_s", seconds(all[i + 5])}});
    }
    out.push_back({{"rank", r}, {"server", topology.map().server_of(r)}, {"stages", stages}});
  }
  return out;
}

// Bytes one rank holds for an exchange: its send and receive buffers, and
// as much again as the larger of them for an algorithm's staging.
std::uint64_t buffer_bytes(const comm::TrafficMatrix& demand, int rank) {
  const std::uint64_t send = demand.row_sum(rank);
  const std::uint64_t receive = demand.col_sum(rank);
  return send + receive + std::max(send, receive);
}

int run_bench(const BenchOptions& options) {
  const MPI_Comm world = MPI_COMM_WORLD;
  const std::vector<std::string>& algos = options.algos;
  // Everything the command line and the files say is checked on every rank
  // before any measurement, and the ranks agree on it (one line, no hang).
  comm::WorkloadSpec workload;
  comm::TrafficMatrix file_demand;
  std::vector<std::uint64_t> sizes;
  comm::AlgorithmSettings settings;
  agree(world, [&] {
    for (const std::string& name : algos) comm::make_alltoallv(name);  // unknown names fail here
    workload = load_workload(options.workload);
    // A matrix file is checked (and described in the header) before any measurement.
    if (workload.kind == comm::WorkloadSpec::Kind::file) {
      file_demand = comm::make_workload(workload, comm::size_of(world), 0, options.seed);
    }
    sizes = comm::parse_size_range(options.sizes, "--sizes");
    if (workload.kind != comm::WorkloadSpec::Kind::file) {
      for (const std::uint64_t size : sizes) comm::check_bytes_per_rank(comm::size_of(world), size);
    }
    settings.fast_quantum = comm::parse_size(options.quantum, "--quantum", true);
    settings.fast_chunk_bytes = comm::parse_size(options.fast_chunk, "--fast-chunk", true);
    if (!options.auto_threshold.empty()) {
      settings.auto_threshold_bytes = comm::parse_size(options.auto_threshold, "--auto-threshold");
    }
    if (comm::rank_of(world) == 0 && !options.json_path.empty()) io::check_output_target(options.json_path, "--json");
    if (comm::rank_of(world) == 0 && !options.timeline_path.empty()) {
      io::check_output_target(options.timeline_path, "--timeline");
    }
  });
  if (options.device) comm::require_devices_everywhere(world, "--device");
  const comm::ServerTopology topology(world, options.virtual_servers, options.nics_per_server);
  const int ranks = topology.ranks();
  const bool root = topology.rank() == 0;
  const bool from_file = workload.kind == comm::WorkloadSpec::Kind::file;
  if (from_file) sizes = {0};  // the file fixes the sizes

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
      auto_note = fmt::format("mpi below {} bytes per rank, fast from there (--auto-threshold)",
                              settings.auto_threshold_bytes);
    }
  }
  std::string rates_source;
  std::optional<ClusterSpec> cluster;
  if (!options.cluster.empty()) cluster = io::load_cluster(options.cluster);
  const comm::LinkRates rates = declared_rates(options, cluster, topology.map(), rates_source);
  comm::BandwidthProbe probe;
  if (options.probe) probe = comm::probe_rank_bandwidth(topology);
  // fast's alpha: its measured per-stage cost at the declared NIC rate (without a rate, stages count as free).
  double stage_cost_s = 0;
  const bool runs_fast = std::any_of(algos.begin(), algos.end(), [](const std::string& a) { return a == "fast" || a == "auto"; });
  if (runs_fast && rates.nic_Bps > 0) {
    stage_cost_s = comm::measure_fast_stage_cost(topology);
    settings.fast_stage_cost_bytes = static_cast<std::uint64_t>(std::llround(stage_cost_s * rates.nic_Bps));
  }
  const int node_ranks = ranks_on_this_node();
  const unsigned cores = std::thread::hardware_concurrency();
  const comm::HarnessOptions harness{.iterations = options.iterations, .warmup = options.warmup,
                                     .validate = !options.no_check, .seed = options.seed,
                                     .device = options.device};

  const comm::ServerMap& map = topology.map();
  if (root) {
    // osu_alltoallv's title line (what OSU parsers key on), said to be nestfast's.
    std::printf("# OSU MPI All-to-Allv Personalized Exchange Latency Test v%s (nestfast a2a bench, osu_alltoallv "
                "format; not the OSU benchmark)\n",
                kVersion);
    std::printf("# alltoallv: OSU-style rows with nccl-tests-like columns\n");
    std::printf("# ranks %d, servers %d (%s), gpus per server %d..%d\n", ranks, map.servers(),
                options.virtual_servers > 0 ? "virtual" : "shared-memory nodes", map.min_gpus_per_server(),
                map.max_gpus_per_server());
    std::printf("# %s\n", comm::describe_workload(workload, options.workload.text, file_demand, options.sizes,
                                                  options.seed).c_str());
    const int nics = map.nics_per_server();
    const std::string nic_text = nics > 0 ? fmt::format("{} NIC{} per server", nics, nics == 1 ? "" : "s") : "one NIC per rank";
    if (rates.nic_Bps > 0 && map.servers() > 1) {
      std::printf("# lb(us): server lower bound at %.6g GB/s per NIC and direction (%s), %s; eff%%: lb / avg\n",
                  rates.nic_Bps / 1e9, rates_source.c_str(), nic_text.c_str());
    } else if (rates.scaleup_Bps > 0 && map.servers() == 1) {
      std::printf("# lb(us): per-rank bound at %.6g GB/s scale-up per rank (%s); eff%%: lb / avg\n",
                  rates.scaleup_Bps / 1e9, rates_source.c_str());
    } else {
      std::printf("# lb(us), eff%%: none (no link rate declared: --nic-GBps or --cluster); %s\n", nic_text.c_str());
    }
    if (options.probe) {
      std::printf("# bandwidth probe: %.6g GB/s per rank when all ranks exchange %s with rank+%d at once (best of 3);"
                  " a measurement, not a bound\n",
                  probe.bytes_per_s / 1e9, comm::format_size(probe.message_bytes).c_str(), probe.shift);
    }
    std::printf("# stages: communication rounds (fast: rail stages");
    if (settings.fast_stage_cost_bytes > 0) {
      std::printf(", chosen for the least sum(w) + stages x %.3g us, fast's measured stage cost", stage_cost_s * 1e6);
    }
    std::printf(")\n");
    std::printf("# Size: %s; latencies: the slowest rank's, %d iterations after %d warm-up\n",
                from_file ? "bytes the busiest rank sends or receives (as nccl-tests alltoallv_perf reports a matrix)"
                          : "bytes sent per rank",
                options.iterations, options.warmup);
    std::printf("# #wrong: bytes wrong after one checked exchange (splitmix64 words)%s\n",
                options.no_check ? "; not checked (--no-check)" : "");
    if (!auto_note.empty()) std::printf("# auto: %s\n", auto_note.c_str());
    if (cluster) {
      std::printf("# pred(us): the solver's price of fast on this traffic, the servers read as cluster %s "
                  "(as nestfast run's validation predicts)\n",
                  cluster->name.c_str());
    }
    if (options.device) {
      std::printf("# device buffers (%s): every algorithm staged through pinned host memory, copies timed\n",
                  gpu::backend_name().c_str());
    }
    if (cores > 0 && static_cast<unsigned>(node_ranks) > cores) {
      std::printf("# note: %d ranks share %u cores on this node: times measure scheduling as much as copying;\n"
                  "#       MPI_Alltoallv (mpi) spin-waits, the other algorithms yield the core while they wait\n",
                  node_ranks, cores);
    }
    std::printf("# %-10s %16s %16s %16s %10s %12s %12s %8s %12s %7s %7s %12s  %s\n", "Size", "Avg Latency(us)",
                "Min Latency(us)", "Max Latency(us)", "Iterations", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "lb(us)",
                "eff%", "stages", "pred(us)", "algo");
    std::fflush(stdout);
  }

  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json timelines = nlohmann::json::array();
  std::vector<std::string> violations;
  std::uint64_t wrong = 0;
  std::string first_bad;
  for (const std::uint64_t size : sizes) {
    // Too large a size is refused on every rank, naming it and the limit, before a buffer exists.
    comm::TrafficMatrix demand;
    agree(world, [&] {
      demand = comm::make_workload(workload, ranks, size, options.seed);
      io::require_memory(buffer_bytes(demand, topology.rank()),
                         "a2a bench at " + std::to_string(size) + " bytes per rank: the buffers of rank " +
                             std::to_string(topology.rank()));
    });
    // A matrix's size is its busiest rank's bytes, as nccl-tests reports it.
    const std::uint64_t nominal = from_file ? comm::busiest_rank_bytes(demand) : size;
    comm::PointResult point;
    try {
      point = comm::measure_point(topology, demand, nominal, algos, settings, harness, rates);
    } catch (const std::invalid_argument& error) {
      // comm/exec refuses bad input on every rank alike (disagreeing counts, counts_exchange.hpp).
      throw comm::AgreedError(kExitBadInput, error.what());
    }
    const double predicted_s = cluster ? fast_price_s(*cluster, demand, map) : 0.0;
    for (const comm::Measurement& run : point.runs) {
      comm::ValidationResult row = comm::alltoallv_result(topology, point, run);
      row.predicted_us = predicted_s * 1e6;
      if (root) print_row(row);
      if (row.bound_violated) violations.push_back(run.algo);
      rows.push_back(io::to_json(row, false));
      if (!options.timeline_path.empty()) {
        nlohmann::json timeline = gather_timeline(topology, run);
        if (root) timelines.push_back({{"algo", run.algo}, {"size", point.bytes_per_rank}, {"ranks", std::move(timeline)}});
      }
      wrong += run.wrong;
      if (first_bad.empty() && run.wrong > 0) {
        first_bad = run.algo + " at size " + std::to_string(point.bytes_per_rank) + ": " +
                    comm::describe_bad_bytes(run.first_bad);
      }
    }
  }

  if (root && !violations.empty()) {
    std::printf("# eff%% -: %zu row%s ran faster than the lower bound, so the declared rate is below what the links "
                "really carry; no efficiency is given for them\n",
                violations.size(), violations.size() == 1 ? "" : "s");
  }
  if (root && !options.json_path.empty()) {
    nlohmann::json doc = {{"ranks", ranks}, {"servers", map.servers()}, {"rank_server", map.rank_server()},
                          {"nics_per_server", map.nics_per_server()}, {"workload", options.workload.text},
                          {"seed", options.seed},
                          {"nic_Bps", rates.nic_Bps > 0 ? nlohmann::json(rates.nic_Bps) : nlohmann::json(nullptr)},
                          {"rows", rows}};
    if (options.probe) doc["probe_rank_Bps"] = probe.bytes_per_s;
    io::write_file_atomically(options.json_path, doc.dump(2) + '\n');
  }
  if (root && !options.timeline_path.empty()) io::write_file_atomically(options.timeline_path, timelines.dump(1) + '\n');
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
  add_workload_options(*command, options->workload);
  command->add_option("--sizes", options->sizes, "Bytes sent per rank, MIN:MAX doubling (K, M, G suffixes)")
      ->capture_default_str();
  command->add_option("--iters", options->iterations, "Timed iterations per size and algorithm")
      ->capture_default_str()->check(CLI::PositiveNumber);
  command->add_option("--warmup", options->warmup, "Untimed iterations before them")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  command->add_option("--virtual-servers", options->virtual_servers,
                      "Group consecutive ranks into K servers (0: one server per shared-memory node)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  command->add_option("--nics-per-server", options->nics_per_server,
                      "NICs per server (0: one per rank); fewer NICs than ranks share them (FAST uses that many rails)")
      ->capture_default_str()->check(CLI::NonNegativeNumber)->envname("NESTFAST_NICS_PER_SERVER");
  command->add_option("--nic-GBps", options->nic_GBps,
                      "Line rate of one NIC, GB/s per direction: the lower bound rests on it (0: none declared)")
      ->capture_default_str()->check(CLI::NonNegativeNumber)->envname("NESTFAST_NIC_GBPS");
  command->add_option("--cluster", options->cluster,
                      "Cluster preset whose link rates the lower bound rests on (per GPU: NIC = level 1, scale-up = level 0), and on which pred(us) prices fast");
  command->add_flag("--probe", options->probe,
                    "Also measure and print what each rank's links carry when all ranks stream at once (not a bound)");
  command->add_option("--seed", options->seed, "Seed of the workload and of the validation words")->check(kUnsigned64)
      ->capture_default_str();
  command->add_flag("--no-check", options->no_check, "Skip the byte-exact check of the delivered data");
  command->add_option("--auto-threshold", options->auto_threshold,
                      "auto: mpi below this many bytes per rank (default: measured at start)");
  command->add_option("--quantum", options->quantum,
                      "fast: round the server matrix to multiples of this many bytes, K/M/G suffixes (0 = exact)")
      ->capture_default_str();
  command->add_option("--fast-chunk", options->fast_chunk,
                      "fast: rail data in messages of at most this many bytes (0 = one per stage); at or below the "
                      "MPI's eager limit where its rendezvous serialises two-way exchanges (UCX over TCP: 16K)")
      ->capture_default_str()
      ->envname("NESTFAST_FAST_CHUNK");
  command->add_flag("--device", options->device,
                    "GPU buffers on every rank, each algorithm staged through pinned host memory");
  command->add_option("--json", options->json_path, "Also write the rows as JSON to FILE (rank 0)");
  command->add_option("--timeline", options->timeline_path,
                      "Write every rank's rail stages of the last timed iteration (grant, send, arrival times) as JSON to FILE");
  command->callback([options, &context, command] {
    agree_on_options(MPI_COMM_WORLD, *command);
    context.exit_code = run_bench(*options);
  });
}

}  // namespace nestfast::jobs
