#include "jobs/megatron_text.hpp"

#include "solver/search/megatron_args.hpp"

namespace nestfast::jobs {

MegatronLaunchText megatron_launch(const ModelSpec& model, const Execution& plan) {
  const search::MegatronArguments megatron = search::megatron_arguments(model, plan);
  return {to_string(plan.framework), megatron.arguments, search::environment_line(megatron.environment),
          megatron.notes};
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

nlohmann::json megatron_json(const MegatronLaunchText& launch) {
  return {{"framework", launch.framework},
          {"megatron_args", launch.arguments},
          {"megatron_environment", launch.environment},
          {"megatron_notes", launch.notes}};
}

}  // namespace nestfast::jobs
