#pragma once
// Step 1 of the job, on rank 0 before any work starts: the presets' names fit
// the catalog's fields, where the catalog goes (--out, [job].out, or the
// slice's part file), that writing there is allowed, that no other job
// writes there now (the output lock), and whether the checkpoint OUT.checkpoint
// left by an interrupted run of the same job resumes (it must carry this
// job's fingerprint and shape). Errors are std::invalid_argument with one
// line naming the file.
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/output_lock.hpp"
#include "jobs/catalog/job.hpp"
#include "jobs/catalog/work_items.hpp"
#include "jobs/catalog/work_points.hpp"

namespace nestfast::jobs {

struct Start {
  bool resume = false;
  std::string out;                 // the finished catalog's path; OUT.partial until complete
  std::vector<std::uint8_t> done;  // per work item: finished by an earlier run
  io::OutputLock lock;             // rank 0: held until the catalog is in place
};

// Where a job writing the catalog `out` keeps its finished work items.
inline std::string checkpoint_path(const std::string& out) { return out + ".checkpoint"; }

// Throws when a preset's name does not fit the catalog's fixed-length name field.
void check_preset_names(const JobBundle& bundle);

// Throws when the job cannot run on `ranks` ranks, before any work (the
// validation's virtual servers need one rank each; found only after the sweep before).
void check_job_fits_launch(const CatalogRequest& request, const io::JobSpec& job, int ranks);

// What the checkpoint remembers of the job: FNV-1a of its text, the slice
// index and count, every preset it loads and the cost model's version.
std::uint64_t job_fingerprint_of(const JobBundle& bundle);

Start decide_start(const CatalogRequest& request, const JobBundle& bundle, const WorkLayout& layout);

}  // namespace nestfast::jobs
