#include "jobs/megatron_text.hpp"

namespace nestfast::jobs {

std::string megatron_text(const search::MegatronArguments& megatron, const std::string& indent) {
  std::string text = indent + "Megatron-LM: " + megatron.arguments + "\n";
  for (const std::string& note : megatron.notes) text += indent + "  # " + note + "\n";
  return text;
}

void add_megatron_json(nlohmann::json& out, const search::MegatronArguments& megatron) {
  out["megatron_args"] = megatron.arguments;
  out["megatron_notes"] = megatron.notes;
}

}  // namespace nestfast::jobs
