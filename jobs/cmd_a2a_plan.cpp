// `nestfast a2a plan`: build the FAST schedule of one workload, and on request
// check its invariants (--verify), play it and its peers in the two-tier flow
// model (--simulate), or print the whole plan as JSON (--json) for outside
// tools. Pure computation on rank 0; other ranks (if any) do nothing.
#include <mpi.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "comm/exec/size_range.hpp"
#include "comm/plan/bounds.hpp"
#include "comm/plan/fast_plan.hpp"
#include "comm/plan/verify_plan.hpp"
#include "comm/sim/flow_simulation.hpp"
#include "comm/workload/workload.hpp"
#include "jobs/cli_checks.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/workload_input.hpp"
#include "jobs/cli_lists.hpp"

namespace nestfast::jobs {

namespace {

constexpr int kMostRanks = 16384;            // the demand alone is N^2 x 8 bytes (2 GiB here)
constexpr int kDemandInJsonUpTo = 4096;      // comm.md section 1
constexpr int kTransfersInJsonUpTo = 64;     // per-GPU piece lists grow with ranks x stages
constexpr int kSimulateUpTo = 4096;          // the baselines' schedules hold N^2 messages

struct PlanOptions {
  int servers = 0;
  std::vector<std::string> gpus_per_server = {"8"};
  WorkloadOption workload;
  std::string bytes_per_rank = "32M";
  std::uint64_t seed = 1;
  std::string quantum = "0";
  std::string method = "auto";
  double stage_cost_us = -1;  // < 0: the NIC latency
  bool verify = false;
  bool simulate = false;
  bool json = false;
  bool include_demand = false;
  bool include_transfers = false;
  double nic_GBps = 50;
  double nic_latency_us = 2;
  double scaleup_GBps = 450;
  double scaleup_latency_us = 1;
  double incast_penalty = 0;
};

// "--gpus-per-server 8" with --servers S, or one count per server: "8,8,4".
comm::ServerMap make_map(const PlanOptions& options) {
  std::vector<int> counts;
  for (const std::string& item : options.gpus_per_server) counts.push_back(parse_int(item, "--gpus-per-server", 1, kMostRanks));
  if (counts.empty()) throw std::invalid_argument("--gpus-per-server: no count given");
  if (counts.size() == 1) {
    if (options.servers < 1) throw std::invalid_argument("--servers: need at least 1 server");
    counts.assign(static_cast<std::size_t>(options.servers), counts.front());
  } else if (options.servers != 0 && options.servers != static_cast<int>(counts.size())) {
    throw std::invalid_argument("--servers " + std::to_string(options.servers) + " but --gpus-per-server lists " +
                                std::to_string(counts.size()) + " servers");
  }
  long long ranks = 0;
  for (int count : counts) ranks += count;
  if (ranks > kMostRanks) {
    throw std::invalid_argument("--servers x --gpus-per-server: " + std::to_string(ranks) + " ranks, at most " +
                                std::to_string(kMostRanks) + " are supported");
  }
  std::vector<int> rank_server;
  for (std::size_t s = 0; s < counts.size(); ++s) rank_server.insert(rank_server.end(), static_cast<std::size_t>(counts[s]), static_cast<int>(s));
  return comm::ServerMap(std::move(rank_server));
}

comm::TwoTierModel make_model(const PlanOptions& options) {
  comm::TwoTierModel model;
  model.nic_bandwidth_Bps = options.nic_GBps * 1e9;
  model.nic_latency_s = options.nic_latency_us * 1e-6;
  model.scaleup_bandwidth_Bps = options.scaleup_GBps * 1e9;
  model.scaleup_latency_s = options.scaleup_latency_us * 1e-6;
  model.incast_penalty = options.incast_penalty;
  comm::check_model(model);
  return model;
}

nlohmann::json square(const std::vector<std::uint64_t>& flat, int size) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < size; ++i) {
    rows.push_back(std::vector<std::uint64_t>(flat.begin() + static_cast<std::ptrdiff_t>(i) * size,
                                              flat.begin() + static_cast<std::ptrdiff_t>(i + 1) * size));
  }
  return rows;
}

nlohmann::json pieces_json(const comm::RankSchedule& schedule, const comm::Transfer& transfer) {
  nlohmann::json pieces = nlohmann::json::array();
  for (std::uint32_t p = transfer.first_piece; p < transfer.first_piece + transfer.piece_count; ++p) {
    const comm::Piece& piece = schedule.pieces[p];
    pieces.push_back({piece.src, piece.dst, piece.offset, piece.length});
  }
  return pieces;
}

// What each GPU sends, step by step; the receive side is the mirror image.
nlohmann::json transfers_json(const comm::FastPlan& plan) {
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < plan.ranks(); ++r) {
    const comm::RankSchedule schedule = comm::rank_schedule(plan, r);
    auto list = [&](const std::vector<comm::Transfer>& transfers) {
      nlohmann::json out = nlohmann::json::array();
      for (const comm::Transfer& t : transfers) out.push_back({{"to", t.peer}, {"bytes", t.bytes}, {"pieces", pieces_json(schedule, t)}});
      return out;
    };
    nlohmann::json rail = nlohmann::json::array(), forward = nlohmann::json::array();
    for (std::size_t k = 0; k < plan.stage_count(); ++k) {
      const comm::Transfer& send = schedule.rail_sends[k];
      if (send.peer >= 0) rail.push_back({{"stage", k}, {"to", send.peer}, {"bytes", send.bytes}, {"pieces", pieces_json(schedule, send)}});
      for (std::uint32_t f = schedule.forward_send_begin[k]; f < schedule.forward_send_begin[k + 1]; ++f) {
        const comm::Transfer& t = schedule.forward_sends[f];
        forward.push_back({{"stage", k}, {"to", t.peer}, {"bytes", t.bytes}, {"pieces", pieces_json(schedule, t)}});
      }
    }
    ranks.push_back({{"rank", r}, {"balance", list(schedule.balance_sends)}, {"intrinsic", list(schedule.intrinsic_sends)},
                     {"rail", rail}, {"forward", forward}});
  }
  return ranks;
}

const char* method_name(comm::StageMethod method) {
  switch (method) {
    case comm::StageMethod::birkhoff: return "birkhoff";
    case comm::StageMethod::cover: return "cover";
    case comm::StageMethod::automatic: break;
  }
  return "auto";
}

struct Simulation {
  comm::Bounds bounds;
  std::vector<comm::SimulatedAlgorithm> pipelined, synchronous;
};

Simulation simulate(const comm::FastPlan& plan, comm::TwoTierModel model) {
  Simulation out;
  out.bounds = comm::lower_bounds(plan.demand, plan.map, model);
  model.step_synchronous = false;
  out.pipelined = comm::simulate_all(plan, model);
  model.step_synchronous = true;
  out.synchronous = comm::simulate_all(plan, model);
  return out;
}

int run_plan(const PlanOptions& options) {
  const comm::ServerMap map = make_map(options);
  if (options.simulate && map.ranks() > kSimulateUpTo) {
    throw std::invalid_argument("--simulate: " + std::to_string(map.ranks()) + " ranks, at most " + std::to_string(kSimulateUpTo) +
                                " are simulated");
  }
  const comm::TwoTierModel model = make_model(options);
  const std::uint64_t bytes_per_rank = comm::parse_size(options.bytes_per_rank, "--bytes-per-rank");
  const comm::WorkloadSpec workload = load_workload(options.workload);
  const bool from_file = workload.kind == comm::WorkloadSpec::Kind::file;
  comm::FastPlanOptions plan_options;
  plan_options.quantum = comm::parse_size(options.quantum, "--quantum", true);
  plan_options.method = options.method == "birkhoff" ? comm::StageMethod::birkhoff
                        : options.method == "cover" ? comm::StageMethod::cover
                                                    : comm::StageMethod::automatic;
  // alpha of sum(w) + K alpha: what a stage costs, in bytes of NIC time.
  const double stage_cost_s = (options.stage_cost_us >= 0 ? options.stage_cost_us : options.nic_latency_us) * 1e-6;
  plan_options.stage_cost_bytes = static_cast<std::uint64_t>(std::llround(stage_cost_s * model.nic_bandwidth_Bps));
  const comm::FastPlan plan = comm::build_fast_plan(
      comm::make_workload(workload, map.ranks(), bytes_per_rank, options.seed), map, plan_options);
  const comm::TrafficMatrix& demand = plan.demand;
  const double bound_bytes = comm::server_bound_bytes(demand, map);
  const double loss = bound_bytes > 0 ? static_cast<double>(plan.padded_line_sum) / bound_bytes - 1 : 0;

  std::vector<std::string> problems;
  if (options.verify) problems = comm::verify_plan(plan);
  Simulation simulation;
  if (options.simulate) simulation = simulate(plan, model);

  const int S = map.servers();
  if (options.json) {
    std::vector<int> per_server;
    for (int s = 0; s < S; ++s) per_server.push_back(map.gpus_on(s));
    nlohmann::json out;
    out["servers"] = S;
    out["gpus_per_server"] = map.is_uniform() ? nlohmann::json(map.gpus_on(0)) : nlohmann::json(per_server);
    out["rank_server"] = map.rank_server();
    out["workload"] = options.workload.text;
    if (from_file) {
      out["matrix_scale"] = workload.scale;
    } else {
      out["bytes_per_rank"] = bytes_per_rank;
      out["seed"] = options.seed;
    }
    out["quantum"] = plan.options.quantum;
    out["method"] = method_name(plan.method);
    out["piece_cap"] = plan.piece_cap;
    out["stage_cost_bytes"] = plan.options.stage_cost_bytes;
    if (map.ranks() <= kDemandInJsonUpTo || options.include_demand) out["demand"] = square(demand.row_major(), map.ranks());
    out["server_matrix"] = square(plan.server_matrix, S);
    out["padded_matrix"] = square(plan.padded_matrix, S);
    out["padded_line_sum"] = plan.padded_line_sum;
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t k = 0; k < plan.stage_count(); ++k) {
      const auto perm = plan.stage_perm(k);
      stages.push_back({{"weight", plan.stage_weights[k]}, {"perm", std::vector<int>(perm.begin(), perm.end())}});
    }
    out["stages"] = std::move(stages);
    out["lower_bound_s"] = bound_bytes / model.nic_bandwidth_Bps;
    out["lower_bound_bytes_per_nic"] = bound_bytes;
    out["loss_vs_lower_bound"] = loss;  // padded_line_sum / lower bound - 1
    out["plan_time_s"] = plan.plan_time_s;
    out["fingerprint"] = fmt::format("{:016x}", comm::plan_fingerprint(plan));
    if (map.ranks() <= kTransfersInJsonUpTo || options.include_transfers) out["transfers"] = transfers_json(plan);
    if (options.verify) out["verify"] = {{"ok", problems.empty()}, {"problems", problems}};
    if (options.simulate) {
      nlohmann::json algos = nlohmann::json::array();
      for (std::size_t a = 0; a < simulation.pipelined.size(); ++a) {
        algos.push_back({{"algo", simulation.pipelined[a].name},
                         {"time_s", simulation.pipelined[a].time_s},
                         {"step_synchronous_time_s", simulation.synchronous[a].time_s}});
      }
      out["simulate"] = {{"server_bound_s", simulation.bounds.server_s}, {"per_gpu_bound_s", simulation.bounds.per_gpu_s},
                         {"nic_bandwidth_Bps", model.nic_bandwidth_Bps}, {"nic_latency_s", model.nic_latency_s},
                         {"scaleup_bandwidth_Bps", model.scaleup_bandwidth_Bps},
                         {"scaleup_latency_s", model.scaleup_latency_s}, {"incast_penalty", model.incast_penalty},
                         {"algorithms", algos}};
    }
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("# FAST plan: %d servers, %s GPUs per server, %d ranks; %s\n", S,
                CLI::detail::join(options.gpus_per_server, ",").c_str(), map.ranks(),
                comm::describe_workload(workload, options.workload.text, demand, std::to_string(bytes_per_rank), options.seed).c_str());
    std::printf("stages              %zu (at most %lld), %s", plan.stage_count(), static_cast<long long>(S) * S - 2LL * S + 2,
                method_name(plan.method));
    if (plan.method == comm::StageMethod::cover) std::printf(" (pieces of at most %llu bytes)", static_cast<unsigned long long>(plan.piece_cap));
    std::printf("; stage cost %llu bytes (%.3g us)\n", static_cast<unsigned long long>(plan.options.stage_cost_bytes), stage_cost_s * 1e6);
    std::printf("plan time           %.6f s\n", plan.plan_time_s);
    std::printf("largest stage       %llu bytes\n", plan.stage_count() ? static_cast<unsigned long long>(plan.stage_weights.front()) : 0ULL);
    std::printf("padded line sum     %llu bytes per NIC\n", static_cast<unsigned long long>(plan.padded_line_sum));
    std::printf("server lower bound  %.0f bytes per NIC = %.3f us at %.0f GB/s\n", bound_bytes,
                bound_bytes / model.nic_bandwidth_Bps * 1e6, model.nic_bandwidth_Bps / 1e9);
    std::printf("quantum             %llu bytes\n", static_cast<unsigned long long>(plan.options.quantum));
    std::printf("loss                padded line sum %+.3f%% over the lower bound\n", loss * 100);
    std::printf("fingerprint         %016llx\n", static_cast<unsigned long long>(comm::plan_fingerprint(plan)));
    if (options.verify) {
      std::printf("verify              %s\n", problems.empty() ? "ok: every invariant holds for every rank" : "FAILED");
    }
    if (options.simulate) {
      std::printf("# flow model: NIC %.0f GB/s %.2f us, scale-up %.0f GB/s %.2f us, incast penalty %.2f\n",
                  model.nic_bandwidth_Bps / 1e9, model.nic_latency_s * 1e6, model.scaleup_bandwidth_Bps / 1e9,
                  model.scaleup_latency_s * 1e6, model.incast_penalty);
      std::printf("# server bound %.3f us, per-GPU bound %.3f us\n", simulation.bounds.server_s * 1e6, simulation.bounds.per_gpu_s * 1e6);
      std::printf("# %-12s %16s %7s %16s %7s\n", "algorithm", "pipelined(us)", "eff%", "step-sync(us)", "eff%");
      for (std::size_t a = 0; a < simulation.pipelined.size(); ++a) {
        const double p = simulation.pipelined[a].time_s, q = simulation.synchronous[a].time_s;
        std::printf("  %-12s %16.3f %7.1f %16.3f %7.1f\n", simulation.pipelined[a].name.c_str(), p * 1e6,
                    p > 0 ? 100 * simulation.bounds.server_s / p : 0.0, q * 1e6, q > 0 ? 100 * simulation.bounds.server_s / q : 0.0);
      }
    }
  }
  std::fflush(stdout);
  for (const std::string& problem : problems) std::fprintf(stderr, "nestfast a2a plan: verify: %s\n", problem.c_str());
  return problems.empty() ? 0 : kExitRuntimeError;
}

}  // namespace

void register_a2a_plan(CLI::App& a2a, CliContext& context) {
  auto* command = a2a.add_subcommand("plan", "Compute (and verify, simulate) a FAST schedule for a workload");
  auto options = std::make_shared<PlanOptions>();
  command->add_option("--servers", options->servers, "Number of servers S (with one --gpus-per-server count)");
  add_list_option(*command, "--gpus-per-server", options->gpus_per_server,
                  "GPUs per server m, or one count per server for uneven servers (\"8,8,4\")")
      ->capture_default_str();
  add_workload_options(*command, options->workload);
  command->add_option("--bytes-per-rank", options->bytes_per_rank, "Bytes each rank sends (K, M, G suffixes)")->capture_default_str();
  command->add_option("--seed", options->seed, "Workload seed")->check(kUnsigned64)->capture_default_str();
  command->add_option("--quantum", options->quantum, "Round the server matrix up to multiples of this many bytes, K/M/G suffixes (0 = exact)")
      ->capture_default_str();
  command->add_option("--method", options->method,
                      "Stages: birkhoff (exact, up to S^2 stages), cover (about S stages), auto (least sum(w) + stages x "
                      "stage cost)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "birkhoff", "cover"}));
  command->add_option("--stage-cost-us", options->stage_cost_us,
                      "What one stage costs the executor, us (auto's alpha; default: --nic-latency-us)");
  command->add_flag("--verify", options->verify, "Check every plan invariant for every rank; exit 1 if one fails");
  command->add_flag("--simulate", options->simulate, "Play FAST, fan-out, pairwise and hierarchical in the two-tier flow model");
  command->add_flag("--json", options->json, "Print the whole plan as one JSON object");
  command->add_flag("--include-demand", options->include_demand, "Put the demand into the JSON even above 4096 ranks");
  command->add_flag("--include-transfers", options->include_transfers, "Put per-GPU transfers into the JSON even above 64 ranks");
  command->add_option("--nic-GBps", options->nic_GBps, "Flow model: NIC bandwidth per GPU and direction, GB/s")->capture_default_str();
  command->add_option("--nic-latency-us", options->nic_latency_us, "Flow model: NIC message latency, us")->capture_default_str();
  command->add_option("--scaleup-GBps", options->scaleup_GBps, "Flow model: scale-up bandwidth per GPU and direction, GB/s")
      ->capture_default_str();
  command->add_option("--scaleup-latency-us", options->scaleup_latency_us, "Flow model: scale-up latency, us")->capture_default_str();
  command->add_option("--incast-penalty", options->incast_penalty,
                      "Flow model: a downlink shared by several flows runs at bandwidth / (1 + penalty)")
      ->capture_default_str();
  command->callback([options, &context] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    context.exit_code = run_plan(*options);
  });
}

}  // namespace nestfast::jobs
