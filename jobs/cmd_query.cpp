// nestfast query: the stored plans of one model at one GPU count, read-only.
#include <mpi.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "io/catalog/catalog_reader.hpp"
#include "io/catalog/catalog_types.hpp"
#include "jobs/catalog_plan_text.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/launch_file.hpp"

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

int run_query(const QueryOptions& options) {
  const io::CatalogReader reader(options.catalog);
  std::map<std::uint64_t, StoredPoint> points;
  bool model_known = false;
  for (const io::PlanRow& row : reader.plans()) {
    if (io::get_fixed(row.model) != options.model) continue;
    model_known = true;
    if (row.gpus != options.gpus) continue;
    if (!options.cluster.empty() && io::get_fixed(row.cluster) != options.cluster) continue;
    if (options.global_batch > 0 && row.global_batch != options.global_batch) continue;
    StoredPoint& point = points[row.point_id];
    point.rows.push_back(row);
    if (io::get_fixed(row.kind) == "nest" && row.rank_k == 0 && row.feasible != 0) {
      point.best_stages = reader.stages(row.stage_offset, row.stage_count);
      point.model = reader.model(io::get_fixed(row.model));
      point.hbm_bytes = reader.gpu_hbm_bytes(io::get_fixed(row.cluster));
    }
  }
  if (points.empty()) {
    throw std::invalid_argument(options.catalog + ": no stored plan for model '" + options.model + "'" +
                                (model_known ? " at " + std::to_string(options.gpus) + " GPUs" : std::string()) +
                                (options.cluster.empty() ? "" : " on cluster '" + options.cluster + "'") +
                                (options.global_batch > 0 ? " with global batch " + std::to_string(options.global_batch) : ""));
  }
  if (!options.launch.empty()) {
    if (points.size() != 1)
      throw std::invalid_argument("--launch: " + std::to_string(points.size()) +
                                  " sweep points match; narrow them with --cluster and --gbs");
    const StoredPoint& point = points.begin()->second;
    const io::PlanRow* best = nullptr;
    for (const io::PlanRow& row : point.rows)
      if (io::get_fixed(row.kind) == "nest" && row.rank_k == 0 && row.feasible != 0) best = &row;
    if (best == nullptr) throw std::invalid_argument("--launch: the sweep point has no feasible plan");
    LaunchRequest request;
    request.directory = options.launch;
    request.job_name = options.model + "-" + std::to_string(options.gpus) + "gpus";
    request.gpus = options.gpus;
    request.gpus_per_node = static_cast<int>(
        reader.u64_attribute_of("clusters/" + io::preset_link_name(io::get_fixed(best->cluster)), "gpus_per_node"));
    request.vocab = point.model.vocab;
    request.launch = stored_launch(point, *best);
    request.plan = point_json(point);
    write_launch_files(request);
  }
  if (options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [id, point] : points) out.push_back(point_json(point));
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    bool first = true;
    for (const auto& [id, point] : points) {
      std::printf("%s%s", first ? "" : "\n", point_text(point).c_str());
      first = false;
    }
  }
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
