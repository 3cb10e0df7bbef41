// The time model against published, measured training runs: every run of
// ../shared/calibration/published-runs.csv (read at test time from
// NESTFAST_SHARED_DIR) and of added-runs.csv beside this file is priced by
// evaluate_plan with the shipped GPU and cluster presets and the software
// its source describes (sources.toml), turned into the metric the source
// published (the row's `metric` formula), and compared with the measured
// value. Prints predicted vs measured per run and per source, and fails above
// 5% average or 10% maximum relative error over the gated sources. Nothing
// here is fitted: no constant per run, no fitting at test time.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/presets/presets.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_cost.hpp"

namespace nestfast {
namespace {

std::string shared_dir() {
  const char* from_env = std::getenv("NESTFAST_SHARED_DIR");
  return from_env != nullptr && *from_env != '\0' ? from_env : NESTFAST_SHARED_DIR;
}

std::string here() { return std::string(NESTFAST_SOURCE_DIR) + "/tests/calibration/published_runs"; }

// One CSV line: comma-separated, fields may be "quoted" (with commas inside).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back().push_back(c);
    }
  }
  return fields;
}

struct PublishedRun {
  std::string file;
  int line = 0;
  std::map<std::string, std::string> cells;

  const std::string& at(const std::string& key) const {
    const auto it = cells.find(key);
    if (it == cells.end()) throw std::runtime_error(file + ":" + std::to_string(line) + ": no column '" + key + "'");
    return it->second;
  }
  int integer(const std::string& key) const { return std::stoi(at(key)); }
  bool has(const std::string& key) const { return cells.count(key) != 0 && !cells.at(key).empty(); }
  bool published(const std::string& key) const { return at(key) != "not published"; }
};

std::vector<PublishedRun> read_runs(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::vector<PublishedRun> runs;
  std::vector<std::string> header;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = csv_fields(line);
    if (header.empty()) {
      header = fields;
      continue;
    }
    if (fields.size() != header.size())
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + std::to_string(fields.size()) +
                               " cells, the header has " + std::to_string(header.size()));
    PublishedRun run{path, number, {}};
    for (std::size_t i = 0; i < header.size(); ++i) run.cells[header[i]] = fields[i];
    runs.push_back(run);
  }
  return runs;
}

struct Source {
  std::string match;
  std::string cluster;
  Framework framework = Framework::Nest;  // megatron-core: Megatron's expert grid (ep over cp*dp)
  int expert_tp = 0;                      // --expert-tensor-parallel-size; 0 = tp
  AllToAllAlgorithm a2a = AllToAllAlgorithm::Fast;
  Attention attention = Attention::Flash;
  bool sp = false;
  int zero = 0;
  Overlap overlap;
  std::optional<Overlap> overlap_pp1;
  GradReduce grad_reduce = GradReduce::Fp32;
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // what the rows' selective recompute checkpoints
  MlpKind mlp = MlpKind::Gelu;
  bool tied_embeddings = false;
  bool dropout = true;
  bool fastest_when_unpublished = false;
  // What the source states about the settings its rows do not publish
  // (`recipe`: gated), and what its release's own scripts run (`script`:
  // printed beside). Unset parts are the fastest that fits; `interleaved`:
  // vpp > 1 when pp > 1 (at the fastest chunk count).
  struct Recipe {
    std::optional<int> micro_batch;
    std::optional<Recompute> recompute;
    bool interleaved = false;
  };
  std::optional<Recipe> recipe;
  std::optional<Recipe> script;
  bool gated = true;
  std::string reason;
};

Overlap overlap_of(const toml::array& names) {
  std::vector<std::string> list;
  for (const auto& name : names) list.push_back(name.value_or(std::string()));
  return list.empty() ? Overlap::none() : parse_overlap(list, "sources.toml overlap");
}

std::vector<Source> read_sources(const std::string& path) {
  const toml::table document = toml::parse_file(path);
  std::vector<Source> sources;
  for (const auto& node : *document["source"].as_array()) {
    const toml::table& entry = *node.as_table();
    Source source;
    source.match = entry["match"].value_or(std::string());
    source.cluster = entry["cluster"].value_or(std::string());
    source.framework = parse_framework(entry["framework"].value_or(std::string("nest")), "sources.toml framework");
    source.expert_tp = entry["etp"].value_or(0);
    source.a2a = parse_all_to_all(entry["a2a"].value_or(std::string("fast")), "sources.toml a2a");
    source.attention = parse_attention(entry["attention"].value_or(std::string("flash")), "sources.toml attention");
    source.sp = entry["sp"].value_or(false);
    source.zero = entry["zero"].value_or(0);
    source.overlap = overlap_of(*entry["overlap"].as_array());
    if (const auto* pp1 = entry["overlap_pp1"].as_array()) source.overlap_pp1 = overlap_of(*pp1);
    source.grad_reduce = parse_grad_reduce(entry["grad_reduce"].value_or(std::string("fp32")), "sources.toml grad_reduce");
    source.recompute_modules =
        parse_recompute_modules(entry["recompute_modules"].value_or(std::string("core_attn")), "sources.toml recompute_modules");
    source.mlp = entry["mlp"].value_or(std::string("gelu")) == "swiglu" ? MlpKind::Swiglu : MlpKind::Gelu;
    source.tied_embeddings = entry["tied_embeddings"].value_or(false);
    source.dropout = entry["dropout"].value_or(true);
    const std::string unpublished = entry["unpublished"].value_or(std::string());
    source.fastest_when_unpublished = unpublished == "fastest" || unpublished == "recipe";
    for (const char* which : {"recipe", "script"}) {
      const toml::table* table = entry[which].as_table();
      if (table == nullptr) continue;
      Source::Recipe recipe;
      if (const auto mbs = (*table)["mbs"].value<int>()) recipe.micro_batch = *mbs;
      if (const auto mode = (*table)["recompute"].value<std::string>())
        recipe.recompute = parse_recompute(*mode, std::string("sources.toml ") + which + ".recompute");
      recipe.interleaved = (*table)["interleaved"].value_or(false);
      (std::string(which) == "recipe" ? source.recipe : source.script) = recipe;
    }
    source.gated = entry["gated"].value_or(true);
    source.reason = entry["reason"].value_or(std::string());
    sources.push_back(source);
  }
  return sources;
}

const Source& source_of(const std::vector<Source>& sources, const PublishedRun& run) {
  for (const Source& source : sources)
    if (run.at("source").find(source.match) != std::string::npos) return source;
  throw std::runtime_error(run.file + ":" + std::to_string(run.line) + ": no entry in sources.toml matches '" +
                           run.at("source") + "' (describe how that source's software ran)");
}

// The row's model: its preset or model file (whose hyperparameters must be
// the row's), or a GPT of the row's size in the source's architecture.
ModelSpec model_of(const PublishedRun& run, const Source& source) {
  ModelSpec model;
  if (run.has("model")) {
    // A preset name, or a .toml beside this file (a model only a source uses).
    const std::string& name = run.at("model");
    model = io::load_model(name.ends_with(".toml") ? here() + "/" + name : name);
  } else {
    model.name = "run-line-" + std::to_string(run.line);
    model.num_layers = run.integer("layers");
    model.hidden = run.integer("hidden");
    model.ffn_hidden = 4 * model.hidden;
    model.heads = model.kv_heads = run.integer("heads");
    model.head_dim = model.hidden / model.heads;
    model.vocab = run.integer("vocab");
    model.seq_len = run.integer("seq");
    model.mlp = source.mlp;
    model.tied_embeddings = source.tied_embeddings;
    model.dropout = source.dropout;
  }
  EXPECT_EQ(model.num_layers, run.integer("layers")) << run.file << ":" << run.line;
  EXPECT_EQ(model.hidden, run.integer("hidden")) << run.file << ":" << run.line;
  EXPECT_EQ(model.heads, run.integer("heads")) << run.file << ":" << run.line;
  EXPECT_EQ(model.vocab, run.integer("vocab")) << run.file << ":" << run.line;
  return model;
}

// The published metric from an iteration time: the row's own formula
// (B = global batch, s = sequence, l = layers, h = hidden, V = vocabulary,
// N = parameters).
// The model terms both of Megatron-LM's FLOP counts read (metric_of):
// q = heads x head_dim, query groups per head, the SwiGLU factor 1.5, the
// MLP width (the expert width for MoE), routed experts per token, and the
// shared experts' width.
struct MegatronFlopTerms {
  double q, groups_per_head, gated, ffn, routed, shared;
};

MegatronFlopTerms megatron_flop_terms(const ModelSpec& model) {
  const bool moe = model.moe.enabled();
  return {model.heads * static_cast<double>(model.head_dim),
          static_cast<double>(model.kv_heads) / model.heads,
          model.mlp == MlpKind::Swiglu ? 1.5 : 1.0,
          static_cast<double>(moe ? model.moe.expert_ffn_hidden : model.ffn_hidden),
          moe ? static_cast<double>(model.moe.top_k) : 1.0,
          moe ? model.moe.shared_experts * static_cast<double>(model.moe.expert_ffn_hidden) : 0.0};
}

double metric_of(const PublishedRun& run, const ModelSpec& model, double seconds) {
  const std::string& metric = run.at("metric");
  const double B = run.integer("gbs"), s = run.integer("seq"), l = model.num_layers, h = model.hidden,
               V = model.vocab, gpus = run.integer("gpus");
  if (metric.rfind("iteration time", 0) == 0) return seconds;
  if (metric.find("96*B*s*l*h^2*(1+s/(6h)+V/(16*l*h))") != std::string::npos)
    return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) / (seconds * gpus) / 1e12;
  if (metric.find("72*B*s*l*h^2*(1+s/(6h)+V/(12*l*h))") != std::string::npos)
    return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) / (seconds * gpus) / 1e12;
  if (metric.find("(6*N+6*l*h*s)*B*s") != std::string::npos)
    return (6 * total_parameters(model) + 6 * l * h * s) * B * s / (seconds * gpus) / 1e12;
  if (metric.find("num_floating_point_operations of Megatron-LM core_r0.8/0.9") != std::string::npos) {
    // megatron/training/training.py:105 at 7f22e210cd (MCore v0.8 - v0.9):
    // 12 B s l h^2 ((1 + g/a + s/h) q/h + k F/h x 1.5 (SwiGLU) + shared
    // + V / (2 l h)), q = heads x head_dim, g = query groups, k = routed
    // experts per token, F = --ffn-hidden-size (the expert width for
    // Mixtral), no causal halving, the router not counted.
    const MegatronFlopTerms m = megatron_flop_terms(model);
    return 12 * B * s * l * h * h *
           ((1 + m.groups_per_head + s / h) * m.q / h + m.ffn / h * m.routed * m.gated + m.shared / h * m.gated +
            V / (2 * l * h)) /
           (seconds * gpus) / 1e12;
  }
  if (metric.find("num_floating_point_operations of Megatron-LM main since 8873b55d6a") != std::string::npos) {
    // megatron/training/training.py transformer_flops (since 8873b55d6a,
    // 2025-03-06; at 2fbd646651 of 2025-07-29 :230-391): per token 12 l h^2
    // (1 + g/a + s/(2h)) q/h (causal attention halved) + 12 l h k F x 1.5
    // (SwiGLU) + 6 h V; every block MoE, no shared experts, no MTP.
    const MegatronFlopTerms m = megatron_flop_terms(model);
    const double per_token = 12 * l * h * h * (1 + m.groups_per_head + s / (2 * h)) * m.q / h +
                             12 * l * h * m.routed * m.gated * m.ffn + 6 * h * V;
    return B * s * per_token / (seconds * gpus) / 1e12;
  }
  throw std::runtime_error(run.file + ":" + std::to_string(run.line) + ": unknown metric '" + metric + "'");
}

struct Priced {
  PlanCost cost;
  std::string settings;
};

// The plan of the row under the source's software; where micro-batch,
// interleaving or recompute are not published, what `recipe` fixes (if
// given), else the fastest setting that fits.
Priced price(const PublishedRun& run, const Source& source, const ModelSpec& model, const ClusterSpec& cluster,
             const std::optional<Source::Recipe>& given) {
  const Source::Recipe* recipe = given ? &*given : nullptr;
  Execution base;
  base.tp = run.integer("tp");
  base.pp = run.integer("pp");
  base.dp = run.integer("dp");
  base.cp = run.has("cp") ? run.integer("cp") : 1;
  base.ep = run.has("ep") ? run.integer("ep") : 1;
  base.framework = source.framework;
  base.expert_tp = source.expert_tp;
  base.a2a = source.a2a;
  base.global_batch = run.integer("gbs");
  base.seq_len = run.integer("seq");
  base.sp = (run.has("sp") ? run.at("sp") == "on" : source.sp) && base.tp > 1;
  base.zero_stage = source.zero;
  base.attention = source.attention;
  base.overlap = base.pp == 1 && source.overlap_pp1 ? *source.overlap_pp1 : source.overlap;
  base.grad_reduce = source.grad_reduce;
  base.recompute_modules = source.recompute_modules;
  EXPECT_EQ(base.devices(), run.integer("gpus")) << run.file << ":" << run.line;

  std::vector<int> micro_batches, vpps;
  std::vector<Recompute> recomputes;
  if (run.published("mbs")) {
    micro_batches = {run.integer("mbs")};
  } else if (recipe != nullptr && recipe->micro_batch) {
    micro_batches = {*recipe->micro_batch};
  } else {
    micro_batches = {1, 2, 4};
  }
  if (run.published("vpp")) {
    vpps = {run.integer("vpp")};
  } else {
    if (recipe == nullptr || !recipe->interleaved || base.pp == 1) vpps = {1};
    for (int v = 2; base.pp > 1 && v <= model.num_layers / base.pp; ++v)
      if (model.num_layers % (base.pp * v) == 0 && (recipe == nullptr || recipe->interleaved)) vpps.push_back(v);
  }
  if (run.published("recompute")) {
    recomputes = {parse_recompute(run.at("recompute"), run.file + " recompute")};
  } else if (recipe != nullptr && recipe->recompute) {
    recomputes = {*recipe->recompute};
  } else {
    recomputes = {Recompute::None, Recompute::Selective, Recompute::Full};
  }
  const bool search = micro_batches.size() * vpps.size() * recomputes.size() > 1;
  EXPECT_TRUE(!search || source.fastest_when_unpublished)
      << run.file << ":" << run.line << ": settings not published and the source says nothing about them";

  std::optional<Priced> best;
  for (int mbs : micro_batches) {
    for (int vpp : vpps) {
      for (Recompute recompute : recomputes) {
        Execution e = base;
        e.micro_batch = mbs;
        e.vpp = vpp;
        try {
          validate_degrees(model, cluster, e, e.devices());
        } catch (const std::invalid_argument&) {
          continue;  // e.g. a micro-batch count interleaving cannot split
        }
        const ExecutionLayout layout = compute_layout(cluster, e);
        if (run.has("stages")) {
          // The source's own split: chain ranges (0 = embedding, L+1 = head), ';'-separated.
          std::istringstream ranges(run.at("stages"));
          for (std::string range; std::getline(ranges, range, ';');) {
            StagePlan stage;
            const auto dash = range.find('-');
            stage.first_layer = std::stoi(range.substr(0, dash));
            stage.last_layer = std::stoi(range.substr(dash + 1));
            stage.recompute = recompute;
            e.stages.push_back(stage);
          }
          derive_stage_layout(layout, e);
        } else {
          e.stages = uniform_stages(model, layout, e.pp, e.vpp, recompute);
        }
        PlanCost cost = evaluate_plan(model, cluster, e);
        if (search && !cost.feasible) continue;
        if (!best || cost.iteration_time_s < best->cost.iteration_time_s) {
          char settings[64];
          std::snprintf(settings, sizeof settings, "mbs %d vpp %d %s", mbs, vpp, to_string(recompute));
          best = Priced{std::move(cost), settings};
        }
      }
    }
  }
  if (!best) throw std::runtime_error(run.file + ":" + std::to_string(run.line) + ": no setting of the run fits");
  return *best;
}

TEST(Calibration, PublishedRunsWithinFiveAndTenPercent) {
  std::vector<PublishedRun> runs = read_runs(shared_dir() + "/calibration/published-runs.csv");
  const std::size_t shared_runs = runs.size();
  for (PublishedRun& run : read_runs(here() + "/added-runs.csv")) runs.push_back(run);
  ASSERT_GE(shared_runs, 19u);
  const std::vector<Source> sources = read_sources(here() + "/sources.toml");

  struct SourceErrors {
    std::vector<double> errors;
    bool gated = true;
    std::string reason;
  };
  std::map<std::string, SourceErrors> by_source;
  std::map<std::string, std::vector<double>> by_gpu;
  std::map<std::string, std::vector<double>> script_by_source;  // sources with a script, priced at it
  std::vector<double> gated;
  std::printf("%-42s %-10s %6s %-22s %10s %10s %8s   %s\n", "source", "gpu", "gpus", "priced with", "predicted",
              "measured", "error", "(at the release script's settings, where the source has them)");
  for (const PublishedRun& run : runs) {
    const Source& source = source_of(sources, run);
    const ModelSpec model = model_of(run, source);
    const ClusterSpec cluster = io::load_cluster(source.cluster);
    const Priced priced = price(run, source, model, cluster, source.recipe);
    EXPECT_TRUE(priced.cost.feasible) << run.file << ":" << run.line << " ran, but is priced out of memory: "
                                      << priced.cost.infeasible_reason;
    const double predicted = metric_of(run, model, priced.cost.iteration_time_s);
    const double measured = std::stod(run.at("measured"));
    const double error = predicted / measured - 1;
    std::printf("%-42s %-10s %6d %-22s %10.2f %10.2f %+7.1f%%", source.match.c_str(), run.at("gpu").c_str(),
                run.integer("gpus"), priced.settings.c_str(), predicted, measured, 100 * error);
    if (source.script) {
      const Priced scripted = price(run, source, model, cluster, source.script);
      const double script_error = metric_of(run, model, scripted.cost.iteration_time_s) / measured - 1;
      std::printf("   (%s: %+.1f%%)", scripted.settings.c_str(), 100 * script_error);
      script_by_source[source.match].push_back(script_error);
    }
    std::printf("\n");
    SourceErrors& errors = by_source[source.match];
    errors.errors.push_back(error);
    errors.gated = source.gated;
    errors.reason = source.reason;
    if (source.gated) {
      gated.push_back(std::abs(error));
      by_gpu[run.at("gpu")].push_back(std::abs(error));
    }
  }
  const auto average = [](const std::vector<double>& values) {
    double sum = 0;
    for (double v : values) sum += std::abs(v);
    return sum / static_cast<double>(values.size());
  };
  const auto largest = [](const std::vector<double>& values) {
    double most = 0;
    for (double v : values) most = std::max(most, std::abs(v));
    return most;
  };
  std::printf("\n%-45s %5s %9s %9s %9s\n", "by source", "runs", "avg |err|", "max |err|", "mean err");
  for (const auto& [name, errors] : by_source) {
    double mean = 0;
    for (double e : errors.errors) mean += e / static_cast<double>(errors.errors.size());
    std::printf("%-45s %5zu %8.1f%% %8.1f%% %+8.1f%%%s\n", name.c_str(), errors.errors.size(),
                100 * average(errors.errors), 100 * largest(errors.errors), 100 * mean,
                errors.gated ? "" : "  (not gated)");
    if (!errors.gated) std::printf("    not gated: %s\n", errors.reason.c_str());
  }
  for (const auto& [name, errors] : script_by_source)
    std::printf("%-45s %5zu %8.1f%% %8.1f%%  (printed, not gated)\n", (name + " at the release script").c_str(),
                errors.size(), 100 * average(errors), 100 * largest(errors));
  for (const auto& [gpu, errors] : by_gpu)
    std::printf("%-45s %5zu %8.1f%% %8.1f%%\n", ("gated runs on " + gpu).c_str(), errors.size(), 100 * average(errors),
                100 * largest(errors));
  std::printf("all gated runs: %zu, average %.2f%%, max %.2f%% (target: <= 5%% and <= 10%%)\n", gated.size(),
              100 * average(gated), 100 * largest(gated));
  EXPECT_LE(average(gated), 0.05);
  EXPECT_LE(largest(gated), 0.10);
}

}  // namespace
}  // namespace nestfast
