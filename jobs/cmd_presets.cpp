// nestfast presets [--kind models|gpus|clusters] [--json]: the model, GPU and
// cluster presets on the search path, as one table per kind or as JSON (SI
// units: bytes, bytes/s, seconds, FLOP/s). Every preset is loaded, so a
// broken file shows up here as a one-line error (exit 2).
#include <fmt/format.h>
#include <mpi.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "io/presets/presets.hpp"
#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

namespace {

using io::PresetEntry;
using io::PresetKind;
using Row = std::vector<std::string>;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string mlp_name(MlpKind mlp) { return mlp == MlpKind::Swiglu ? "swiglu" : "gelu"; }

Row model_row(const PresetEntry& entry) {
  const auto& model = std::get<ModelSpec>(entry.spec);
  std::string moe = "-";
  if (model.moe.enabled()) {
    moe = fmt::format("{}x{} top-{}", model.moe.num_experts, model.moe.expert_ffn_hidden, model.moe.top_k);
    if (model.moe.shared_experts > 0) moe += fmt::format(" +{}", model.moe.shared_experts);
  }
  return {model.name, std::to_string(model.num_layers), std::to_string(model.hidden),
          std::to_string(model.ffn_hidden),
          fmt::format("{}/{}{}", model.heads, model.kv_heads, model.attention == AttentionKind::MultiLatent ? " mla" : ""),
          std::to_string(model.vocab), std::to_string(model.seq_len), mlp_name(model.mlp), moe, model.source};
}

Row gpu_row(const PresetEntry& entry) {
  const auto& gpu = std::get<GpuSpec>(entry.spec);
  return {gpu.name,
          fmt::format("{:g}", static_cast<double>(gpu.hbm_bytes) / kGiB),
          fmt::format("{:g}", gpu.hbm_bandwidth_Bps / 1e12),
          fmt::format("{:g}", gpu.peak_flops_bf16 / 1e12),
          gpu.peak_flops_fp8 > 0 ? fmt::format("{:g}", gpu.peak_flops_fp8 / 1e12) : "-",
          fmt::format("{:g}", gpu.peak_flops_fp32 / 1e12),
          gpu.source};
}

Row cluster_row(const PresetEntry& entry) {
  const auto& cluster = std::get<ClusterSpec>(entry.spec);
  std::string levels;
  for (const auto& level : cluster.levels) {
    if (!levels.empty()) levels += ", ";
    levels += fmt::format("{} x{} {:g} GB/s {:g} us", level.name,
                          level.group_size == 0 ? std::string("*") : std::to_string(level.group_size),
                          level.bandwidth_Bps / 1e9, level.latency_s * 1e6);
    if (level.oversubscription > 1) levels += fmt::format(" {:g}:1", level.oversubscription);
    if (level.efficiency < 1) levels += fmt::format(" eff {:g}", level.efficiency);
  }
  if (cluster.deepep != DeepEpSupport::None) levels += fmt::format("; DeepEP {}", to_string(cluster.deepep));
  return {cluster.name, cluster.gpu.name, fmt::format("{:g}", static_cast<double>(cluster.gpu.hbm_bytes) / kGiB),
          levels, cluster.source};
}

void print_table(const std::string& title, const Row& header, const std::vector<Row>& rows) {
  std::vector<std::size_t> widths(header.size());
  for (std::size_t column = 0; column < header.size(); ++column) widths[column] = header[column].size();
  for (const auto& row : rows) {
    for (std::size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  const auto print_row = [&widths](const Row& row) {
    std::string line;
    for (std::size_t column = 0; column < row.size(); ++column) {
      // The last column (the source) is not padded: no trailing blanks.
      line += column + 1 == row.size() ? row[column] : fmt::format("{:<{}}  ", row[column], widths[column]);
    }
    std::cout << line << '\n';
  };
  std::cout << title << " (" << rows.size() << ")\n";
  print_row(header);
  for (const auto& row : rows) print_row(row);
}

void print_tables(const std::vector<PresetEntry>& entries) {
  std::map<PresetKind, std::vector<Row>> rows;
  for (const auto& entry : entries) {
    switch (entry.kind) {
      case PresetKind::Model: rows[entry.kind].push_back(model_row(entry)); break;
      case PresetKind::Gpu: rows[entry.kind].push_back(gpu_row(entry)); break;
      case PresetKind::Cluster: rows[entry.kind].push_back(cluster_row(entry)); break;
    }
  }
  bool first = true;
  for (const auto& [kind, kind_rows] : rows) {
    if (!first) std::cout << '\n';
    first = false;
    switch (kind) {
      case PresetKind::Model:
        print_table("models", {"NAME", "LAYERS", "HIDDEN", "FFN", "HEADS/KV", "VOCAB", "SEQ", "MLP", "MOE", "SOURCE"},
                    kind_rows);
        break;
      case PresetKind::Gpu:
        print_table("gpus", {"NAME", "HBM_GiB", "HBM_TB/s", "BF16_TFLOPS", "FP8_TFLOPS", "FP32_TFLOPS", "SOURCE"},
                    kind_rows);
        break;
      case PresetKind::Cluster:
        print_table("clusters", {"NAME", "GPU", "HBM_GiB", "LEVELS (innermost first)", "SOURCE"}, kind_rows);
        break;
    }
  }
}

nlohmann::json to_json(const ModelSpec& model) {
  nlohmann::json json = {{"name", model.name},
                         {"source", model.source},
                         {"layers", model.num_layers},
                         {"hidden", model.hidden},
                         {"ffn_hidden", model.ffn_hidden},
                         {"heads", model.heads},
                         {"kv_heads", model.kv_heads},
                         {"head_dim", model.head_dim},
                         {"vocab", model.vocab},
                         {"seq_len", model.seq_len},
                         {"mlp", mlp_name(model.mlp)},
                         {"tied_embeddings", model.tied_embeddings},
                         {"dtype_bytes", model.dtype_bytes}};
  if (model.attention == AttentionKind::MultiLatent) {
    json["mla"] = {{"q_lora_rank", model.mla.q_lora_rank},
                   {"kv_lora_rank", model.mla.kv_lora_rank},
                   {"qk_nope_head_dim", model.mla.qk_head_dim},
                   {"qk_rope_head_dim", model.mla.qk_rope_head_dim},
                   {"v_head_dim", model.mla.v_head_dim}};
  }
  if (model.moe.enabled()) {
    json["moe"] = {{"experts", model.moe.num_experts},
                   {"top_k", model.moe.top_k},
                   {"expert_ffn_hidden", model.moe.expert_ffn_hidden},
                   {"shared_experts", model.moe.shared_experts},
                   {"first_dense_layers", model.moe.first_dense_layers},
                   {"layer_interval", model.moe.layer_interval}};
  }
  return json;
}

nlohmann::json to_json(const GpuSpec& gpu) {
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& point : gpu.matmul_efficiency) {
    curve.push_back({{"flops", point.flops}, {"efficiency", point.efficiency}});
  }
  return {{"name", gpu.name},
          {"source", gpu.source},
          {"hbm_bytes", gpu.hbm_bytes},
          {"hbm_bandwidth_Bps", gpu.hbm_bandwidth_Bps},
          {"peak_flops_bf16", gpu.peak_flops_bf16},
          {"peak_flops_fp8", gpu.peak_flops_fp8},
          {"peak_flops_fp32", gpu.peak_flops_fp32},
          {"hbm_efficiency", gpu.hbm_efficiency},
          {"matmul_efficiency", curve}};
}

nlohmann::json to_json(const ClusterSpec& cluster) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& level : cluster.levels) {
    levels.push_back({{"name", level.name},
                      {"group_size", level.group_size},
                      {"bandwidth_Bps", level.bandwidth_Bps},
                      {"latency_s", level.latency_s},
                      {"oversubscription", level.oversubscription},
                      {"efficiency", level.efficiency},
                      {"efficiency_source", level.efficiency_source}});
  }
  return {{"name", cluster.name},     {"source", cluster.source}, {"gpu", to_json(cluster.gpu)},
          {"levels", levels},         {"deepep", to_string(cluster.deepep)},
          {"deepep_source", cluster.deepep_source}};
}

void print_json(const std::vector<PresetEntry>& entries, std::optional<PresetKind> only) {
  nlohmann::json json = nlohmann::json::object();
  for (const PresetKind kind : io::kAllPresetKinds) {
    if (!only || kind == *only) json[std::string(io::preset_kind_folder(kind))] = nlohmann::json::array();
  }
  for (const auto& entry : entries) {
    nlohmann::json item = std::visit([](const auto& spec) { return to_json(spec); }, entry.spec);
    item["path"] = entry.path.string();
    item["summary"] = entry.summary;
    json[std::string(io::preset_kind_folder(entry.kind))].push_back(std::move(item));
  }
  std::cout << json.dump(2) << '\n';
}

std::optional<PresetKind> kind_from_folder(const std::string& folder) {
  for (const PresetKind kind : io::kAllPresetKinds) {
    if (io::preset_kind_folder(kind) == folder) return kind;
  }
  return std::nullopt;
}

}  // namespace

void register_presets(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("presets", "List the model, GPU and cluster presets");
  auto kind = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  command->add_option("--kind", *kind, "Only this kind")->check(CLI::IsMember({"models", "gpus", "clusters"}));
  command->add_flag("--json", *json, "Print JSON (SI units) instead of tables");
  command->callback([&context, kind, json] {
    const std::optional<PresetKind> only = kind->empty() ? std::nullopt : kind_from_folder(*kind);
    const auto entries = io::list_presets(only);  // every rank checks the files; rank 0 prints
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      if (*json) print_json(entries, only);
      else print_tables(entries);
    }
    context.exit_code = 0;
  });
}

}  // namespace nestfast::jobs
