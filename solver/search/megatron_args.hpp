#pragma once
// A plan as Megatron-LM's pretrain_gpt.py runs it: one argument line, the
// environment it needs, and (framework nest only) why Megatron-LM cannot
// run it as it is. The one emitter: solve, evaluate, query, the catalog and
// the launch file all print what this returns, so one plan gives one line
// everywhere. Pure string building from the flag table of
// megatron_rules.hpp (an unknown flag is a logic error); no I/O.
//
// The line carries the parallel layout, the batch, the model's architecture
// and MoE flags from its preset, attention, recompute, the optimizer
// sharding, and uneven stages as --pipeline-model-parallel-layout ("E" the
// embedding, "t" a block, "L" the head and loss, "|" between model chunks).
// It carries no data, tokenizer, learning-rate or checkpoint paths: the
// launch file adds those as variables. The overlap flags are exactly the
// overlaps the price assumes (effective_overlap in execution.hpp):
// --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap,
// --no-overlap-p2p-communication (interleaved without p2p overlap) and
// --overlap-moe-expert-parallel-comm.
#include <string>
#include <utility>
#include <vector>

#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::search {

struct EnvironmentSetting {
  std::string name;
  std::string value;  // empty: the variable must be unset
};

struct MegatronArguments {
  std::string arguments;                      // one line of --flags, no comment, no placeholder
  std::vector<EnvironmentSetting> environment;
  std::vector<std::string> notes;  // framework nest: what Megatron-LM cannot run as priced; else empty
};

MegatronArguments megatron_arguments(const ModelSpec& model, const Execution& plan);

// "CUDA_DEVICE_MAX_CONNECTIONS=1 ..." / "unset X" as one shell-ready line
// ("" when nothing is needed).
std::string environment_line(const std::vector<EnvironmentSetting>& environment);

// The --pipeline-model-parallel-layout string of the plan's stages.
std::string pipeline_layout(const ModelSpec& model, const Execution& plan);

}  // namespace nestfast::search
