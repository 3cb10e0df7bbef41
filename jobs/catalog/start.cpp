#include "jobs/catalog/start.hpp"

#include <unistd.h>

#include <boost/serialization/utility.hpp>

#include <filesystem>
#include <stdexcept>

#include "comm/plan/seeded_hash.hpp"
#include "io/archive/archive.hpp"
#include "io/archive/job_serialization.hpp"
#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/checkpoint_file.hpp"
#include "io/host/files.hpp"
#include "solver/search/cost_model_version.hpp"

namespace nestfast::jobs {
namespace {

namespace fs = std::filesystem;

std::string part_file_name(const std::string& out, int index, int count) {
  const fs::path path(out);
  const std::string stem = path.extension() == ".h5" ? path.stem().string() : path.filename().string();
  return (path.parent_path() / (stem + ".part" + std::to_string(index) + "of" + std::to_string(count) + ".h5")).string();
}

// The catalog and the files beside it (OUT.partial, OUT.checkpoint, OUT.lock)
// may only replace regular files, and none of them the job file.
void check_output(const std::string& out, bool force, const std::string& job_path) {
  const fs::path path(out);
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code error;
  if (!fs::is_directory(dir, error)) throw std::invalid_argument(out + ": the output directory does not exist");
  if (::access(dir.c_str(), W_OK) != 0) throw std::invalid_argument(out + ": the output directory is not writable");
  for (const char* suffix : {"", ".partial", ".checkpoint", ".lock"}) {
    io::check_output_target(out + suffix, suffix[0] == '\0' ? "the catalog (--out)" : "a file of the catalog job",
                            {job_path});
  }
  if (fs::exists(path, error) && !force) {
    throw std::invalid_argument(out + ": a finished catalog exists; pass --force to overwrite it or --out to write elsewhere");
  }
}

}  // namespace

void check_preset_names(const JobBundle& bundle) {
  auto check = [&](const std::string& name) {
    if (name.size() >= io::kNameChars) {
      throw std::invalid_argument(bundle.job.source + ": preset name '" + name + "' is longer than " +
                                  std::to_string(io::kNameChars - 1) + " characters");
    }
  };
  for (const auto& [key, model] : bundle.models) check(model.name);
  for (const auto& [key, cluster] : bundle.clusters) check(cluster.name);
}

void check_job_fits_launch(const CatalogRequest& request, const io::JobSpec& job, int ranks) {
  const int servers = job.validate.virtual_servers;
  if (request.validate && job.validate.enabled && servers > ranks) {
    throw std::invalid_argument(job.source + ": validate.virtual_servers: " + std::to_string(servers) +
                                " virtual servers need at least as many ranks; this launch has " +
                                std::to_string(ranks));
  }
}

// Everything a row's price depends on: the job text (sweep, search limits,
// framework), the slice, every model, GPU and cluster preset as loaded (all
// their fields, so an edited preset file is a different job) and the cost
// model's version.
std::uint64_t job_fingerprint_of(const JobBundle& bundle) {
  return comm::Fnv1a64()
      .add_bytes(bundle.job.text)
      .add_word(static_cast<std::uint64_t>(bundle.slice_index))
      .add_word(static_cast<std::uint64_t>(bundle.slice_count))
      .add_bytes(io::to_archive(bundle.models))
      .add_bytes(io::to_archive(bundle.clusters))
      .add_word(search::kCostModelVersion)
      .value();
}

Start decide_start(const CatalogRequest& request, const JobBundle& bundle, const WorkLayout& layout) {
  const io::JobSpec& job = bundle.job;
  Start start;
  start.out = !request.out.empty()      ? request.out
              : request.slice_count > 1 ? part_file_name(job.out, request.slice_index, request.slice_count)
                                        : job.out;
  check_output(start.out, request.force, request.job_path);
  start.lock = io::OutputLock::acquire(start.out);
  const std::string checkpoint = checkpoint_path(start.out);
  std::error_code error;
  if (fs::exists(checkpoint, error) && !request.force) {
    start.done = io::read_checkpoint(checkpoint, job_fingerprint_of(bundle), {layout.items(), layout.values()});
    start.resume = true;
  } else {
    start.done.assign(layout.items(), 0);
  }
  return start;
}

}  // namespace nestfast::jobs
