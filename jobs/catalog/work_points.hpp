#pragma once
// A job turned into work: the presets it names, the strategy space it allows,
// and for every sweep point the solver problem and its DP instances (the
// work items). Every rank builds the same JobWork from the same JobBundle.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/job/job_spec.hpp"
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::jobs {

// What rank 0 broadcasts: the job and the specs of every preset it names
// (keyed by the name or path the job file uses), so no other rank reads files.
struct JobBundle {
  io::JobSpec job;
  std::vector<std::pair<std::string, ModelSpec>> models;
  std::vector<std::pair<std::string, ClusterSpec>> clusters;
  int slice_index = 0;  // --slice I/N: this task's share of the sweep points
  int slice_count = 1;
};

struct PointWork {
  io::SweepPoint point;
  search::SolveProblem problem;
  std::vector<search::DpInstance> instances;
};

struct JobWork {
  JobBundle bundle;
  search::StrategySpace space;
  search::SolveOptions options;
  std::vector<PointWork> points;       // this slice's points, in sweep order (global ids kept)
  std::uint64_t sweep_points = 0;      // points of the whole sweep, all slices
};

// Rank 0: loads the presets the job names. Errors name the job file, line and key.
JobBundle load_bundle(const io::JobSpec& job, int slice_index, int slice_count);

// Every rank: the problems and instances of the bundle's points. Errors name
// the job file, line and the point.
JobWork build_work(const JobBundle& bundle);

// The points of slice I of N: a contiguous block of the sweep, so part files
// concatenate in sweep order.
std::pair<std::uint64_t, std::uint64_t> slice_range(std::uint64_t points, int slice_index, int slice_count);

}  // namespace nestfast::jobs
