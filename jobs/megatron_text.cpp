#include "jobs/megatron_text.hpp"

namespace nestfast::jobs {

MegatronLaunchText megatron_launch(const search::PlanRecord& record) {
  return {to_string(record.framework), record.megatron_args, record.megatron_environment, record.megatron_notes};
}

std::string megatron_text(const MegatronLaunchText& launch) {
  std::string text = "Megatron-LM (pretrain_gpt.py, framework " + launch.framework + "): " + launch.arguments + "\n";
  if (!launch.environment.empty()) text += "  environment: " + launch.environment + "\n";
  for (const std::string& note : launch.notes) text += "  note: " + note + "\n";
  return text;
}

void add_framework_option(CLI::App& command, std::string& framework) {
  command
      .add_option("--framework", framework,
                  "megatron-core (default): only plans Megatron-LM runs as emitted and priced (cp > 1 with fused "
                  "attention); nest: the wider space (any placement, per-stage recompute) Megatron-LM cannot run as "
                  "priced")
      ->check(CLI::IsMember({"megatron-core", "nest"}));
}

}  // namespace nestfast::jobs
