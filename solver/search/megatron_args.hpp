#pragma once
// A plan as Megatron-LM command-line arguments: the one emitter behind
// `solve`, `evaluate` and `query` (and the catalog's text), so the same plan
// gives the same line everywhere. Pure string building; no I/O. It takes the
// whole plan and model so that framework rules and architecture flags can be
// added here without touching the callers.
#include <string>
#include <vector>

#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::search {

struct MegatronArguments {
  std::string arguments;           // one line of --flags: never a comment, never a placeholder
  std::vector<std::string> notes;  // what Megatron-LM cannot express as flags (per-stage recompute, rank order)
};

// Always: every parallel degree (tp, pp, cp, ep), the batch, sequence length
// and --num-layers. Uneven stages use --pipeline-model-parallel-layout ("E"
// embedding, "t" a block, "L" the head/loss, "|" a stage boundary). Full
// recompute is --recompute-granularity full --recompute-method uniform
// --recompute-num-layers 1. Megatron-LM applies one recompute setting to
// every stage: a plan whose stages differ gets full recompute everywhere
// (it fits wherever the plan fits, and is slower than priced), and a note.
MegatronArguments megatron_arguments(const ModelSpec& model, const Execution& plan);

}  // namespace nestfast::search
