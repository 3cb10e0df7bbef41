// nestfast evaluate: price one given plan with the analytic cost model —
// iteration time and its breakdown, tokens/s, MFU, memory per stage vs HBM —
// as a table or (--json) one plan record. The plan comes from the flags or
// from a file another command printed (--plan: solve/query/evaluate --json,
// or a catalog, whose own models and clusters then price it). Rank 0 prints;
// every rank computes (it is cheap), so the command also works under mpiexec.
#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/catalog/catalog_reader.hpp"
#include "io/presets/presets.hpp"
#include "io/record_json/plan_json.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/cli_lists.hpp"
#include "jobs/megatron_text.hpp"
#include "jobs/plan_text.hpp"
#include "jobs/pricing_options.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/plan_record.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::jobs {

namespace {


struct EvaluateOptions {
  std::string model;
  std::string cluster;
  int gpus = 0;
  int tp = 1, cp = 1, ep = 1, pp = 1, dp = 0;  // dp 0 = gpus / (tp*cp*pp)
  int etp = 0;                                 // 0 = tp
  std::string sp = "off";
  int gbs = 0;
  int mbs = 1;
  int vpp = 1;
  int seq = 0;
  int zero = 0;
  std::string recompute = "none";
  std::string recompute_modules = "core_attn";
  std::vector<std::string> stages;  // "A-B[:mode]" each, in chain indices; empty = uniform
  std::string placement = "tp,cp,ep,dp,pp";
  std::string optimizer = "adam";
  double moe_imbalance = 1.0;
  PricingFlags pricing;
  std::string framework = "megatron-core";
  int recompute_layers = 0;
  int first_stage_blocks = 0;  // Megatron's --decoder-first-pipeline-num-layers; 0 = even split
  int last_stage_blocks = 0;   // ... --decoder-last-pipeline-num-layers
  bool json = false;
  std::string plan_file;         // --plan: a JSON document or a catalog
  std::string pick = "nest:0";   // --pick KIND[:RANK_K]
  std::int64_t point = -1;       // --point ID
  std::int64_t plan_row = -1;    // --plan-row R (catalogs)
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
  execution.expert_tp = options.etp;
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
  execution.expert_imbalance = options.moe_imbalance;
  execution.framework = parse_framework(options.framework, "--framework");
  execution.a2a = all_to_all_of(options.pricing.a2a, execution.framework);
  execution.attention = search::plan_attention(execution.framework, attention_of(options.pricing), execution.cp);
  execution.overlap = overlap_of(options.pricing);
  execution.grad_reduce = grad_reduce_of(options.pricing);
  execution.recompute_modules = parse_recompute_modules(options.recompute_modules, "--recompute-modules");
  if (options.recompute_layers < 0)
    throw std::invalid_argument("--recompute-layers: " + std::to_string(options.recompute_layers) + " must be >= 0");
  execution.placement = search::parse_placement(options.placement, "--placement");

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

// Derives the stage layout of a plan read from a file and checks it, naming `where`.
Execution checked_execution(const search::PlanRecord& record, const ModelSpec& model, const ClusterSpec& cluster,
                            const std::string& where) {
  Execution execution = search::execution_of(record);
  try {
    validate_degrees(model, cluster, execution, record.gpus);
    derive_stage_layout(compute_layout(cluster, execution), execution);
    validate_stages(model, compute_layout(cluster, execution), execution);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(where + ": " + error.what());
  }
  return execution;
}

// "nest:0" -> ("nest", 0); "mcmc" -> ("mcmc", 0).
std::pair<std::string, int> parse_pick(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  int rank_k = 0;
  if (colon != std::string::npos) rank_k = parse_int(text.substr(colon + 1), "--pick (KIND[:RANK_K])", 0, 1 << 20);
  if (kind.empty()) throw std::invalid_argument("--pick: '" + text + "' names no kind");
  return {kind, rank_k};
}

// The plan --plan, --pick, --point and --plan-row select, with where it came from.
struct PickedPlan {
  search::PlanRecord record;
  std::string where;
};

PickedPlan pick_plan(const std::vector<io::FoundRecord>& found, const EvaluateOptions& options,
                     const std::string& source) {
  if (found.empty()) throw std::invalid_argument("--plan: " + source + " holds no plan record");
  if (options.plan_row >= 0) {
    if (static_cast<std::size_t>(options.plan_row) >= found.size()) {
      throw std::invalid_argument("--plan-row: " + std::to_string(options.plan_row) + " is past the last of the " +
                                  std::to_string(found.size()) + " plans in " + source);
    }
    const io::FoundRecord& row = found[static_cast<std::size_t>(options.plan_row)];
    return {row.record, source + ":" + row.path};
  }
  const auto [kind, rank_k] = parse_pick(options.pick);
  std::vector<const io::FoundRecord*> matches;
  std::set<std::uint64_t> points;
  for (const io::FoundRecord& candidate : found) {
    const search::PlanRecord& r = candidate.record;
    if (options.point >= 0 && r.point_id != static_cast<std::uint64_t>(options.point)) continue;
    if (found.size() > 1 && (r.kind != kind || r.rank_k != rank_k)) continue;
    matches.push_back(&candidate);
    if (r.point_id) points.insert(*r.point_id);
  }
  if (matches.empty()) {
    throw std::invalid_argument("--pick: no plan " + options.pick +
                                (options.point >= 0 ? " of point " + std::to_string(options.point) : std::string()) +
                                " in " + source);
  }
  if (matches.size() > 1) {
    std::string ids;
    for (std::uint64_t id : points) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    throw std::invalid_argument("--point: " + source + " holds " + std::to_string(matches.size()) + " plans " +
                                options.pick + " (sweep points " + ids + "); choose one with --point ID");
  }
  return {matches.front()->record, source + ":" + matches.front()->path};
}

bool is_catalog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char signature[8] = {};
  in.read(signature, sizeof signature);
  return in.gcount() == 8 && std::string(signature, 8) == "\x89HDF\r\n\x1a\n";
}

// What evaluate prices: the model, the cluster and the plan, with the record it came from.
struct Evaluation {
  ModelSpec model;
  ClusterSpec cluster;
  Execution execution;
  std::string kind = "given";
  int rank_k = 0;
  std::optional<search::PlanRecord> source;  // the plan as the file printed it
  std::string where;
};

Evaluation from_plan_file(const EvaluateOptions& options) {
  Evaluation out;
  PickedPlan picked;
  if (is_catalog(options.plan_file)) {
    // The catalog's own models and clusters price its plans: the file alone is enough.
    const io::CatalogReader reader(options.plan_file);
    std::vector<io::FoundRecord> found;
    std::size_t row = 0;
    for (search::PlanRecord& record : reader.plan_records()) {
      found.push_back({"/plans[" + std::to_string(row++) + "]", std::move(record)});
    }
    picked = pick_plan(found, options, options.plan_file);
    out.model = options.model.empty() ? reader.model(picked.record.model) : io::load_model(options.model);
    out.cluster = options.cluster.empty() ? reader.cluster(picked.record.cluster) : io::load_cluster(options.cluster);
  } else {
    std::ifstream in(options.plan_file);
    if (!in) throw std::invalid_argument("--plan: " + options.plan_file + " cannot be read");
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
      throw std::invalid_argument("--plan: " + options.plan_file + " is not JSON: " + error.what());
    }
    picked = pick_plan(io::plan_records_in(document, options.plan_file), options, options.plan_file);
    // The file names its model and cluster; presets of those names price it unless --model/--cluster say otherwise.
    const auto named = [&](auto load, const std::string& flag, const std::string& given, const std::string& name) {
      if (!given.empty()) return load(given);
      try {
        return load(name);
      } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(std::string(error.what()) + "; " + picked.where + " names '" + name +
                                    "': give " + flag + " NAME_OR_FILE");
      }
    };
    out.model = named(io::load_model, "--model", options.model, picked.record.model);
    out.cluster = named(io::load_cluster, "--cluster", options.cluster, picked.record.cluster);
  }
  if (!picked.record.feasible && picked.record.stages.empty()) {
    throw std::invalid_argument("--plan: " + picked.where + " (" + picked.record.kind +
                                ") has no plan: none was feasible; pick another with --pick");
  }
  out.execution = checked_execution(picked.record, out.model, out.cluster, picked.where);
  out.kind = picked.record.kind;
  out.rank_k = picked.record.rank_k;
  out.source = picked.record;
  out.where = picked.where;
  return out;
}

Evaluation from_flags(const EvaluateOptions& options) {
  if (options.model.empty()) throw std::invalid_argument("--model: required (or give --plan FILE)");
  if (options.cluster.empty()) throw std::invalid_argument("--cluster: required (or give --plan FILE)");
  Evaluation out;
  out.model = io::load_model(options.model);
  out.cluster = io::load_cluster(options.cluster);
  out.execution = build_execution(options, out.model, out.cluster);
  return out;
}

// The same plan with the MoE all-to-alls priced by another algorithm it can
// run, so the difference is visible in one run: NCCL's fan-out beside FAST
// or DeepEP; beside the fan-out, DeepEP where the cluster runs it, else FAST
// (Nest plans; Megatron-LM has no FAST dispatcher).
std::optional<search::PlanRecord> other_all_to_all(const Evaluation& e) {
  if (e.execution.ep <= 1) return std::nullopt;
  const std::vector<AllToAllAlgorithm> others =
      e.execution.a2a == AllToAllAlgorithm::Fanout
          ? std::vector<AllToAllAlgorithm>{AllToAllAlgorithm::DeepEp, AllToAllAlgorithm::Fast}
          : std::vector<AllToAllAlgorithm>{AllToAllAlgorithm::Fanout};
  for (AllToAllAlgorithm a2a : others) {
    Execution other = e.execution;
    other.a2a = a2a;
    try {
      validate_degrees(e.model, e.cluster, other, other.devices());
    } catch (const std::invalid_argument&) {
      continue;  // the plan cannot run that one
    }
    return search::price_plan_record(e.model, e.cluster, other, e.kind, e.rank_k);
  }
  return std::nullopt;
}

void print_table(const Evaluation& e, const search::PlanRecord& record, const PlanCost& cost,
                 const std::optional<search::PlanRecord>& other) {
  std::cout << fmt::format("# nestfast evaluate: {} ({:.1f}B parameters) on {} ({} GPUs)\n", e.model.name,
                           total_parameters(e.model) / 1e9, e.cluster.name, record.gpus);
  if (e.source) std::cout << fmt::format("# plan from {}\n", e.where);
  std::cout << "plan: " << degrees_text(record) << " optimizer=" << to_string(record.optimizer)
            << " a2a=" << to_string(record.a2a) << "\n";
  std::cout << price_text(record) << "\n";
  std::cout << breakdown_text(record);
  if (other)
    std::cout << fmt::format("  (EP all-to-all priced as {}: {:.4f} s, iteration {:.4f} s)\n", to_string(other->a2a),
                             other->breakdown.ep_comm_s, other->iteration_time_s);
  std::cout << fmt::format("sequences/s {:.3f}, HFU {:.1f}% (with recompute, {:.1f} TFLOP/s per GPU)\n",
                           cost.sequences_per_s, 100 * cost.hfu, cost.hfu * e.cluster.gpu.peak_flops_bf16 / 1e12);
  std::cout << stage_table(record, true);
  if (cost.feasible)
    std::cout << "feasible: yes\n";
  else
    std::cout << "feasible: NO — the plan does not fit: " << cost.infeasible_reason << "\n";
  if (e.source && e.source->iteration_time_s > 0) {
    std::cout << fmt::format("as printed: iteration {:.6f} s, peak memory {:.0f} bytes; priced now: {:.6f} s, {:.0f} bytes\n",
                             e.source->iteration_time_s, e.source->memory_peak_bytes, record.iteration_time_s,
                             std::round(record.memory_peak_bytes));
  }
  std::cout << megatron_text(megatron_launch(record));
}

nlohmann::json to_json(const Evaluation& e, const search::PlanRecord& record, const PlanCost& cost,
                       const std::optional<search::PlanRecord>& other) {
  nlohmann::json out = io::to_json(record);
  out["model_parameters"] = total_parameters(e.model);
  out["sequences_per_s"] = cost.sequences_per_s;
  out["hfu_pct"] = 100 * cost.hfu;
  out["model_flops"] = cost.model_flops;
  out["bottleneck_rank"] = cost.bottleneck_rank;
  if (other) {
    out["a2a_alternative"] = {{"a2a", to_string(other->a2a)},
                              {"ep_comm_s", other->breakdown.ep_comm_s},
                              {"iteration_time_s", other->iteration_time_s}};
  }
  return out;
}

}  // namespace

void register_evaluate(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<EvaluateOptions>();
  auto* command = app.add_subcommand("evaluate", "Price one given plan: time breakdown, throughput, MFU, memory per stage");
  command->add_option("--model", options->model,
                      "model preset name or .toml path (required without --plan; with it, overrides the file's)");
  command->add_option("--cluster", options->cluster,
                      "cluster preset name or .toml path (required without --plan; with it, overrides the file's)");
  auto* plan = command->add_option("--plan", options->plan_file,
                                   "price a plan that solve/query/evaluate --json printed (FILE.json), or one of a "
                                   "catalog's plans (FILE.h5, priced with the catalog's own model and cluster)");
  command->add_option("--pick", options->pick, "with --plan: which plan, KIND[:RANK_K] (default nest:0)")->needs(plan);
  command->add_option("--point", options->point, "with --plan: the sweep point of a query or catalog")->needs(plan);
  command->add_option("--plan-row", options->plan_row, "with --plan: the N-th plan of the file (0-based; /plans row)")
      ->needs(plan);
  auto* gpus = command->add_option("--gpus", options->gpus, "devices the plan uses");
  command->add_option("--tp", options->tp, "tensor-parallel degree");
  command->add_option("--pp", options->pp, "pipeline stages (pipeline ranks)");
  command->add_option("--dp", options->dp, "data-parallel degree (default gpus/(tp*cp*pp)); ep is carved out of it");
  command->add_option("--cp", options->cp, "context-parallel degree");
  command->add_option("--ep", options->ep, "expert-parallel degree (divides dp and the expert count)");
  command->add_option("--etp", options->etp,
                      "expert tensor-parallel degree: tp (the default) or, under --framework megatron-core, 1 "
                      "(whole experts; Megatron's --expert-tensor-parallel-size)");
  command->add_option("--sp", options->sp, "sequence parallelism: on|off");
  auto* gbs = command->add_option("--gbs", options->gbs, "global batch in sequences");
  command->add_option("--mbs", options->mbs, "micro-batch size in sequences");
  command->add_option("--vpp", options->vpp, "interleaved 1F1B chunks per pipeline rank (1 = plain 1F1B)");
  command->add_option("--seq", options->seq, "sequence length (default: the model's)");
  command->add_option("--recompute", options->recompute, "activation recompute: none|selective|full");
  command->add_option("--recompute-modules", options->recompute_modules,
                      "what a selective stage checkpoints (Megatron's --recompute-modules), a comma list of core_attn, "
                      "layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts (default core_attn)");
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
  command->add_option("--moe-imbalance", options->moe_imbalance, "hottest expert device's tokens / mean (>= 1)");
  add_pricing_options(*command, options->pricing);
  add_framework_option(*command, options->framework);
  command->add_option("--recompute-layers", options->recompute_layers,
                      "full recompute of only the first N blocks of each stage (Megatron's --recompute-method block); "
                      "0 = every block");
  command->add_flag("--json", options->json, "print one JSON object");
  // A plan file fixes the plan: the flags that describe one do not go with it.
  for (CLI::Option* option : command->get_options()) {
    const std::string name = option->get_name();
    if (name == "--plan" || name == "--pick" || name == "--point" || name == "--plan-row" || name == "--model" ||
        name == "--cluster" || name == "--json" || name == "--help") {
      continue;
    }
    option->excludes(plan);
  }
  command->callback([options, gpus, gbs, &context] {
    if (options->plan_file.empty()) {
      if (gpus->count() == 0) throw std::invalid_argument("--gpus: required (or give --plan FILE)");
      if (gbs->count() == 0) throw std::invalid_argument("--gbs: required (or give --plan FILE)");
    }
    const Evaluation evaluation = options->plan_file.empty() ? from_flags(*options) : from_plan_file(*options);
    const PlanCost cost = evaluate_plan(evaluation.model, evaluation.cluster, evaluation.execution);
    const search::PlanRecord record = search::plan_record(evaluation.model, evaluation.cluster, evaluation.execution,
                                                          cost, evaluation.kind, evaluation.rank_k);
    const std::optional<search::PlanRecord> other = other_all_to_all(evaluation);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      if (options->json)
        std::cout << to_json(evaluation, record, cost, other).dump(2) << "\n";
      else
        print_table(evaluation, record, cost, other);
    }
    context.exit_code = 0;
  });
}

}  // namespace nestfast::jobs
