#pragma once
// --attention flash|unfused and --overlap LIST: how the framework runs what
// the cost model prices, on every command that prices plans (evaluate,
// solve; the job file's [search] keys attention and overlap for catalog and
// run). Defaults are Megatron-Core's with TransformerEngine: fused
// attention and every overlap its recipes switch on.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "solver/search/execution.hpp"

namespace nestfast::jobs {

struct PricingFlags {
  std::string attention = "flash";
  std::vector<std::string> overlap = {"all"};
};

void add_pricing_options(CLI::App& command, PricingFlags& flags);

// Throws std::invalid_argument naming --attention or --overlap.
Attention attention_of(const PricingFlags& flags);
Overlap overlap_of(const PricingFlags& flags);

}  // namespace nestfast::jobs
