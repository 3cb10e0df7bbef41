// nestfast evaluate: price one given plan with the analytic cost model —
// iteration time and its breakdown, tokens/s, MFU, memory per pipeline rank
// vs HBM — as a table or (--json) one JSON object. Rank 0 prints; every
// rank computes (it is cheap), so the command also works under mpiexec.
#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/presets/presets.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/cli_lists.hpp"
#include "jobs/megatron_text.hpp"
#include "jobs/pricing_options.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/megatron_args.hpp"
#include "solver/search/strategy_space.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::jobs {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct EvaluateOptions {
  std::string model;
  std::string cluster;
  int gpus = 0;
  int tp = 1, cp = 1, ep = 1, pp = 1, dp = 0;  // dp 0 = gpus / (tp*cp*pp)
  std::string sp = "off";
  int gbs = 0;
  int mbs = 1;
  int vpp = 1;
  int seq = 0;
  int zero = 0;
  std::string recompute = "none";
  std::vector<std::string> stages;  // "A-B[:mode]" each, in chain indices; empty = uniform
  std::string placement = "tp,cp,ep,dp,pp";
  std::string optimizer = "adam";
  std::string a2a = "fast";
  double moe_imbalance = 1.0;
  std::string framework = "megatron-core";
  int recompute_layers = 0;
  int first_stage_blocks = 0;  // Megatron's --decoder-first-pipeline-num-layers; 0 = even split
  int last_stage_blocks = 0;   // ... --decoder-last-pipeline-num-layers
  PricingFlags pricing;
  bool json = false;
};

// "A-B[:mode]": one stage over the layer chain (0 = embedding, L+1 = head)
// with its recompute mode (default: --recompute).
StagePlan parse_stage(const std::string& item, Recompute default_mode) {
  StagePlan stage;
  stage.recompute = default_mode;
  std::string range = item;
  if (const auto colon = item.find(':'); colon != std::string::npos) {
    range = item.substr(0, colon);
    stage.recompute = parse_recompute(item.substr(colon + 1), "--stages");
  }
  const std::string shape = "--stages: '" + item + "' is not FIRST-LAST[:none|selective|full]";
  const auto dash = range.find('-');
  if (dash == std::string::npos) throw std::invalid_argument(shape);
  try {
    stage.first_layer = parse_int(range.substr(0, dash), "--stages", 0, 1 << 20);
    stage.last_layer = parse_int(range.substr(dash + 1), "--stages", 0, 1 << 20);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(shape);
  }
  return stage;
}

Execution build_execution(const EvaluateOptions& options, const ModelSpec& model, const ClusterSpec& cluster) {
  if (options.gpus < 1 || options.gpus > search::kMaxGpus) {
    throw std::invalid_argument("--gpus: " + std::to_string(options.gpus) + " is not in [1, " +
                                std::to_string(search::kMaxGpus) + "]");
  }
  if (options.gbs < 1) throw std::invalid_argument("--gbs: " + std::to_string(options.gbs) + " must be >= 1");
  if (options.sp != "on" && options.sp != "off")
    throw std::invalid_argument("--sp: '" + options.sp + "' is not one of on, off");
  if (!std::isfinite(options.moe_imbalance))
    throw std::invalid_argument("--moe-imbalance: must be a finite number >= 1");
  Execution execution;
  execution.tp = options.tp;
  execution.cp = options.cp;
  execution.ep = options.ep;
  execution.pp = options.pp;
  execution.dp = options.dp;
  if (execution.dp == 0) {
    const int inner = options.tp * options.cp * options.pp;
    if (inner < 1 || options.gpus % inner != 0)
      throw std::invalid_argument("--gpus: " + std::to_string(options.gpus) + " is not divisible by tp*cp*pp = " +
                                  std::to_string(inner) + " (give --dp explicitly)");
    execution.dp = options.gpus / inner;
  }
  execution.sp = options.sp == "on";
  execution.micro_batch = options.mbs;
  execution.global_batch = options.gbs;
  execution.seq_len = options.seq;
  execution.zero_stage = options.zero;
  execution.vpp = options.vpp;
  execution.optimizer = parse_optimizer(options.optimizer, "--optimizer");
  execution.a2a = parse_all_to_all(options.a2a, "--a2a");
  execution.expert_imbalance = options.moe_imbalance;
  execution.framework = parse_framework(options.framework, "--framework");
  execution.attention = search::plan_attention(execution.framework, attention_of(options.pricing), execution.cp);
  execution.overlap = overlap_of(options.pricing);
  execution.placement = search::parse_placement(options.placement, "--placement");
  if (options.recompute_layers < 0)
    throw std::invalid_argument("--recompute-layers: " + std::to_string(options.recompute_layers) + " must be >= 0");

  validate_degrees(model, cluster, execution, options.gpus);
  const ExecutionLayout layout = compute_layout(cluster, execution);
  const Recompute recompute = parse_recompute(options.recompute, "--recompute");
  const bool first_last = options.first_stage_blocks != 0 || options.last_stage_blocks != 0;
  if (first_last && !options.stages.empty())
    throw std::invalid_argument("--stages: give the stages or --decoder-first/last-pipeline-num-layers, not both");
  if (first_last) {
    execution.stages = first_last_stages(model, layout, execution.pp, execution.vpp, options.first_stage_blocks,
                                         options.last_stage_blocks, recompute);
  } else if (options.stages.empty()) {
    execution.stages = uniform_stages(model, layout, execution.pp, execution.vpp, recompute);
  } else {
    for (const std::string& item : options.stages) execution.stages.push_back(parse_stage(item, recompute));
    derive_stage_layout(layout, execution);
    try {
      validate_stages(model, layout, execution);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(std::string("--stages: ") + error.what());
    }
  }
  for (StagePlan& stage : execution.stages)
    stage.recompute_layers = stage.recompute == Recompute::Full ? options.recompute_layers : 0;
  return execution;
}

std::string layers_text(const Execution& execution, const RankCost& rank) {
  std::string text;
  for (int index : rank.stages) {
    const StagePlan& stage = execution.stages[static_cast<std::size_t>(index)];
    if (!text.empty()) text += ",";
    text += fmt::format("{}-{}", stage.first_layer, stage.last_layer);
  }
  return text;
}

// The plan's recompute mode, or "mixed" when stages differ (the table
// then shows each rank's).
std::string recompute_text(const Execution& execution) {
  for (const StagePlan& stage : execution.stages)
    if (stage.recompute != execution.stages.front().recompute) return "mixed";
  return to_string(execution.stages.front().recompute);
}

std::string rank_recompute_text(const Execution& execution, const RankCost& rank) {
  std::string text;
  for (int index : rank.stages) {
    if (!text.empty()) text += ",";
    text += to_string(execution.stages[static_cast<std::size_t>(index)].recompute);
  }
  return text;
}

// The same plan with the MoE all-to-alls priced by the other algorithm
// (FAST vs the fan-out baseline), so the saving is visible in one run.
struct AllToAllComparison {
  AllToAllAlgorithm algorithm;
  PlanCost cost;
};

std::optional<AllToAllComparison> other_all_to_all(const ModelSpec& model, const ClusterSpec& cluster,
                                                   const Execution& execution) {
  if (execution.ep <= 1) return std::nullopt;
  Execution other = execution;
  other.a2a = execution.a2a == AllToAllAlgorithm::Fast ? AllToAllAlgorithm::Fanout : AllToAllAlgorithm::Fast;
  return AllToAllComparison{other.a2a, evaluate_plan(model, cluster, other)};
}

nlohmann::json to_json(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution,
                       const PlanCost& cost, int seq, const std::optional<AllToAllComparison>& other) {
  const TimeBreakdown& b = cost.breakdown;
  nlohmann::json stages = nlohmann::json::array();
  for (const RankCost& rank : cost.ranks) {
    nlohmann::json layers = nlohmann::json::array();
    for (int index : rank.stages) {
      const StagePlan& stage = execution.stages[static_cast<std::size_t>(index)];
      layers.push_back({{"first_layer", stage.first_layer},
                        {"last_layer", stage.last_layer},
                        {"boundary_level", stage.boundary_level},
                        {"recompute", to_string(stage.recompute)},
                        {"recompute_layers", stage.recompute_layers}});
    }
    stages.push_back({{"rank", rank.rank},
                      {"first_device", rank.first_device},
                      {"chunks", layers},
                      {"time_per_microbatch_s", rank.time_per_microbatch_s},
                      {"stash_microbatches", rank.stash_microbatches},
                      {"memory_bytes", rank.memory.total_bytes()},
                      {"weights_bytes", rank.memory.weights_bytes},
                      {"gradients_bytes", rank.memory.gradients_bytes},
                      {"optimizer_bytes", rank.memory.optimizer_bytes},
                      {"activations_bytes", rank.memory.activations_bytes},
                      {"working_bytes", rank.memory.working_bytes},
                      {"fits", rank.memory.total_bytes() <= cost.hbm_bytes}});
  }
  nlohmann::json result = {{"model", model.name},
                            {"model_parameters", total_parameters(model)},
          {"cluster", cluster.name},
          {"gpus", execution.devices()},
          {"plan",
           {{"tp", execution.tp}, {"cp", execution.cp}, {"ep", execution.ep}, {"pp", execution.pp},
            {"dp", execution.dp}, {"sp", execution.sp}, {"micro_batch", execution.micro_batch},
            {"global_batch", execution.global_batch}, {"micro_batches", cost.micro_batches}, {"seq_len", seq},
            {"vpp", execution.vpp}, {"zero_stage", execution.zero_stage},
            {"recompute", recompute_text(execution)}, {"placement", search::placement_to_string(execution.placement)}, {"a2a", to_string(execution.a2a)},
            {"moe_imbalance", execution.expert_imbalance}, {"framework", to_string(execution.framework)},
            {"attention", to_string(execution.attention)}, {"overlap", to_string(execution.overlap)},
            {"overlap_priced", to_string(effective_overlap(execution))}}},
          {"iteration_time_s", cost.iteration_time_s},
          {"tokens_per_s", cost.tokens_per_s},
          {"sequences_per_s", cost.sequences_per_s},
          {"mfu", cost.mfu},
          {"hfu", cost.hfu},
          {"model_flops", cost.model_flops},
          {"breakdown",
           {{"compute_s", b.compute_s}, {"recompute_s", b.recompute_s}, {"tp_comm_s", b.tp_comm_s},
            {"cp_comm_s", b.cp_comm_s}, {"ep_comm_s", b.ep_comm_s}, {"zero3_gather_s", b.zero3_gather_s},
            {"p2p_s", b.p2p_s}, {"bubble_s", b.bubble_s}, {"dp_sync_s", b.dp_sync_s},
            {"optimizer_s", b.optimizer_s}}},
          {"bottleneck_rank", cost.bottleneck_rank},
          {"feasible", cost.feasible},
          {"infeasible_reason", cost.infeasible_reason},
          {"memory_peak_bytes", cost.memory_peak_bytes},
          {"hbm_bytes", cost.hbm_bytes},
          {"stages", stages}};
  result.update(megatron_json(megatron_launch(model, execution)));
  if (other)
    result["a2a_alternative"] = {{"a2a", to_string(other->algorithm)},
                                 {"ep_comm_s", other->cost.breakdown.ep_comm_s},
                                 {"iteration_time_s", other->cost.iteration_time_s}};
  return result;
}

void print_table(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution,
                 const PlanCost& cost, int seq, const std::optional<AllToAllComparison>& other) {
  std::cout << fmt::format("# nestfast evaluate: {} ({:.1f}B parameters) on {} ({} GPUs)\n", model.name,
                           total_parameters(model) / 1e9, cluster.name, execution.devices());
  std::cout << fmt::format(
      "# plan: tp={} cp={} ep={} pp={} dp={} sp={} mbs={} gbs={} (m={}) seq={} vpp={} zero={} recompute={} "
      "placement={} a2a={} attention={} overlap={} (priced)\n",
      execution.tp, execution.cp, execution.ep, execution.pp, execution.dp, execution.sp ? "on" : "off",
      execution.micro_batch, execution.global_batch, cost.micro_batches, seq, execution.vpp, execution.zero_stage,
      recompute_text(execution), search::placement_to_string(execution.placement), to_string(execution.a2a),
      to_string(execution.attention), to_string(effective_overlap(execution)));
  const double total = cost.iteration_time_s;
  const TimeBreakdown& b = cost.breakdown;
  std::cout << fmt::format("iteration time   {:12.4f} s\n", total);
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute_s},   {"recompute", b.recompute_s}, {"TP comm", b.tp_comm_s},
      {"CP comm", b.cp_comm_s},   {"EP comm", b.ep_comm_s},     {"ZeRO-3 gather", b.zero3_gather_s},
      {"p2p", b.p2p_s},           {"bubble", b.bubble_s},       {"DP sync", b.dp_sync_s},
      {"optimizer", b.optimizer_s}};
  for (const auto& [name, seconds] : parts)
    std::cout << fmt::format("  {:<14} {:12.4f} s  {:5.1f}%\n", name, seconds, 100 * seconds / total);
  if (other)
    std::cout << fmt::format("  (EP all-to-all priced as {}: {:.4f} s, iteration {:.4f} s)\n", to_string(other->algorithm),
                             other->cost.breakdown.ep_comm_s, other->cost.iteration_time_s);
  std::cout << fmt::format("tokens/s         {:12.0f}\n", cost.tokens_per_s);
  std::cout << fmt::format("sequences/s      {:12.3f}\n", cost.sequences_per_s);
  std::cout << fmt::format("MFU              {:11.1f}%   (HFU {:.1f}% with recompute, {:.1f} TFLOP/s per GPU)\n",
                           100 * cost.mfu, 100 * cost.hfu,
                           cost.hfu * cluster.gpu.peak_flops_bf16 / 1e12);
  std::cout << fmt::format("\n# memory per device by pipeline rank (GiB; HBM {:.2f} GiB)\n", cost.hbm_bytes / kGiB);
  std::cout << fmt::format("{:>5} {:>12} {:>10} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>5}\n",
                           "rank", "layers", "recompute", "device", "level", "weights", "grads", "optim", "activ",
                           "working", "total", "ms/mb", "fits");
  for (const RankCost& rank : cost.ranks) {
    const StagePlan& first = execution.stages[static_cast<std::size_t>(rank.stages.front())];
    const StageMemory& memory = rank.memory;
    std::cout << fmt::format(
        "{:>5} {:>12} {:>10} {:>8} {:>6} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>9.2f} {:>5}\n",
        rank.rank, layers_text(execution, rank), rank_recompute_text(execution, rank), rank.first_device,
        first.boundary_level,
                             memory.weights_bytes / kGiB, memory.gradients_bytes / kGiB,
                             memory.optimizer_bytes / kGiB, memory.activations_bytes / kGiB,
                             memory.working_bytes / kGiB, memory.total_bytes() / kGiB,
                             rank.time_per_microbatch_s * 1e3, memory.total_bytes() <= cost.hbm_bytes ? "yes" : "NO");
  }
  std::cout << fmt::format("peak memory      {:12.2f} GiB of {:.2f} GiB\n", cost.memory_peak_bytes / kGiB,
                           cost.hbm_bytes / kGiB);
  if (cost.feasible)
    std::cout << "feasible: yes\n";
  else
    std::cout << "feasible: NO — the plan does not fit: " << cost.infeasible_reason << "\n";
  std::cout << megatron_text(megatron_launch(model, execution));
}

}  // namespace

void register_evaluate(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<EvaluateOptions>();
  auto* command = app.add_subcommand("evaluate", "Price one given plan: time breakdown, throughput, MFU, memory per stage");
  command->add_option("--model", options->model, "model preset name or .toml path")->required();
  command->add_option("--cluster", options->cluster, "cluster preset name or .toml path")->required();
  command->add_option("--gpus", options->gpus, "devices the plan uses")->required();
  command->add_option("--tp", options->tp, "tensor-parallel degree");
  command->add_option("--pp", options->pp, "pipeline stages (pipeline ranks)");
  command->add_option("--dp", options->dp, "data-parallel degree (default gpus/(tp*cp*pp)); ep is carved out of it");
  command->add_option("--cp", options->cp, "context-parallel degree");
  command->add_option("--ep", options->ep, "expert-parallel degree (divides dp and the expert count)");
  command->add_option("--sp", options->sp, "sequence parallelism: on|off");
  command->add_option("--gbs", options->gbs, "global batch in sequences")->required();
  command->add_option("--mbs", options->mbs, "micro-batch size in sequences");
  command->add_option("--vpp", options->vpp, "interleaved 1F1B chunks per pipeline rank (1 = plain 1F1B)");
  command->add_option("--seq", options->seq, "sequence length (default: the model's)");
  command->add_option("--recompute", options->recompute, "activation recompute: none|selective|full");
  add_list_option(*command, "--stages", options->stages,
                  "uneven stages as FIRST-LAST[:recompute],... over the layer chain "
                  "(0 = embedding, 1..L = blocks, L+1 = head); pp*vpp of them");
  command->add_option("--decoder-first-pipeline-num-layers", options->first_stage_blocks,
                      "blocks on pipeline rank 0 (Megatron's flag: the other ranks split the rest evenly)")
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--decoder-last-pipeline-num-layers", options->last_stage_blocks,
                      "blocks on the last pipeline rank (Megatron's flag)")
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--zero", options->zero, "ZeRO stage 0-3 over the data-parallel group");
  command->add_option("--placement", options->placement,
                      "dimensions onto the network levels, innermost first (e.g. tp,cp,ep,dp,pp)");
  command->add_option("--optimizer", options->optimizer, "adam|sgd");
  command->add_option("--a2a", options->a2a, "how MoE all-to-alls are priced: fast|fanout");
  command->add_option("--moe-imbalance", options->moe_imbalance, "hottest expert device's tokens / mean (>= 1)");
  add_framework_option(*command, options->framework);
  command->add_option("--recompute-layers", options->recompute_layers,
                      "full recompute of only the first N blocks of each stage (Megatron's --recompute-method block); "
                      "0 = every block");
  add_pricing_options(*command, options->pricing);
  command->add_flag("--json", options->json, "print one JSON object");
  command->callback([options, &context] {
    const ModelSpec model = io::load_model(options->model);
    const ClusterSpec cluster = io::load_cluster(options->cluster);
    const Execution execution = build_execution(*options, model, cluster);
    const PlanCost cost = evaluate_plan(model, cluster, execution);
    const int seq = execution.seq_len > 0 ? execution.seq_len : model.seq_len;
    const std::optional<AllToAllComparison> other = other_all_to_all(model, cluster, execution);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      if (options->json)
        std::cout << to_json(model, cluster, execution, cost, seq, other).dump(2) << "\n";
      else
        print_table(model, cluster, execution, cost, seq, other);
    }
    context.exit_code = 0;
  });
}

}  // namespace nestfast::jobs
