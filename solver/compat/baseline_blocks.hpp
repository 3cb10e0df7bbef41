#pragma once
// How a baseline configuration (p stages of t-wide tensor parallelism,
// num_transformer_layers, optional layer_partition) cuts the layer chain.
#include <cstddef>
#include <vector>

#include "solver/compat/nest_plan.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

// The artifact's cut (compat): the embedding counts as transformer layer 0,
// positions [0, L) are split into p blocks of ceil(L/p) (or layer_partition),
// and the positions from L on (the real last layer) join the final block.
// Stages are in layer order. Throws std::invalid_argument naming the baseline
// when a block is empty or the chain is shorter than L + 1.
std::vector<NestStage> artifact_baseline_stages(const NestBaseline& baseline, std::size_t chain_size,
                                                int stage_devices);

// The honest cut (corrected): transformer layers at positions [1, L] split as
// evenly as possible (the remainder on the last stages) or by
// layer_partition; the embedding joins the first stage and the positions
// after L the last. Throws std::invalid_argument naming the baseline when a
// stage would be empty.
std::vector<NestStage> honest_baseline_stages(const NestBaseline& baseline, std::size_t chain_size,
                                              int stage_devices);

}  // namespace nestfast::compat
