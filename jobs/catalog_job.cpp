#include "jobs/catalog_job.hpp"

#include <omp.h>
#include <unistd.h>

#include <boost/serialization/utility.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "comm/exec/communicator.hpp"
#include "io/archive/archive.hpp"
#include "io/archive/job_serialization.hpp"
#include "io/catalog/catalog_writer.hpp"
#include "io/job/job_file.hpp"
#include "jobs/catalog_agreement.hpp"
#include "jobs/catalog_assemble.hpp"
#include "jobs/catalog_progress.hpp"
#include "jobs/catalog_validation.hpp"
#include "jobs/default_job.hpp"
#include "jobs/dp_device.hpp"
#include "jobs/work_items.hpp"
#include "jobs/work_points.hpp"
#include "jobs/work_queue.hpp"
#include "solver/search/search_context.hpp"

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

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// DP instance items one rank claims at once when its DP runs on a GPU.
constexpr std::uint64_t kGpuClaimItems = 4096;

// Finished items reach /checkpoint at least this often (NESTFAST_CHECKPOINT_INTERVAL overrides, in seconds).
constexpr double kCheckpointInterval_s = 1.0;

double checkpoint_interval_s() {
  const char* text = std::getenv("NESTFAST_CHECKPOINT_INTERVAL");
  if (text == nullptr) return kCheckpointInterval_s;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' && value >= 0 && value < 1e6 ? value : kCheckpointInterval_s;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Threads per rank: OMP_NUM_THREADS when set, else the node's cores shared by its ranks.
int threads_per_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  const int ranks_on_node = size_of(node);
  MPI_Comm_free(&node);
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return std::max(1, omp_get_max_threads());
  return std::max(1, omp_get_num_procs() / ranks_on_node);
}

std::string part_file_name(const std::string& out, int index, int count) {
  const fs::path path(out);
  const std::string stem = path.extension() == ".h5" ? path.stem().string() : path.filename().string();
  return (path.parent_path() / (stem + ".part" + std::to_string(index) + "of" + std::to_string(count) + ".h5")).string();
}

std::uint64_t fingerprint_of(const JobBundle& bundle) {
  std::uint64_t hash = io::job_fingerprint(bundle.job);
  for (const std::uint64_t part : {static_cast<std::uint64_t>(bundle.slice_index), static_cast<std::uint64_t>(bundle.slice_count)}) {
    hash = (hash ^ part) * 1099511628211ULL;
  }
  return hash;
}

// Rank 0's checks of the output before anything is written.
void check_output(const std::string& out, bool force) {
  const fs::path path(out);
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code error;
  if (!fs::is_directory(dir, error)) throw std::invalid_argument(out + ": the output directory does not exist");
  if (::access(dir.c_str(), W_OK) != 0) throw std::invalid_argument(out + ": the output directory is not writable");
  if (fs::is_directory(path, error)) throw std::invalid_argument(out + ": is a directory, not a catalog file");
  if (fs::exists(path, error) && !force) {
    throw std::invalid_argument(out + ": a finished catalog exists; pass --force to overwrite it or --out to write elsewhere");
  }
}

std::vector<std::string> names_too_long(const JobBundle& bundle) {
  std::vector<std::string> bad;
  for (const auto& [key, model] : bundle.models) {
    if (model.name.size() >= io::kNameChars) bad.push_back(model.name);
  }
  for (const auto& [key, cluster] : bundle.clusters) {
    if (cluster.name.size() >= io::kNameChars) bad.push_back(cluster.name);
  }
  return bad;
}

// Finished items waiting to go into /checkpoint; written at most once per interval.
class CheckpointRecorder {
 public:
  explicit CheckpointRecorder(io::CatalogWriter& writer)
      : writer_(writer), interval_s_(checkpoint_interval_s()), last_write_(Clock::now()) {}

  void add(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset, std::vector<double> values) {
    if (count > 0) runs_.push_back({first, count, value_offset, std::move(values)});
  }
  void write_if_due() {
    if (seconds_since(last_write_) >= interval_s_) write();
  }
  void write() {
    for (const Run& run : runs_) writer_.record_finished(run.first, run.count, run.value_offset, run.values);
    runs_.clear();
    last_write_ = Clock::now();
  }

 private:
  struct Run {
    std::uint64_t first;
    std::uint64_t count;
    std::uint64_t value_offset;
    std::vector<double> values;
  };
  io::CatalogWriter& writer_;
  double interval_s_;
  std::vector<Run> runs_;
  Clock::time_point last_write_;
};

struct Phase {
  WorkQueue::Counter counter;
  std::uint64_t first_item;  // the phase's items are [first_item, first_item + items)
  std::uint64_t items;
  // The order in which they are handed out (offsets from first_item); empty = in item order.
  std::vector<std::uint64_t> claim_order;
  std::uint64_t claim_size = 0;  // items claimed at once; 0: a few per thread
};

// Computes the values of the sorted items `todo` into `values`, which start
// at the value offset `base`; the first error goes to `failure`.
using ChunkCompute = std::function<void(const std::vector<std::uint64_t>& todo, std::uint64_t base,
                                        std::vector<double>& values, std::string& failure)>;

struct SweepContext {
  MPI_Comm comm;
  const JobWork& work;
  const WorkLayout& layout;
  const std::vector<std::uint8_t>& done_at_start;
  io::CatalogWriter& writer;
  WorkQueue& queue;
  ProgressLine& progress;
  int threads;
  DpDevice dp_device;
};

// Item `item`'s values in a chunk's `values`, which start at the value offset `base`.
std::span<double> item_values(const SweepContext& context, std::vector<double>& values, std::uint64_t base,
                              std::uint64_t item) {
  return std::span<double>(values).subspan(context.layout.value_offset(item) - base, context.layout.value_count(item));
}

// A DP instance item: its sweep point's problem and the instance.
struct InstanceItem {
  const search::SolveProblem& problem;
  const search::DpInstance& instance;
};

InstanceItem instance_item(const SweepContext& context, std::uint64_t item) {
  const std::size_t point = context.layout.point_of(item);
  const PointWork& point_work = context.work.points[point];
  return {point_work.problem, point_work.instances[item - context.layout.first_instance_item(point)]};
}

// One item at a time on the context's OpenMP threads.
ChunkCompute item_by_item(const SweepContext& context,
                          const std::function<void(std::uint64_t, std::span<double>)>& compute) {
  return [&context, compute](const std::vector<std::uint64_t>& todo, std::uint64_t base, std::vector<double>& values,
                             std::string& failure) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(context.threads)
    for (std::size_t t = 0; t < todo.size(); ++t) {
      try {
        compute(todo[t], item_values(context, values, base, todo[t]));
      } catch (const std::exception& error) {
#pragma omp critical(nestfast_catalog_failure)
        if (failure.empty()) failure = error.what();
      }
    }
  };
}

// DP instance items: layouts and tables on the OpenMP threads, then every
// item's DP runs together through the device's batch runner.
ChunkCompute instances_in_batches(const SweepContext& context) {
  return [&context](const std::vector<std::uint64_t>& todo, std::uint64_t base, std::vector<double>& values,
                    std::string& failure) {
    std::vector<search::PreparedInstance> prepared(todo.size());
    std::vector<search::PreparedItem> items(todo.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(context.threads)
    for (std::size_t t = 0; t < todo.size(); ++t) {
      try {
        const InstanceItem item = instance_item(context, todo[t]);
        prepared[t] = search::prepare_instance(item.problem, item.instance);
        items[t] = {&item.problem, &item.instance, prepared[t].layout.get(), prepared[t].table.get()};
      } catch (const std::exception& error) {
#pragma omp critical(nestfast_catalog_failure)
        if (failure.empty()) failure = error.what();
      }
    }
    if (!failure.empty()) return;
    try {
      const std::vector<search::InstanceResult> results =
          search::solve_prepared_batch(items, search::kDpInfinity, true, context.dp_device.runner);
      for (std::size_t t = 0; t < todo.size(); ++t) encode_instance(results[t], item_values(context, values, base, todo[t]));
    } catch (const std::exception& error) {
      failure = error.what();
    }
  };
}

// Claims chunks of a phase's items until none are left, computes the
// unfinished ones with `compute` and records them. `prepare` runs first on
// the calling thread (the only one that may touch HDF5).
void run_phase(SweepContext& context, const Phase& phase,
               const std::function<void(const std::vector<std::uint64_t>&)>& prepare, const ChunkCompute& compute) {
  const std::uint64_t ranks = static_cast<std::uint64_t>(size_of(context.comm));
  const std::uint64_t threads = static_cast<std::uint64_t>(context.threads);
  const std::uint64_t chunk =
      phase.claim_size > 0 ? phase.claim_size
                           : threads * std::clamp<std::uint64_t>(phase.items / (ranks * threads * 64), 1, 64);
  CheckpointRecorder recorder(context.writer);
  const bool root = rank_of(context.comm) == 0;
  std::string failure;
  while (failure.empty()) {
    const std::uint64_t start = context.queue.fetch_add(phase.counter, chunk);
    if (start >= phase.items) break;
    const std::uint64_t end = std::min(start + chunk, phase.items);
    std::vector<std::uint64_t> todo;
    for (std::uint64_t i = start; i < end; ++i) {
      const std::uint64_t item = phase.first_item + (phase.claim_order.empty() ? i : phase.claim_order[i]);
      if (context.done_at_start[item] == 0) todo.push_back(item);
    }
    std::sort(todo.begin(), todo.end());
    if (!todo.empty()) {
      prepare(todo);
      const std::uint64_t base = context.layout.value_offset(todo.front());
      std::vector<double> values(context.layout.value_offset(todo.back() + 1) - base, 0.0);
      compute(todo, base, values, failure);
      if (!failure.empty()) break;
      // Record runs of consecutive items (items finished earlier split them).
      std::size_t run_start = 0;
      for (std::size_t t = 1; t <= todo.size(); ++t) {
        if (t == todo.size() || todo[t] != todo[t - 1] + 1) {
          const std::uint64_t first = todo[run_start];
          const std::uint64_t offset = context.layout.value_offset(first);
          const std::uint64_t stop = context.layout.value_offset(todo[t - 1] + 1);
          recorder.add(first, t - run_start, offset,
                       std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(offset - base),
                                           values.begin() + static_cast<std::ptrdiff_t>(stop - base)));
          run_start = t;
        }
      }
      recorder.write_if_due();
      context.queue.fetch_add(WorkQueue::kFinished, todo.size());
    }
    if (root) context.progress.update(context.queue.read(WorkQueue::kFinished));
  }
  if (failure.empty()) recorder.write();
  agree_on_failure(context.comm, failure.empty() ? 0 : kExitRuntimeError, failure);
  context.writer.flush();
}

search::SearchStats summed_stats(const std::vector<DecodedInstance>& instances) {
  search::SearchStats total;
  for (const DecodedInstance& item : instances) {
    const search::SearchStats& s = item.stats;
    total.instances += s.instances;
    total.feasible_instances += s.feasible_instances;
    total.dp_runs += s.dp_runs;
    total.states += s.states;
    total.transitions += s.transitions;
    total.pruned_memory += s.pruned_memory;
    total.pruned_params += s.pruned_params;
    total.pruned_bound += s.pruned_bound;
    total.plans_evaluated += s.plans_evaluated;
  }
  return total;
}

// Baseline items, costliest first (a point's DP instance count stands in for
// the cost of its Phaze DP and MCMC budget), so no long item starts last.
std::vector<std::uint64_t> largest_first(const JobWork& work) {
  std::vector<std::uint64_t> order(work.points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
    return work.points[a].instances.size() > work.points[b].instances.size();
  });
  return order;
}

// The decoded instance items of a local point, read from /checkpoint (all must be finished).
std::vector<DecodedInstance> read_instances(const io::CatalogWriter& writer, const WorkLayout& layout, std::size_t point) {
  const std::uint64_t first = layout.first_instance_item(point);
  const std::uint64_t end = layout.end_instance_item(point);
  const std::vector<std::uint8_t> done = writer.read_done(first, end - first);
  if (std::find(done.begin(), done.end(), 0) != done.end()) {
    throw std::runtime_error("point " + std::to_string(point) + " has unfinished work items after the sweep");
  }
  const std::uint64_t base = layout.value_offset(first);
  const std::vector<double> values = writer.read_values(base, layout.value_offset(end) - base);
  std::vector<DecodedInstance> instances;
  instances.reserve(end - first);
  for (std::uint64_t item = first; item < end; ++item) {
    instances.push_back(decode_instance(std::span<const double>(values).subspan(layout.value_offset(item) - base,
                                                                                layout.value_count(item))));
  }
  return instances;
}

struct Start {
  bool resume = false;
  std::string out;
  std::vector<std::uint8_t> done;
};

}  // namespace

std::pair<int, int> parse_slice(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used_index = 0;
    std::size_t used_count = 0;
    const int index = std::stoi(text.substr(0, slash), &used_index);
    const int count = std::stoi(text.substr(slash + 1), &used_count);
    if (used_index != slash || used_count != text.size() - slash - 1 || count < 1 || index < 0 || index >= count) {
      throw std::invalid_argument("range");
    }
    return {index, count};
  } catch (const std::exception&) {
    throw std::invalid_argument("--slice: \"" + text + "\" is not I/N with 0 <= I < N");
  }
}

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
    bundle = load_bundle(job, request.slice_index, request.slice_count);
    if (const auto bad = names_too_long(bundle); !bad.empty()) {
      throw std::invalid_argument(job.source + ": preset name '" + bad.front() + "' is longer than " +
                                  std::to_string(io::kNameChars - 1) + " characters");
    }
    work.emplace(build_work(bundle));
    start.out = !request.out.empty()      ? request.out
                : request.slice_count > 1 ? part_file_name(job.out, request.slice_index, request.slice_count)
                                          : job.out;
    check_output(start.out, request.force);
    const WorkLayout layout(*work);
    const std::string partial = start.out + ".partial";
    std::error_code error;
    if (fs::exists(partial, error) && !request.force) {
      start.done = io::read_partial_checkpoint(partial, fingerprint_of(bundle), {layout.items(), layout.values()});
      start.resume = true;
    } else {
      start.done.assign(layout.items(), 0);
    }
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

  // 2. The partial catalog, created or reopened collectively.
  const std::string partial = start.out + ".partial";
  const io::CheckpointShape shape{layout.items(), layout.values()};
  std::optional<io::CatalogWriter> writer;
  agree(comm, [&] {
    if (start.resume) {
      writer.emplace(io::CatalogWriter::reopen(comm, partial, shape));
    } else {
      io::CatalogIdentity identity{job.name, job.text, fingerprint_of(bundle), work->sweep_points,
                                   bundle.slice_count > 1 ? std::to_string(bundle.slice_index) + "/" +
                                                                std::to_string(bundle.slice_count)
                                                          : std::string()};
      writer.emplace(io::CatalogWriter::create(comm, partial, identity, shape));
    }
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
    std::fprintf(stderr, "catalog: resuming %s: %llu of %llu work items already finished\n", partial.c_str(),
                 static_cast<unsigned long long>(already), static_cast<unsigned long long>(layout.items()));
  }
  SweepContext context{comm,     *work,    layout, start.done, *writer, queue, progress, threads_per_rank(comm),
                       dp_device};
  if (dp_device.runner) {
    // Large claims: a GPU batch pays off with thousands of instances.
    const std::uint64_t claim = std::clamp<std::uint64_t>(
        layout.instance_items() / (4 * static_cast<std::uint64_t>(size_of(comm))), 1, kGpuClaimItems);
    run_phase(context, {WorkQueue::kInstanceItems, 0, layout.instance_items(), {}, claim}, [](const auto&) {},
              instances_in_batches(context));
  } else {
    run_phase(context, {WorkQueue::kInstanceItems, 0, layout.instance_items(), {}}, [](const auto&) {},
              item_by_item(context, [&](std::uint64_t item, std::span<double> values) {
                const InstanceItem instance = instance_item(context, item);
                encode_instance(search::solve_instance(instance.problem, instance.instance), values);
              }));
  }
  if (layout.has_baselines()) {
    std::map<std::size_t, search::SearchStats> dp_stats;
    run_phase(
        context, {WorkQueue::kBaselineItems, layout.instance_items(), work->points.size(), largest_first(*work)},
        [&](const std::vector<std::uint64_t>& items) {
          dp_stats.clear();
          for (std::uint64_t item : items) {
            const std::size_t point = layout.point_of(item);
            dp_stats[point] = summed_stats(read_instances(*writer, layout, point));
          }
        },
        item_by_item(context, [&](std::uint64_t item, std::span<double> values) {
          const std::size_t point = layout.point_of(item);
          const PointWork& point_work = work->points[point];
          const auto results =
              search::run_baselines(point_work.problem, work->space, work->options, dp_stats.at(point));
          encode_baselines(results, job.search.baselines, point_work.problem.model, values);
        }));
  }
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
      std::vector<search::BaselineResult> baselines;
      if (layout.has_baselines()) {
        const std::uint64_t item = layout.baseline_item(point);
        if (writer->read_done(item, 1).front() == 0) throw std::runtime_error("a baseline item is unfinished after the sweep");
        baselines = decode_baselines(writer->read_values(layout.value_offset(item), layout.value_count(item)),
                                     job.search.baselines);
      }
      AssembledPoint assembled =
          assemble_point(work->points[point], read_instances(*writer, layout, point), baselines, job.search.top_k);
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
  std::uint64_t first_row = 0;
  agree(comm, [&] {
    first_row = writer->write_plans(mine);
    std::vector<ModelSpec> models;
    for (const auto& entry : bundle.models) models.push_back(entry.second);
    std::vector<ClusterSpec> clusters;
    for (const auto& entry : bundle.clusters) clusters.push_back(entry.second);
    writer->write_models(models);
    writer->write_clusters(clusters);
  });
  for (auto& validation : requests) validation.plan_row += first_row;

  // 5. Validation of the chosen plans on this job's own ranks (run only).
  CatalogReport report;
  if (request.validate && job.validate.enabled) {
    std::vector<comm::ValidationRequest> all_requests;
    for (auto& part : io::gather_archives(comm, 0, requests)) {
      all_requests.insert(all_requests.end(), part.begin(), part.end());
    }
    io::broadcast_archive(comm, 0, all_requests);
    report.validation = run_plan_validation(comm, job.validate, all_requests);
  }
  agree(comm, [&] {
    writer->write_validation(report.validation);
    writer->complete(start.out);
  });

  // 6. Rank 0 collects the rows for the summary table.
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
