#pragma once
// The job's side of its checkpoint (the file side is io::CheckpointFile): finished
// work items are batched and written at least once per interval, so a killed
// job loses at most that much; after the sweep a point's finished items are
// read back for the baselines phase and for assembling its rows. Item values
// follow work_items.hpp.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/checkpoint_file.hpp"
#include "jobs/catalog/work_items.hpp"

namespace nestfast::jobs {

// Finished items waiting to go into the checkpoint; written at most once per
// interval (NESTFAST_CHECKPOINT_INTERVAL seconds, default 1).
class CheckpointRecorder {
 public:
  explicit CheckpointRecorder(io::CheckpointFile& checkpoint);

  void add(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset, std::vector<double> values);
  void write_if_due();
  void write();

 private:
  struct Run {
    std::uint64_t first;
    std::uint64_t count;
    std::uint64_t value_offset;
    std::vector<double> values;
  };
  io::CheckpointFile& checkpoint_;
  double interval_s_;
  std::vector<Run> runs_;
  std::chrono::steady_clock::time_point last_write_;
};

// The decoded instance items of point `point`, which must all be finished.
std::vector<DecodedInstance> read_instances(const io::CheckpointFile& checkpoint, const WorkLayout& layout, std::size_t point);

// The baselines of point `point` (its baseline item must be finished), in the job's order of `names`.
std::vector<search::BaselineResult> read_baselines(const io::CheckpointFile& checkpoint, const WorkLayout& layout,
                                                   std::size_t point, const std::vector<std::string>& names);

}  // namespace nestfast::jobs
