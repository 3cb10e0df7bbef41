#pragma once
// Reading and expanding job files. Every problem is a std::invalid_argument
// with one line that names the file, the line and the key.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/job/job_spec.hpp"

namespace nestfast::io {

// Parses and validates a job from TOML text; `source` names it in errors.
JobSpec parse_job(std::string_view text, const std::string& source);

// Job files are small: a long comment or name is fine, a stray data file is refused.
inline constexpr std::uint64_t kMaxJobFileBytes = std::uint64_t{16} << 20;

// Reads a job file (a regular file of at most kMaxJobFileBytes); an
// unreadable one is an error naming the path.
JobSpec load_job_file(const std::string& path);

// The sweep's points: each [[sweep]] block's cross product, blocks in file
// order, lists in the order model, cluster, gpus, global_batch, seq_len.
std::vector<SweepPoint> expand_sweep(const JobSpec& job);

// A fingerprint of the job's text (FNV-1a 64) that a checkpoint remembers.
std::uint64_t job_fingerprint(const JobSpec& job);

}  // namespace nestfast::io
