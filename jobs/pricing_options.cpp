#include "jobs/pricing_options.hpp"

#include "jobs/cli_lists.hpp"

namespace nestfast::jobs {

void add_pricing_options(CLI::App& command, PricingFlags& flags) {
  command.add_option("--attention", flags.attention,
                     "attention core: flash (fused, the default) or unfused (Megatron-LM's softmax path)");
  add_list_option(command, "--overlap", flags.overlap,
                  "communication overlapped with compute: all (default), none, or a list of grad (DP "
                  "gradient reduce), param (ZeRO weight gather), tp (TP comm, needs sp), p2p (interleaved "
                  "pipeline), a2a (MoE all-to-all)");
  command.add_option("--grad-reduce", flags.grad_reduce,
                     "gradients kept and reduced in fp32 (default) or bf16 (Megatron-LM's --grad-reduce-in-bf16: "
                     "half the gradient memory and DP traffic)");
}

Attention attention_of(const PricingFlags& flags) { return parse_attention(flags.attention, "--attention"); }

Overlap overlap_of(const PricingFlags& flags) { return parse_overlap(flags.overlap, "--overlap"); }

GradReduce grad_reduce_of(const PricingFlags& flags) { return parse_grad_reduce(flags.grad_reduce, "--grad-reduce"); }

}  // namespace nestfast::jobs
