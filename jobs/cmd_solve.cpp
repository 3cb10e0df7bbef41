// nestfast solve: search the best plan for one model, cluster, GPU count and
// global batch with the level-wise DP, print it (stages, devices, boundary
// levels, time split, memory vs HBM), the next alternatives, the baselines
// priced by the same cost model, the search statistics and a line of
// Megatron-LM arguments; or all of it as one JSON object (--json).
// Every rank computes (it is a pure function of the flags); rank 0 prints.
#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/presets/presets.hpp"
#include "jobs/cli_checks.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/cli_lists.hpp"
#include "jobs/dp_device.hpp"
#include "jobs/launch_file.hpp"
#include "jobs/megatron_text.hpp"
#include "jobs/pricing_options.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::jobs {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct SolveFlags {
  std::string model;
  std::string cluster;
  int gpus = 0;
  int gbs = 0;
  int seq = 0;
  std::vector<std::string> tp, cp, ep, pp, dp, mbs, zero, vpp, recompute, placement;
  std::string sp = "all";
  bool even_layers = false;
  std::string optimizer = "adam";
  std::string a2a = "fast";
  int top_k = 5;
  int threads = 0;
  bool json = false;
  bool no_baselines = false;
  std::uint64_t mcmc_seed = 1;
  int exhaustive_max_plans = 200000;
  std::string gpu = "auto";
  std::string framework = "megatron-core";
  std::vector<std::string> recompute_layers;
  bool allow_fsdp_pp = false;
  std::string launch;  // directory for launch.sbatch + plan.json
  PricingFlags pricing;
};

std::vector<int> parse_switch_list(const std::string& text) {
  if (text == "all" || text.empty()) return {};
  if (text == "on") return {1};
  if (text == "off") return {0};
  throw std::invalid_argument("--sp: '" + text + "' is not on, off or all");
}

search::SolveProblem make_problem(const SolveFlags& flags) {
  search::SolveProblem problem;
  problem.model = io::load_model(flags.model);
  problem.cluster = io::load_cluster(flags.cluster);
  problem.gpus = flags.gpus;
  if (const std::string error = search::gpus_error(problem); !error.empty()) throw std::invalid_argument("--gpus: " + error);
  problem.global_batch = flags.gbs;
  if (flags.seq < 0) throw std::invalid_argument("--seq: must be positive");
  problem.seq_len = flags.seq;
  problem.optimizer = parse_optimizer(flags.optimizer, "--optimizer");
  problem.a2a = parse_all_to_all(flags.a2a, "--a2a");
  problem.framework = parse_framework(flags.framework, "--framework");
  problem.attention = attention_of(flags.pricing);
  problem.overlap = overlap_of(flags.pricing);
  return problem;
}

search::StrategySpace make_space(const SolveFlags& flags) {
  search::StrategySpace space;
  const auto ints = [](const std::vector<std::string>& items, const char* what, search::ListRange range) {
    return int_list(items, what, range.minimum, range.maximum);
  };
  space.tp = ints(flags.tp, "--tp", search::kTpRange);
  space.cp = ints(flags.cp, "--cp", search::kCpRange);
  space.ep = ints(flags.ep, "--ep", search::kEpRange);
  space.pp = ints(flags.pp, "--pp", search::kPpRange);
  space.dp = ints(flags.dp, "--dp", search::kDpRange);
  space.micro_batch = ints(flags.mbs, "--mbs", search::kMicroBatchRange);
  space.zero_stage = ints(flags.zero, "--zero", search::kZeroRange);
  space.vpp = ints(flags.vpp, "--vpp", search::kVppRange);
  space.sp = parse_switch_list(flags.sp);
  space.recompute = recompute_list(flags.recompute, "--recompute");
  space.placements = placement_list(flags.placement, "--placement");
  space.uneven_layers = !flags.even_layers;
  space.recompute_layers = ints(flags.recompute_layers, "--recompute-layers", search::kRecomputeLayersRange);
  space.allow_fsdp_with_pipeline = flags.allow_fsdp_pp;
  return space;
}

std::string layer_range(int first, int last, int blocks) {
  auto name = [blocks](int layer) {
    if (layer == 0) return std::string("emb");
    if (layer == blocks + 1) return std::string("head");
    return std::to_string(layer);
  };
  return first == last ? name(first) : name(first) + ".." + name(last);
}

std::string level_name(const ClusterSpec& cluster, int level) {
  if (level < 0) return "-";
  return fmt::format("{} ({})", level, cluster.levels[static_cast<std::size_t>(level)].name);
}

std::string recompute_summary(const Execution& e) {
  if (e.stages.empty()) return "none";
  for (const StagePlan& stage : e.stages)
    if (stage.recompute != e.stages.front().recompute) return "per-stage";
  const StagePlan& first = e.stages.front();
  return first.recompute == Recompute::Full && first.recompute_layers > 0
             ? fmt::format("block({})", first.recompute_layers)
             : std::string(to_string(first.recompute));
}

std::string degrees(const Execution& e) {
  return fmt::format("tp={} cp={} ep={} pp={} dp={} sp={} mbs={} zero={} {} recompute={} attention={} overlap={} placement={}", e.tp,
                     e.cp, e.ep, e.pp, e.dp, e.sp ? "on" : "off", e.micro_batch, e.zero_stage,
                     e.vpp > 1 ? fmt::format("interleaved(v={})", e.vpp) : std::string("1F1B"), recompute_summary(e),
                     to_string(e.attention), to_string(effective_overlap(e)), search::placement_to_string(e.placement));
}

int stage_blocks(const StagePlan& stage, int blocks) {
  return std::max(0, std::min(stage.last_layer, blocks) - std::max(stage.first_layer, 1) + 1);
}

nlohmann::json plan_json(const search::SolveProblem& problem, const Execution& plan, const PlanCost& cost) {
  nlohmann::json stages = nlohmann::json::array();
  const int blocks = problem.model.num_layers;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& stage = plan.stages[i];
    const RankCost& rank = cost.ranks[i % static_cast<std::size_t>(plan.pp)];
    stages.push_back({{"index", i},
                      {"pipeline_rank", rank.rank},
                      {"first_layer", stage.first_layer},
                      {"last_layer", stage.last_layer},
                      {"blocks", stage_blocks(stage, blocks)},
                      {"devices", plan.devices() / plan.pp},
                      {"first_device", stage.first_device},
                      {"boundary_level", stage.boundary_level},
                      {"boundary_level_name",
                       stage.boundary_level >= 0 ? problem.cluster.levels[static_cast<std::size_t>(stage.boundary_level)].name
                                                 : ""},
                      {"recompute", to_string(stage.recompute)},
                      {"recompute_layers", stage.recompute_layers},
                      {"rank_time_per_microbatch_s", rank.time_per_microbatch_s},
                      {"memory_bytes", rank.memory.total_bytes()}});
  }
  std::vector<std::string> placement;
  for (ParallelDim dim : plan.placement) placement.emplace_back(to_string(dim));
  const TimeBreakdown& b = cost.breakdown;
  nlohmann::json out = {{"framework", to_string(plan.framework)},
          {"tp", plan.tp},
          {"cp", plan.cp},
          {"ep", plan.ep},
          {"pp", plan.pp},
          {"dp", plan.dp},
          {"sp", plan.sp},
          {"micro_batch", plan.micro_batch},
          {"micro_batches", cost.micro_batches},
          {"zero_stage", plan.zero_stage},
          {"vpp", plan.vpp},
          {"attention", to_string(plan.attention)},
          {"overlap", to_string(plan.overlap)},
          {"overlap_priced", to_string(effective_overlap(plan))},
          {"placement", placement},
          {"feasible", cost.feasible},
          {"iteration_time_s", cost.iteration_time_s},
          {"tokens_per_s", cost.tokens_per_s},
          {"mfu", cost.mfu},
          {"memory_peak_bytes", cost.memory_peak_bytes},
          {"hbm_bytes", cost.hbm_bytes},
          {"breakdown",
           {{"compute_s", b.compute_s},
            {"recompute_s", b.recompute_s},
            {"tp_comm_s", b.tp_comm_s},
            {"cp_comm_s", b.cp_comm_s},
            {"ep_comm_s", b.ep_comm_s},
            {"zero3_gather_s", b.zero3_gather_s},
            {"p2p_s", b.p2p_s},
            {"bubble_s", b.bubble_s},
            {"dp_sync_s", b.dp_sync_s},
            {"optimizer_s", b.optimizer_s}}},
          {"stages", stages}};
  out.update(megatron_json(megatron_launch(problem.model, plan)));
  return out;
}

nlohmann::json stats_json(const search::SearchStats& s, int threads, const std::string& dp_device) {
  return {{"instances", s.instances},
          {"pruned_instances", s.pruned_instances},
          {"feasible_instances", s.feasible_instances},
          {"dp_runs", s.dp_runs},
          {"states", s.states},
          {"stage_candidates", s.transitions},
          {"pruned_memory", s.pruned_memory},
          {"pruned_params", s.pruned_params},
          {"pruned_bound", s.pruned_bound},
          {"plans_priced", s.plans_evaluated},
          {"wall_s", s.wall_s},
          {"threads", threads},
          {"dp_device", dp_device}};
}

void print_text(const search::SolveProblem& problem, const search::SolveResult& result,
                const std::vector<PlanCost>& costs, int threads, const std::string& dp_device) {
  const int seq = problem.seq_len > 0 ? problem.seq_len : problem.model.seq_len;
  const int blocks = problem.model.num_layers;
  fmt::print("nestfast solve: {} on {} ({} GPUs of {}, {:.1f} GiB HBM), global batch {} x {} tokens\n",
             problem.model.name, problem.cluster.name, problem.gpus, problem.cluster.gpu.name,
             static_cast<double>(problem.cluster.gpu.hbm_bytes) / kGiB, problem.global_batch, seq);
  fmt::print("priced with {} attention, overlap {}\n\n", to_string(problem.attention), to_string(problem.overlap));
  const Execution& best = result.top.front().plan;
  const PlanCost& cost = costs.front();
  fmt::print("Best plan: {}\n", degrees(best));
  fmt::print("  iteration {:.4f} s   {:.0f} tokens/s   MFU {:.1f}%   m={} micro-batches   peak memory {:.1f} / {:.1f} GiB\n\n",
             cost.iteration_time_s, cost.tokens_per_s, 100 * cost.mfu, cost.micro_batches,
             cost.memory_peak_bytes / kGiB, cost.hbm_bytes / kGiB);
  fmt::print("  {:>5}  {:>4}  {:<14} {:>6}  {:>7}  {:>12}  {:<14} {:<9}  {:>12}  {:>17}\n", "stage", "rank", "layers",
             "blocks", "devices", "first device", "boundary in", "recompute", "rank ms/mb", "memory GiB / HBM");
  for (std::size_t i = 0; i < best.stages.size(); ++i) {
    const StagePlan& stage = best.stages[i];
    const RankCost& rank = cost.ranks[i % static_cast<std::size_t>(best.pp)];
    fmt::print("  {:>5}  {:>4}  {:<14} {:>6}  {:>7}  {:>12}  {:<14} {:<9}  {:>12.3f}  {:>8.1f} / {:<6.1f}\n", i, rank.rank,
               layer_range(stage.first_layer, stage.last_layer, blocks), stage_blocks(stage, blocks),
               best.devices() / best.pp, stage.first_device, level_name(problem.cluster, stage.boundary_level),
               to_string(stage.recompute), rank.time_per_microbatch_s * 1e3, rank.memory.total_bytes() / kGiB,
               cost.hbm_bytes / kGiB);
  }
  const TimeBreakdown& b = cost.breakdown;
  fmt::print("  time split (s, bottleneck rank): compute {:.3f}  recompute {:.3f}  tp {:.3f}  cp {:.3f}  ep {:.3f}  "
             "zero3 {:.3f}  p2p {:.3f}  bubble {:.3f}  dp-sync {:.3f}  optimizer {:.3f}\n",
             b.compute_s, b.recompute_s, b.tp_comm_s, b.cp_comm_s, b.ep_comm_s, b.zero3_gather_s, b.p2p_s, b.bubble_s,
             b.dp_sync_s, b.optimizer_s);

  if (result.top.size() > 1) {
    fmt::print("\nAlternatives\n");
    for (std::size_t k = 1; k < result.top.size(); ++k) {
      fmt::print("  #{}  {:.4f} s  ({:.3f}x the best)  {}\n", k + 1, result.top[k].iteration_time_s,
                 result.top[k].iteration_time_s / cost.iteration_time_s, degrees(result.top[k].plan));
    }
  }
  if (!result.baselines.empty()) {
    fmt::print("\nBaselines (priced by the same cost model; speed-up = baseline time / best time)\n");
    for (const search::BaselineResult& baseline : result.baselines) {
      if (baseline.feasible) {
        fmt::print("  {:<10}  {:>10.4f} s  speed-up {:>6.3f}x  {}  [{}]\n", baseline.name, baseline.iteration_time_s,
                   baseline.iteration_time_s / cost.iteration_time_s, degrees(baseline.plan), baseline.note);
      } else {
        fmt::print("  {:<10}  {:>12}  {}\n", baseline.name, "-", baseline.note);
      }
    }
  }
  const search::SearchStats& s = result.stats;
  fmt::print("\nSearch: {} instances ({} skipped or cut by the bound, {} solved to a plan), {} DP runs, {} states, "
             "{} stage candidates priced; scans cut by memory {}, by the sync cap {}, by the bound {}; "
             "{} plans priced; {:.3f} s on {} thread(s), DP on the {}\n",
             s.instances, s.pruned_instances, s.feasible_instances, s.dp_runs, s.states, s.transitions, s.pruned_memory,
             s.pruned_params, s.pruned_bound, s.plans_evaluated, s.wall_s, threads, dp_device);
  fmt::print("\n{}", megatron_text(megatron_launch(problem.model, best)));
}

void run_solve(const SolveFlags& flags, CliContext& context) {
  const search::SolveProblem problem = make_problem(flags);
  const search::StrategySpace space = make_space(flags);
  if (flags.top_k < 1) throw std::invalid_argument("--top-k: must be at least 1");
  if (flags.threads < 0) throw std::invalid_argument("--threads: must be >= 0");
  search::SolveOptions options;
  options.top_k = flags.top_k;
  options.threads = flags.threads;
  options.baselines = !flags.no_baselines;
  options.mcmc_seed = flags.mcmc_seed;
  options.exhaustive_max_plans = flags.exhaustive_max_plans;
  const DpDevice device = choose_dp_device(flags.gpu);
  options.dp_batch_runner = device.runner;
  const search::SolveResult result = search::solve(problem, space, options);
  const int threads = flags.threads > 0 ? flags.threads : omp_get_max_threads();

  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!result.feasible) {
    context.exit_code = kExitRuntimeError;
    if (rank != 0) return;
    if (flags.json) {
      std::cout << nlohmann::json{{"feasible", false},
                                  {"reason", "no feasible plan: " + result.infeasible_reason},
                                  {"stats", stats_json(result.stats, threads, device.name)}}
                       .dump(2)
                << "\n";
    } else {
      std::cerr << "nestfast solve: no feasible plan: " << result.infeasible_reason << "\n";
    }
    return;
  }
  // The reported numbers are evaluate_plan's (the DP's time equals them).
  std::vector<PlanCost> costs;
  for (const search::InstanceResult& plan : result.top) {
    costs.push_back(evaluate_plan(problem.model, problem.cluster, plan.plan));
  }
  context.exit_code = 0;
  if (rank != 0) return;
  if (!flags.launch.empty()) {
    const Execution& best = result.top.front().plan;
    LaunchRequest request;
    request.directory = flags.launch;
    request.job_name = fmt::format("{}-{}gpus", problem.model.name, problem.gpus);
    request.gpus = problem.gpus;
    request.gpus_per_node = problem.cluster.levels.empty() ? problem.gpus : problem.cluster.levels.front().group_size;
    request.vocab = problem.model.vocab;
    request.launch = megatron_launch(problem.model, best);
    request.plan = plan_json(problem, best, costs.front());
    request.plan["model"] = problem.model.name;
    request.plan["cluster"] = problem.cluster.name;
    write_launch_files(request);
  }
  if (!flags.json) {
    print_text(problem, result, costs, threads, device.name);
    if (!flags.launch.empty()) fmt::print("\nLaunch file: {}/launch.sbatch (plan: {}/plan.json)\n", flags.launch, flags.launch);
    return;
  }
  nlohmann::json alternatives = nlohmann::json::array();
  for (std::size_t k = 1; k < result.top.size(); ++k) alternatives.push_back(plan_json(problem, result.top[k].plan, costs[k]));
  nlohmann::json baselines = nlohmann::json::array();
  for (const search::BaselineResult& baseline : result.baselines) {
    nlohmann::json entry = {{"name", baseline.name},
                            {"feasible", baseline.feasible},
                            {"note", baseline.note},
                            {"plans_priced", baseline.plans_evaluated}};
    if (baseline.feasible) {
      entry["iteration_time_s"] = baseline.iteration_time_s;
      entry["speedup"] = baseline.iteration_time_s / costs.front().iteration_time_s;
      entry["plan"] = plan_json(problem, baseline.plan, evaluate_plan(problem.model, problem.cluster, baseline.plan));
    }
    baselines.push_back(entry);
  }
  const nlohmann::json out = {{"model", problem.model.name},
                              {"cluster", problem.cluster.name},
                              {"gpus", problem.gpus},
                              {"global_batch", problem.global_batch},
                              {"seq_len", problem.seq_len > 0 ? problem.seq_len : problem.model.seq_len},
                              {"feasible", true},
                              {"best", plan_json(problem, result.top.front().plan, costs.front())},
                              {"alternatives", alternatives},
                              {"baselines", baselines},
                              {"stats", stats_json(result.stats, threads, device.name)}};
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void register_solve(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("solve", "Search the best plan for one model, cluster and GPU count");
  auto flags = std::make_shared<SolveFlags>();
  command->add_option("--model", flags->model, "model preset name or .toml path")->required();
  command->add_option("--cluster", flags->cluster, "cluster preset name or .toml path")->required();
  command->add_option("--gpus", flags->gpus, "devices to plan for")->required();
  command->add_option("--gbs", flags->gbs, "global batch in sequences")->required();
  command->add_option("--seq", flags->seq, "sequence length (default: the model's)");
  const char* list = " (comma list, or 'all' = every valid value; default all)";
  add_list_option(*command, "--tp", flags->tp, std::string("tensor-parallel degrees") + list);
  add_list_option(*command, "--cp", flags->cp, std::string("context-parallel degrees") + list);
  add_list_option(*command, "--ep", flags->ep, std::string("expert-parallel degrees") + list);
  add_list_option(*command, "--pp", flags->pp, std::string("pipeline stages") + list);
  add_list_option(*command, "--dp", flags->dp, std::string("data-parallel degrees") + list);
  add_list_option(*command, "--mbs", flags->mbs, std::string("micro-batch sizes") + list);
  add_list_option(*command, "--zero", flags->zero, std::string("ZeRO stages 0-3") + list);
  add_list_option(*command, "--vpp", flags->vpp, std::string("1F1B chunks per rank, 1 = plain 1F1B") + list);
  command->add_option("--sp", flags->sp, "sequence parallelism: on|off|all (default all)");
  add_list_option(*command, "--recompute", flags->recompute,
                  "recompute modes a stage may use: none,selective,full (default all; chosen per stage)");
  add_list_option(*command, "--placement", flags->placement,
                  "placement orders to try, innermost first, ';'-separated, e.g. 'tp,cp,ep,dp,pp;tp,pp,dp' "
                  "(default: every order of the dims larger than 1)",
                  ';');
  command->add_flag("--even-layers", flags->even_layers, "only near-equal blocks per stage (no uneven split)");
  command->add_option("--optimizer", flags->optimizer, "adam|sgd (default adam)");
  command->add_option("--a2a", flags->a2a, "how MoE all-to-alls are priced: fast|fanout (default fast)");
  command->add_option("--top-k", flags->top_k, "plans to report: the best and K-1 alternatives (default 5)");
  command->add_option("--threads", flags->threads, "OpenMP threads across instances (default: OMP_NUM_THREADS)");
  command->add_flag("--no-baselines", flags->no_baselines, "skip the manual, Phaze-like, MCMC and exhaustive baselines");
  command->add_option("--mcmc-seed", flags->mcmc_seed, "seed of the MCMC baseline (default 1)")->check(kUnsigned64);
  command->add_option("--exhaustive-limit", flags->exhaustive_max_plans,
                      "run the exhaustive baseline only up to this many plans (default 200000)");
  add_framework_option(*command, flags->framework);
  add_list_option(*command, "--recompute-layers", flags->recompute_layers,
                      "megatron-core: block recompute of N layers per stage to search, comma list; 0 = full "
                      "recompute of every layer (default: 0 and powers of two below the layers per stage)");
  command->add_flag("--allow-fsdp-pp", flags->allow_fsdp_pp,
                    "megatron-core: allow ZeRO-2/3 (Megatron-FSDP) with pp > 1, which no upstream test runs");
  command->add_option("--launch", flags->launch,
                      "write DIR/launch.sbatch (Megatron-LM pretrain_gpt.py under srun) and DIR/plan.json for the best plan");
  add_gpu_option(*command, flags->gpu);
  add_pricing_options(*command, flags->pricing);
  command->add_flag("--json", flags->json, "print one JSON object");
  command->callback([flags, &context] { run_solve(*flags, context); });
}

}  // namespace nestfast::jobs
