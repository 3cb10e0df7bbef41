#include "jobs/pricing_options.hpp"

#include "jobs/cli_lists.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::jobs {

void add_pricing_options(CLI::App& command, PricingFlags& flags) {
  command.add_option("--attention", flags.attention,
                     "attention core: flash (fused, the default) or unfused (Megatron-LM's softmax path)");
  add_list_option(command, "--overlap", flags.overlap,
                  "communication overlapped with compute: all (default), none, or a list of grad (DP "
                  "gradient reduce), param (ZeRO weight gather), tp (TP comm, needs sp), p2p (interleaved "
                  "pipeline), a2a (MoE all-to-all behind another micro-batch), shared (MoE shared experts beside "
                  "their layer's all-to-alls), wgrad (MoE experts' weight gradients beside the dispatch's "
                  "backward all-to-all, where a2a does not run)");
  command.add_option("--grad-reduce", flags.grad_reduce,
                     "gradients kept and reduced in fp32 (default) or bf16 (Megatron-LM's --grad-reduce-in-bf16: "
                     "half the gradient memory and DP traffic)");
  command.add_option("--a2a", flags.a2a,
                     "how MoE all-to-alls run and are priced: auto (default: FAST for nest plans, Megatron's alltoall "
                     "dispatcher for megatron-core ones), fast (nestfast's FAST, nest plans only), fanout (NCCL's "
                     "all-to-all: Megatron's alltoall dispatcher) or deepep (Megatron's flex dispatcher with DeepEP)");
}

Attention attention_of(const PricingFlags& flags) { return parse_attention(flags.attention, "--attention"); }

Overlap overlap_of(const PricingFlags& flags) { return parse_overlap(flags.overlap, "--overlap"); }

GradReduce grad_reduce_of(const PricingFlags& flags) { return parse_grad_reduce(flags.grad_reduce, "--grad-reduce"); }

AllToAllAlgorithm all_to_all_of(const std::string& text, Framework framework) {
  return search::resolve_all_to_all(text, framework, "--a2a");
}

}  // namespace nestfast::jobs
