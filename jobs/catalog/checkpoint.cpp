#include "jobs/catalog/checkpoint.hpp"

#include <algorithm>
#include <cstdlib>
#include <span>
#include <stdexcept>

namespace nestfast::jobs {
namespace {

using Clock = std::chrono::steady_clock;

// Finished items reach /checkpoint at least this often (NESTFAST_CHECKPOINT_INTERVAL overrides, in seconds).
constexpr double kCheckpointInterval_s = 1.0;

double checkpoint_interval_s() {
  const char* text = std::getenv("NESTFAST_CHECKPOINT_INTERVAL");
  if (text == nullptr) return kCheckpointInterval_s;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' && value >= 0 && value < 1e6 ? value : kCheckpointInterval_s;
}

}  // namespace

CheckpointRecorder::CheckpointRecorder(io::CheckpointFile& checkpoint)
    : checkpoint_(checkpoint), interval_s_(checkpoint_interval_s()), last_write_(Clock::now()) {}

void CheckpointRecorder::add(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset,
                             std::vector<double> values) {
  if (count > 0) runs_.push_back({first, count, value_offset, std::move(values)});
}

void CheckpointRecorder::write_if_due() {
  if (std::chrono::duration<double>(Clock::now() - last_write_).count() >= interval_s_) write();
}

void CheckpointRecorder::write() {
  for (const Run& run : runs_) checkpoint_.record_finished(run.first, run.count, run.value_offset, run.values);
  runs_.clear();
  last_write_ = Clock::now();
}

std::vector<DecodedInstance> read_instances(const io::CheckpointFile& checkpoint, const WorkLayout& layout, std::size_t point) {
  const std::uint64_t first = layout.first_instance_item(point);
  const std::uint64_t end = layout.end_instance_item(point);
  const std::vector<std::uint8_t> done = checkpoint.read_done(first, end - first);
  if (std::find(done.begin(), done.end(), 0) != done.end()) {
    throw std::runtime_error("point " + std::to_string(point) + " has unfinished work items after the sweep");
  }
  const std::uint64_t base = layout.value_offset(first);
  const std::vector<double> values = checkpoint.read_values(base, layout.value_offset(end) - base);
  std::vector<DecodedInstance> instances;
  instances.reserve(end - first);
  for (std::uint64_t item = first; item < end; ++item) {
    instances.push_back(decode_instance(std::span<const double>(values).subspan(layout.value_offset(item) - base,
                                                                                layout.value_count(item))));
  }
  return instances;
}

std::vector<search::BaselineResult> read_baselines(const io::CheckpointFile& checkpoint, const WorkLayout& layout,
                                                   std::size_t point, const std::vector<std::string>& names) {
  const std::uint64_t item = layout.baseline_item(point);
  if (checkpoint.read_done(item, 1).front() == 0) throw std::runtime_error("a baseline item is unfinished after the sweep");
  return decode_baselines(checkpoint.read_values(layout.value_offset(item), layout.value_count(item)), names);
}

}  // namespace nestfast::jobs
