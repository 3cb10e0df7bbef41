// nestfast query: the stored plans of one model at one GPU count, read-only.
#include <mpi.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "io/catalog/catalog_reader.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/launch_file.hpp"
#include "jobs/megatron_text.hpp"
#include "jobs/plan_text.hpp"
#include "solver/search/megatron_args.hpp"

namespace nestfast::jobs {
namespace {

struct QueryOptions {
  std::string catalog;
  std::string model;
  int gpus = 0;
  std::string cluster;
  int global_batch = 0;
  bool json = false;
  std::string launch;  // directory for launch.sbatch + plan.json of the best plan
};

struct StoredPoint {
  std::vector<search::PlanRecord> plans;
};

int run_query(const QueryOptions& options) {
  const io::CatalogReader reader(options.catalog);
  std::map<std::uint64_t, StoredPoint> points;
  std::set<int> gpu_counts;
  std::set<std::string> models;
  for (search::PlanRecord& record : reader.plan_records()) {
    models.insert(record.model);
    if (record.model != options.model) continue;
    if (!options.cluster.empty() && record.cluster != options.cluster) continue;
    if (options.global_batch > 0 && record.global_batch != options.global_batch) continue;
    gpu_counts.insert(record.gpus);
    if (record.gpus != options.gpus) continue;
    points[record.point_id.value_or(0)].plans.push_back(std::move(record));
  }
  if (points.empty()) {
    const bool model_known = models.contains(options.model);
    std::string counts = gpu_counts.empty() ? "none with these filters" : "";
    for (int count : gpu_counts) counts += (counts.empty() ? "" : ", ") + std::to_string(count);
    std::string names;
    for (const std::string& name : models) names += (names.empty() ? "" : ", ") + name;
    throw std::invalid_argument(
        options.catalog + ": no stored plan for model '" + options.model + "'" +
        (options.cluster.empty() ? "" : " on cluster '" + options.cluster + "'") +
        (options.global_batch > 0 ? " with global batch " + std::to_string(options.global_batch) : "") +
        (model_known ? " at " + std::to_string(options.gpus) + " GPUs; stored GPU counts: " + counts
                     : "; stored models: " + names));
  }
  // The stored line and environment are what solve printed; the notes and
  // the overlaps priced are derived from the stored plan again.
  std::map<std::string, ModelSpec> stored_models;
  for (auto& [id, point] : points) {
    for (search::PlanRecord& record : point.plans) {
      if (!record.feasible) continue;
      auto model = stored_models.find(record.model);
      if (model == stored_models.end()) model = stored_models.emplace(record.model, reader.model(record.model)).first;
      const Execution stored = search::execution_of(record);
      record.megatron_notes = search::megatron_arguments(model->second, stored).notes;
      record.overlap_priced = to_string(effective_overlap(stored, model->second));
    }
  }
  auto point_document = [](std::uint64_t id, const StoredPoint& point) {
    const search::PlanRecord& head = point.plans.front();
    nlohmann::json document = {{"point_id", id},          {"model", head.model},
                               {"cluster", head.cluster}, {"gpus", head.gpus},
                               {"global_batch", head.global_batch}, {"seq_len", head.seq_len}};
    document.update(point_json(point.plans));
    return document;
  };
  if (!options.launch.empty()) {
    if (points.size() != 1)
      throw std::invalid_argument("--launch: " + std::to_string(points.size()) +
                                  " sweep points match; narrow them with --cluster and --gbs");
    const auto& [id, point] = *points.begin();
    const search::PlanRecord* best = best_plan(point.plans);
    if (best == nullptr || !best->feasible) throw std::invalid_argument("--launch: the sweep point has no feasible plan");
    LaunchRequest request;
    request.directory = options.launch;
    request.job_name = options.model + "-" + std::to_string(options.gpus) + "gpus";
    request.gpus = options.gpus;
    const ClusterSpec cluster = reader.cluster(best->cluster);
    request.gpus_per_node = cluster.levels.empty() ? options.gpus : cluster.levels.front().group_size;
    request.vocab = stored_models.at(best->model).vocab;
    request.launch = megatron_launch(*best);
    request.plan = point_document(id, point);
    write_launch_files(request);
  }
  nlohmann::json documents = nlohmann::json::array();
  bool first = true;
  for (const auto& [id, point] : points) {
    const search::PlanRecord& head = point.plans.front();
    if (options.json) {
      documents.push_back(point_document(id, point));
    } else {
      std::printf("%s%s on %s (%d GPUs, global batch %d, seq %d), sweep point %llu\n%s", first ? "" : "\n",
                  head.model.c_str(), head.cluster.c_str(), head.gpus, head.global_batch, head.seq_len,
                  static_cast<unsigned long long>(id), point_text(point.plans).c_str());
    }
    first = false;
  }
  if (options.json) std::printf("%s\n", documents.dump(2).c_str());
  return 0;
}

}  // namespace

void register_query(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("query", "Print a stored plan from a catalog (read-only)");
  auto options = std::make_shared<QueryOptions>();
  command->add_option("catalog", options->catalog, "Catalog file (HDF5)")->required();
  command->add_option("--model", options->model, "Model name as stored (a preset name)")->required();
  command->add_option("--gpus", options->gpus, "GPU count")->required()->check(CLI::PositiveNumber);
  command->add_option("--cluster", options->cluster, "Only this cluster");
  command->add_option("--gbs", options->global_batch, "Only this global batch (sequences)")->check(CLI::PositiveNumber);
  command->add_flag("--json", options->json, "The same data as JSON");
  command->add_option("--launch", options->launch,
                      "Write DIR/launch.sbatch (Megatron-LM pretrain_gpt.py) and DIR/plan.json for the best plan");
  command->callback([&context, options] {
    // A query reads one file on one process; other ranks of an mpiexec launch stay quiet.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    context.exit_code = run_query(*options);
  });
}

}  // namespace nestfast::jobs
