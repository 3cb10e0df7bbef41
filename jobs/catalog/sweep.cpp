#include "jobs/catalog/sweep.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <span>
#include <string>

#include "comm/exec/communicator.hpp"
#include "jobs/catalog/agreement.hpp"
#include "jobs/catalog/checkpoint.hpp"
#include "solver/search/search_context.hpp"

namespace nestfast::jobs {
namespace {

using comm::rank_of;
using comm::size_of;

// DP instance items one rank claims at once when its DP runs on a GPU.
constexpr std::uint64_t kGpuClaimItems = 4096;

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
// the calling thread (the only one that may touch HDF5). A failure on this
// rank (computing, reading or recording) stops its claims and tells the
// other ranks through the queue, so they stop early too; then all ranks
// agree on it, so every rank leaves the phase the same way.
void run_phase(SweepContext& context, const Phase& phase,
               const std::function<void(const std::vector<std::uint64_t>&)>& prepare, const ChunkCompute& compute) {
  const std::uint64_t ranks = static_cast<std::uint64_t>(size_of(context.comm));
  const std::uint64_t threads = static_cast<std::uint64_t>(context.threads);
  const std::uint64_t chunk =
      phase.claim_size > 0 ? phase.claim_size
                           : threads * std::clamp<std::uint64_t>(phase.items / (ranks * threads * 64), 1, 64);
  CheckpointRecorder recorder(context.checkpoint);
  const bool root = rank_of(context.comm) == 0;
  std::string failure;
  try {
    while (failure.empty() && context.queue.read(WorkQueue::kFailed) == 0) {
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
  } catch (const std::exception& error) {
    failure = error.what();
  }
  if (!failure.empty()) context.queue.fetch_add(WorkQueue::kFailed, 1);
  agree_on_failure(context.comm, failure.empty() ? 0 : kExitRuntimeError, failure);
  // Stopped early because another rank failed: that rank's error is the one agreed on above.
  agree(context.comm, [&] { context.checkpoint.flush(); });
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

}  // namespace

int threads_per_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  const int ranks_on_node = size_of(node);
  MPI_Comm_free(&node);
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return std::max(1, omp_get_max_threads());
  return std::max(1, omp_get_num_procs() / ranks_on_node);
}

void run_instance_phase(SweepContext& context) {
  const WorkLayout& layout = context.layout;
  if (context.dp_device.runner) {
    // Large claims: a GPU batch pays off with thousands of instances.
    const std::uint64_t claim = std::clamp<std::uint64_t>(
        layout.instance_items() / (4 * static_cast<std::uint64_t>(size_of(context.comm))), 1, kGpuClaimItems);
    run_phase(context, {WorkQueue::kInstanceItems, 0, layout.instance_items(), {}, claim}, [](const auto&) {},
              instances_in_batches(context));
  } else {
    run_phase(context, {WorkQueue::kInstanceItems, 0, layout.instance_items(), {}}, [](const auto&) {},
              item_by_item(context, [&](std::uint64_t item, std::span<double> values) {
                const InstanceItem instance = instance_item(context, item);
                encode_instance(search::solve_instance(instance.problem, instance.instance), values);
              }));
  }
}

void run_baseline_phase(SweepContext& context) {
  const WorkLayout& layout = context.layout;
  const JobWork& work = context.work;
  if (!layout.has_baselines()) return;
  run_phase(
      context, {WorkQueue::kBaselineItems, layout.instance_items(), work.points.size(), largest_first(work)},
      [](const std::vector<std::uint64_t>&) {},
      item_by_item(context, [&](std::uint64_t item, std::span<double> values) {
        const std::size_t point = layout.point_of(item);
        const PointWork& point_work = work.points[point];
        // The MCMC baseline's budget is the stage pricings of the point's DP
        // as `solve` runs it (branch and bound in waves, the job's top_k):
        // a number that depends on the point alone, so the catalog and
        // `solve` give the same baselines on any rank and thread count.
        search::SolveOptions dp = work.options;
        dp.baselines = false;
        const search::SearchStats dp_stats = search::solve(point_work.problem, work.space, dp).stats;
        const auto results = search::run_baselines(point_work.problem, work.space, work.options, dp_stats);
        encode_baselines(results, work.bundle.job.search.baselines, point_work.problem.model, values);
      }));
}

}  // namespace nestfast::jobs
