#pragma once
// A plan as Megatron-LM command-line arguments (the familiar way to hand a
// plan to a training job). Pure string building; no I/O.
#include <string>
#include <vector>

#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::search {

struct MegatronArguments {
  std::string arguments;           // one line of --flags
  std::vector<std::string> notes;  // what Megatron-LM cannot express as flags (per-stage recompute, rank order)
};

// Uneven stages use --pipeline-model-parallel-layout ("E" embedding, "t" a
// block, "L" the head/loss, "|" a stage boundary).
MegatronArguments megatron_arguments(const ModelSpec& model, const Execution& plan);

}  // namespace nestfast::search
