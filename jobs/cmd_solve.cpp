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
#include "jobs/plan_text.hpp"
#include "jobs/pricing_options.hpp"
#include "solver/search/plan_record.hpp"
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
  int top_k = 5;
  int threads = 0;
  bool json = false;
  bool no_baselines = false;
  std::uint64_t mcmc_seed = 1;
  int exhaustive_max_plans = 200000;
  std::string gpu = "auto";
  std::string framework = "megatron-core";
  std::vector<std::string> recompute_layers;
  std::vector<std::string> recompute_modules;
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
  problem.framework = parse_framework(flags.framework, "--framework");
  problem.a2a = all_to_all_of(flags.pricing.a2a, problem.framework);
  problem.attention = attention_of(flags.pricing);
  problem.overlap = overlap_of(flags.pricing);
  problem.grad_reduce = grad_reduce_of(flags.pricing);
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
  space.recompute_modules = module_set_list(flags.recompute_modules, "--recompute-modules");
  space.allow_fsdp_with_pipeline = flags.allow_fsdp_pp;
  return space;
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

// The point's plans as records: NEST's top-k, then the baselines.
std::vector<search::PlanRecord> solve_records(const search::SolveProblem& problem, const search::SolveResult& result) {
  std::vector<search::PlanRecord> records;
  for (std::size_t k = 0; k < result.top.size(); ++k) {
    records.push_back(search::price_plan_record(problem.model, problem.cluster, result.top[k].plan, "nest",
                                                static_cast<int>(k)));
  }
  const int seq = problem.seq_len > 0 ? problem.seq_len : problem.model.seq_len;
  for (const search::BaselineResult& baseline : result.baselines) {
    if (baseline.feasible) {
      records.push_back(search::price_plan_record(problem.model, problem.cluster, baseline.plan, baseline.name, 0));
    } else {
      records.push_back(search::unpriced_plan_record(problem.model.name, problem.cluster.name, problem.gpus,
                                                     problem.global_batch, seq, baseline.name, 0, nullptr));
    }
  }
  return records;
}

void print_text(const search::SolveProblem& problem, const search::SolveResult& result,
                const std::vector<search::PlanRecord>& records, int threads, const std::string& dp_device) {
  const int seq = problem.seq_len > 0 ? problem.seq_len : problem.model.seq_len;
  fmt::print("nestfast solve: {} on {} ({} GPUs of {}, {:.1f} GiB HBM), global batch {} x {} tokens\n",
             problem.model.name, problem.cluster.name, problem.gpus, problem.cluster.gpu.name,
             static_cast<double>(problem.cluster.gpu.hbm_bytes) / kGiB, problem.global_batch, seq);
  fmt::print("priced with {} attention, overlap {}, {} gradients\n\n", to_string(problem.attention),
             to_string(problem.overlap), to_string(problem.grad_reduce));
  fmt::print("{}", point_text(records));
  if (!result.baselines.empty()) {
    fmt::print("\nBaselines, priced by the same cost model:\n");
    for (const search::BaselineResult& baseline : result.baselines) {
      fmt::print("  {:<10} {}\n", baseline.name, baseline.note);
    }
  }
  const search::SearchStats& s = result.stats;
  fmt::print("\nSearch: {} instances ({} skipped or cut by the bound, {} solved to a plan), {} DP runs, {} states, "
             "{} stage candidates priced; scans cut by memory {}, by the sync cap {}, by the bound {}; "
             "{} plans priced; {:.3f} s on {} thread(s), DP on the {}\n",
             s.instances, s.pruned_instances, s.feasible_instances, s.dp_runs, s.states, s.transitions, s.pruned_memory,
             s.pruned_params, s.pruned_bound, s.plans_evaluated, s.wall_s, threads, dp_device);
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
  const std::vector<search::PlanRecord> records = solve_records(problem, result);
  context.exit_code = 0;
  if (rank != 0) return;
  nlohmann::json out = {{"model", problem.model.name},
                        {"cluster", problem.cluster.name},
                        {"gpus", problem.gpus},
                        {"global_batch", problem.global_batch},
                        {"seq_len", problem.seq_len > 0 ? problem.seq_len : problem.model.seq_len},
                        {"feasible", true}};
  out.update(point_json(records));
  // How each baseline was obtained, beside its record.
  for (std::size_t i = 0; i < result.baselines.size(); ++i) {
    nlohmann::json& entry = out["plans"][result.top.size() + i];
    entry["note"] = result.baselines[i].note;
    entry["plans_priced"] = result.baselines[i].plans_evaluated;
  }
  if (!flags.launch.empty()) {
    LaunchRequest request;
    request.directory = flags.launch;
    request.job_name = fmt::format("{}-{}gpus", problem.model.name, problem.gpus);
    request.gpus = problem.gpus;
    request.gpus_per_node = problem.cluster.levels.empty() ? problem.gpus : problem.cluster.levels.front().group_size;
    request.vocab = problem.model.vocab;
    request.launch = megatron_launch(records.front());
    request.plan = out;
    write_launch_files(request);
  }
  if (!flags.json) {
    print_text(problem, result, records, threads, device.name);
    if (!flags.launch.empty()) fmt::print("\nLaunch file: {}/launch.sbatch (plan: {}/plan.json)\n", flags.launch, flags.launch);
    return;
  }
  out["stats"] = stats_json(result.stats, threads, device.name);
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
  add_list_option(*command, "--recompute-modules", flags->recompute_modules,
                  "module sets a selective stage may checkpoint (Megatron's --recompute-modules), ';'-separated, "
                  "each a comma list of core_attn, layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts, e.g. "
                  "'core_attn;core_attn,layernorm,moe_act' (default auto: core_attn, and with it layernorm, moe_act "
                  "and mla_up_proj where the model has them)",
                  ';');
  add_list_option(*command, "--placement", flags->placement,
                  "placement orders to try, innermost first, ';'-separated, e.g. 'tp,cp,ep,dp,pp;tp,pp,dp' "
                  "(default: every order of the dims larger than 1)",
                  ';');
  command->add_flag("--even-layers", flags->even_layers, "only near-equal blocks per stage (no uneven split)");
  command->add_option("--optimizer", flags->optimizer, "adam|sgd (default adam)");
  command->add_option("--top-k", flags->top_k, "plans to report: the best and K-1 alternatives (default 5)");
  command->add_option("--threads", flags->threads, "OpenMP threads across instances (default: OMP_NUM_THREADS)");
  command->add_flag("--no-baselines", flags->no_baselines, "skip the manual, Phaze-like, MCMC and exhaustive baselines");
  command->add_option("--mcmc-seed", flags->mcmc_seed, "seed of the MCMC baseline (default 1)")->check(kUnsigned64);
  command->add_option("--exhaustive-limit", flags->exhaustive_max_plans,
                      "run the exhaustive baseline only up to this many plans (default 200000)");
  add_framework_option(*command, flags->framework);
  add_list_option(*command, "--recompute-layers", flags->recompute_layers,
                      "block recompute of the first N layers of every stage to search (Megatron's "
                      "--recompute-method block), comma list; 0 = full recompute of every layer (default: 0 and "
                      "powers of two below the layers per stage)");
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
