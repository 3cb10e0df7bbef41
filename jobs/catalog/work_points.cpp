#include "jobs/catalog/work_points.hpp"

#include <algorithm>
#include <stdexcept>

#include "io/job/job_file.hpp"
#include "io/presets/presets.hpp"
#include "jobs/pricing_options.hpp"

namespace nestfast::jobs {
namespace {

std::string where(const io::JobSpec& job, int line) {
  return line > 0 ? job.source + ":" + std::to_string(line) : job.source;
}

template <typename Spec>
const Spec& find_spec(const std::vector<std::pair<std::string, Spec>>& specs, const std::string& name) {
  for (const auto& [key, spec] : specs) {
    if (key == name) return spec;
  }
  throw std::logic_error("the job bundle lacks the preset '" + name + "'");
}

search::StrategySpace space_of(const io::SearchLimits& limits, const std::string& source) {
  search::StrategySpace space;
  space.tp = limits.tp;
  space.pp = limits.pp;
  space.ep = limits.ep;
  space.cp = limits.cp;
  space.micro_batch = limits.mbs;
  space.zero_stage = limits.zero;
  space.vpp = limits.vpp;
  for (bool on : limits.sp) space.sp.push_back(on ? 1 : 0);
  for (const auto& mode : limits.recompute) space.recompute.push_back(parse_recompute(mode, source + ": search.recompute"));
  space.recompute_layers = limits.recompute_layers;
  for (const std::string& set : limits.recompute_modules)
    space.recompute_modules.push_back(parse_recompute_modules(set, source + ": search.recompute_modules"));
  space.allow_fsdp_with_pipeline = limits.allow_fsdp_pp;
  return space;
}

}  // namespace

std::pair<std::uint64_t, std::uint64_t> slice_range(std::uint64_t points, int slice_index, int slice_count) {
  const auto index = static_cast<std::uint64_t>(slice_index);
  const auto count = static_cast<std::uint64_t>(slice_count);
  return {points * index / count, points * (index + 1) / count};
}

JobBundle load_bundle(const io::JobSpec& job, int slice_index, int slice_count) {
  JobBundle bundle;
  bundle.job = job;
  bundle.slice_index = slice_index;
  bundle.slice_count = slice_count;
  for (std::size_t s = 0; s < job.sweeps.size(); ++s) {
    const io::SweepSpec& sweep = job.sweeps[s];
    const std::string prefix = "sweep[" + std::to_string(s) + "]";
    for (const auto& name : sweep.models) {
      if (std::any_of(bundle.models.begin(), bundle.models.end(), [&](const auto& m) { return m.first == name; })) continue;
      try {
        bundle.models.emplace_back(name, io::load_model(name));
      } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(where(job, sweep.models_line) + ": " + prefix + ".model: " + error.what());
      }
    }
    for (const auto& name : sweep.clusters) {
      if (std::any_of(bundle.clusters.begin(), bundle.clusters.end(), [&](const auto& c) { return c.first == name; })) {
        continue;
      }
      try {
        bundle.clusters.emplace_back(name, io::load_cluster(name));
      } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(where(job, sweep.clusters_line) + ": " + prefix + ".cluster: " + error.what());
      }
    }
  }
  return bundle;
}

JobWork build_work(const JobBundle& bundle) {
  const io::JobSpec& job = bundle.job;
  JobWork work;
  work.bundle = bundle;
  work.space = space_of(job.search, job.source);
  work.options.top_k = job.search.top_k;
  work.options.baselines = !job.search.baselines.empty();
  work.options.threads = 1;  // one instance per call; the driver parallelises across instances

  const std::vector<io::SweepPoint> points = io::expand_sweep(job);
  work.sweep_points = points.size();
  const auto [first, last] = slice_range(points.size(), bundle.slice_index, bundle.slice_count);
  for (std::uint64_t p = first; p < last; ++p) {
    const io::SweepPoint& point = points[p];
    const io::SweepSpec& sweep = job.sweeps[static_cast<std::size_t>(point.sweep_index)];
    const std::string prefix = "sweep[" + std::to_string(point.sweep_index) + "]";
    PointWork item;
    item.point = point;
    item.problem.model = find_spec(bundle.models, point.model);
    item.problem.cluster = find_spec(bundle.clusters, point.cluster);
    item.problem.gpus = point.gpus;
    item.problem.global_batch = point.global_batch;
    item.problem.seq_len = point.seq_len;
    item.problem.framework = parse_framework(job.search.framework, job.source + ": search.framework");
    if (item.problem.seq_len == 0) item.problem.seq_len = item.problem.model.seq_len;
    item.problem.attention = job.search.attention;
    item.problem.overlap = job.search.overlap;
    item.problem.grad_reduce = job.search.grad_reduce;
    item.problem.a2a = all_to_all_of(job.search.a2a, item.problem.framework);
    item.point.seq_len = item.problem.seq_len;

    if (const std::string error = search::gpus_error(item.problem); !error.empty()) {
      throw std::invalid_argument(where(job, sweep.gpus_line) + ": " + prefix + ".gpus: " + error);
    }
    try {
      item.instances = search::enumerate_instances(item.problem, work.space);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(where(job, sweep.line) + ": " + prefix + " point (" + point.model + ", " +
                                  point.cluster + ", gpus=" + std::to_string(point.gpus) +
                                  ", global_batch=" + std::to_string(point.global_batch) + "): " + error.what());
    }
    for (auto& instance : item.instances) instance.problem = static_cast<int>(p);
    work.points.push_back(std::move(item));
  }
  return work;
}

}  // namespace nestfast::jobs
