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
}

Attention attention_of(const PricingFlags& flags) { return parse_attention(flags.attention, "--attention"); }

Overlap overlap_of(const PricingFlags& flags) { return parse_overlap(flags.overlap, "--overlap"); }

}  // namespace nestfast::jobs
