#include "jobs/catalog/job.hpp"

#include <boost/serialization/utility.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "comm/exec/communicator.hpp"
#include "io/archive/archive.hpp"
#include "io/archive/job_serialization.hpp"
#include "io/catalog/catalog_writer.hpp"
#include "io/catalog/checkpoint_file.hpp"
#include "io/job/job_file.hpp"
#include "jobs/catalog/agreement.hpp"
#include "jobs/catalog/assemble.hpp"
#include "jobs/catalog/checkpoint.hpp"
#include "jobs/catalog/progress.hpp"
#include "jobs/catalog/start.hpp"
#include "jobs/catalog/sweep.hpp"
#include "jobs/catalog/validation.hpp"
#include "jobs/catalog/work_items.hpp"
#include "jobs/catalog/work_points.hpp"
#include "jobs/catalog/work_queue.hpp"
#include "jobs/default_job.hpp"
#include "jobs/dp_device.hpp"

namespace boost::serialization {

template <class Archive>
void serialize(Archive& ar, nestfast::jobs::JobBundle& bundle, unsigned) {
  ar& bundle.job& bundle.models& bundle.clusters& bundle.slice_index& bundle.slice_count;
}

}  // namespace boost::serialization

namespace nestfast::jobs {
namespace {

using comm::rank_of;
using comm::size_of;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

CatalogReport run_catalog_job(MPI_Comm comm, const CatalogRequest& request) {
  const auto started = Clock::now();
  const int rank = rank_of(comm);
  const bool root = rank == 0;

  // 1. Rank 0 reads and checks everything; the verdict is shared.
  JobBundle bundle;
  std::optional<JobWork> work;
  Start start;
  agree(comm, [&] {
    if (!root) return;
    io::JobSpec job = request.job_path.empty() ? io::parse_job(kDefaultJobToml, "<embedded default job>")
                                               : io::load_job_file(request.job_path);
    check_job_fits_launch(request, job, size_of(comm));
    bundle = load_bundle(job, request.slice_index, request.slice_count);
    check_preset_names(bundle);
    work.emplace(build_work(bundle));
    start = decide_start(request, bundle, WorkLayout(*work));
  });
  io::broadcast_archive(comm, 0, bundle);
  io::broadcast_archive(comm, 0, start.out);
  io::broadcast_archive(comm, 0, start.done);
  int resume = start.resume ? 1 : 0;
  MPI_Bcast(&resume, 1, MPI_INT, 0, comm);
  start.resume = resume != 0;
  agree(comm, [&] {
    if (!work) work.emplace(build_work(bundle));
  });
  const WorkLayout layout(*work);
  const io::JobSpec& job = bundle.job;

  // Every rank picks its own device; "--gpu on" without one fails on all ranks.
  DpDevice dp_device;
  agree(comm, [&] { dp_device = choose_dp_device(request.gpu); });

  // 2. The checkpoint, created or reopened collectively.
  const std::string checkpoint_file = checkpoint_path(start.out);
  const io::CheckpointShape shape{layout.items(), layout.values()};
  std::optional<io::CheckpointFile> checkpoint;
  agree(comm, [&] {
    checkpoint.emplace(start.resume ? io::CheckpointFile::reopen(comm, checkpoint_file, shape)
                                    : io::CheckpointFile::create(comm, checkpoint_file, job_fingerprint_of(bundle), shape));
  });

  // 3. The sweep: DP instances, then the baselines (they need each point's DP statistics).
  const auto sweep_started = Clock::now();
  std::uint64_t already = 0;
  for (auto flag : start.done) already += flag;
  WorkQueue queue(comm);
  if (root) queue.fetch_add(WorkQueue::kFinished, already);
  ProgressLine progress(bundle.slice_count > 1 ? "catalog slice " + std::to_string(bundle.slice_index) + "/" +
                                                     std::to_string(bundle.slice_count)
                                               : "catalog",
                        layout.items(), already, root && request.progress);
  if (root && start.resume) {
    std::fprintf(stderr, "catalog: resuming %s: %llu of %llu work items already finished\n", checkpoint_file.c_str(),
                 static_cast<unsigned long long>(already), static_cast<unsigned long long>(layout.items()));
  }
  SweepContext context{comm,        *work, layout,   start.done,           *checkpoint,
                       queue,       progress, threads_per_rank(comm), dp_device};
  run_instance_phase(context);
  run_baseline_phase(context);
  if (root) progress.finish(queue.read(WorkQueue::kFinished));
  const double sweep_s = seconds_since(sweep_started);

  // 4. Each rank rebuilds the rows of a contiguous block of points and writes them.
  const std::size_t points = work->points.size();
  const std::size_t ranks = static_cast<std::size_t>(size_of(comm));
  const std::size_t own_first = points * static_cast<std::size_t>(rank) / ranks;
  const std::size_t own_end = points * (static_cast<std::size_t>(rank) + 1) / ranks;
  std::vector<io::PlanEntry> mine;
  std::vector<comm::ValidationRequest> requests;
  agree(comm, [&] {
    for (std::size_t point = own_first; point < own_end; ++point) {
      const std::vector<search::BaselineResult> baselines =
          layout.has_baselines() ? read_baselines(*checkpoint, layout, point, job.search.baselines)
                                 : std::vector<search::BaselineResult>{};
      AssembledPoint assembled =
          assemble_point(work->points[point], read_instances(*checkpoint, layout, point), baselines, job.search.top_k);
      const io::PlanRow& best = assembled.plans.front().row;
      const bool wanted = job.validate.all_plans || (best.feasible != 0 && best.ep > 1);
      if (best.feasible != 0 && wanted) {
        comm::ValidationRequest validation = assembled.best_all_to_all.value_or(comm::ValidationRequest{});
        if (!assembled.best_all_to_all) validation.ep = best.ep;
        validation.plan_row = mine.size();  // made global after write_plans
        requests.push_back(validation);
      }
      for (auto& plan : assembled.plans) mine.push_back(std::move(plan));
    }
  });
  // 5. The catalog, written from scratch (a leftover OUT.partial of an
  // interrupted final phase is replaced).
  std::optional<io::CatalogWriter> writer;
  std::uint64_t first_row = 0;
  agree(comm, [&] {
    const io::CatalogIdentity identity{job.name, job.text, work->sweep_points,
                                       bundle.slice_count > 1 ? std::to_string(bundle.slice_index) + "/" +
                                                                    std::to_string(bundle.slice_count)
                                                              : std::string()};
    writer.emplace(io::CatalogWriter::create(comm, start.out + ".partial", identity));
    first_row = writer->write_plans(mine);
    std::vector<ModelSpec> models;
    for (const auto& entry : bundle.models) models.push_back(entry.second);
    std::vector<ClusterSpec> clusters;
    for (const auto& entry : bundle.clusters) clusters.push_back(entry.second);
    writer->write_models(models);
    writer->write_clusters(clusters);
  });
  for (auto& validation : requests) validation.plan_row += first_row;

  // 6. Validation of the chosen plans on this job's own ranks (run only).
  CatalogReport report;
  if (request.validate && job.validate.enabled) {
    std::vector<comm::ValidationRequest> all_requests;
    for (auto& part : io::gather_archives(comm, 0, requests)) {
      all_requests.insert(all_requests.end(), part.begin(), part.end());
    }
    io::broadcast_archive(comm, 0, all_requests);
    report.validation = run_plan_validation(comm, job.validate, all_requests, bundle.clusters);
  }
  agree(comm, [&] {
    writer->write_validation(report.validation);
    writer->complete(start.out);
  });
  // 7. The catalog is in place: its checkpoint and lock go.
  agree(comm, [&] { checkpoint->remove(); });
  if (root) start.lock.release_and_remove();

  // 8. Rank 0 collects the rows for the summary table.
  for (auto& part : io::gather_archives(comm, 0, mine)) {
    report.plans.insert(report.plans.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  report.path = start.out;
  report.job_name = job.name;
  report.ranks = size_of(comm);
  report.points = points;
  report.items = layout.items();
  report.items_resumed = already;
  report.sweep_s = sweep_s;
  report.wall_s = seconds_since(started);
  return report;
}

}  // namespace nestfast::jobs
