#pragma once
// How every command shows a plan's Megatron-LM launch (solve, evaluate,
// query print this one block, so one plan reads the same everywhere):
//   Megatron-LM (pretrain_gpt.py, framework megatron-core): --tensor-model-parallel-size ...
//     environment: CUDA_DEVICE_MAX_CONNECTIONS=1
//     note: ...   (framework nest: why Megatron-LM cannot run it as priced)
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "solver/search/plan_record.hpp"

namespace nestfast::jobs {

struct MegatronLaunchText {
  std::string framework;    // "megatron-core" or "nest"
  std::string arguments;    // the argument line
  std::string environment;  // a shell-ready line ("" = none)
  std::vector<std::string> notes;
};

// What the record carries from the one emitter (solver/search/megatron_args.hpp).
MegatronLaunchText megatron_launch(const search::PlanRecord& record);

std::string megatron_text(const MegatronLaunchText& launch);

// --framework megatron-core|nest (default megatron-core) on a subcommand.
void add_framework_option(CLI::App& command, std::string& framework);

}  // namespace nestfast::jobs
