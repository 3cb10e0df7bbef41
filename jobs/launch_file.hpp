#pragma once
// `solve ... --launch DIR` and `query ... --launch DIR`: a ready sbatch
// script for Megatron-LM's pretrain_gpt.py (DIR/launch.sbatch) and the plan
// as JSON beside it (DIR/plan.json). The site's parts (account, partition,
// modules, the Megatron-LM checkout, data and tokenizer) are variables at
// the top of the script, with defaults that run on mock data.
#include <nlohmann/json.hpp>

#include <string>

#include "jobs/megatron_text.hpp"

namespace nestfast::jobs {

struct LaunchRequest {
  std::string directory;
  std::string job_name;   // "<model>-<gpus>gpus"
  int gpus = 0;
  int gpus_per_node = 0;  // the cluster's innermost level
  int vocab = 0;          // for the default mock-data tokenizer
  MegatronLaunchText launch;
  nlohmann::json plan;    // written as plan.json
};

// The script's text (pure; tested on its own).
std::string launch_script(const LaunchRequest& request);

// Writes both files (io::write_file_atomically); throws
// std::invalid_argument when the plan is not one Megatron-LM runs as priced
// (framework nest) or the directory cannot be made, and what the atomic write
// throws when a file cannot be written.
void write_launch_files(const LaunchRequest& request);

}  // namespace nestfast::jobs
