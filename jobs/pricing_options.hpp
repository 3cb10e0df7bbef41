#pragma once
// --attention flash|unfused, --overlap LIST, --grad-reduce fp32|bf16 and
// --a2a auto|fast|fanout|deepep: how the framework runs what the cost model
// prices, on every command that prices plans (evaluate, solve; the job
// file's [search] keys attention, overlap, grad_reduce and a2a for catalog
// and run). Defaults are Megatron-Core's
// with TransformerEngine: fused attention, every overlap its recipes switch
// on, and gradients kept and reduced in fp32 (bf16's default,
// arguments.py:1215).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "solver/search/execution.hpp"

namespace nestfast::jobs {

struct PricingFlags {
  std::string attention = "flash";
  std::vector<std::string> overlap = {"all"};
  std::string grad_reduce = "fp32";
  std::string a2a = "auto";
};

void add_pricing_options(CLI::App& command, PricingFlags& flags);

// Throws std::invalid_argument naming --attention, --overlap or --grad-reduce.
Attention attention_of(const PricingFlags& flags);
Overlap overlap_of(const PricingFlags& flags);
GradReduce grad_reduce_of(const PricingFlags& flags);
// --a2a: auto = each plan's framework's own (FAST for Nest's plans, the
// alltoall dispatcher for Megatron-Core's: search::plan_all_to_all); fast
// under --framework megatron-core is refused (Megatron-LM has no FAST
// dispatcher). Throws std::invalid_argument naming --a2a.
AllToAllAlgorithm all_to_all_of(const std::string& text, Framework framework);

}  // namespace nestfast::jobs
