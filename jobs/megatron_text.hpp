#pragma once
// How every command shows a plan's Megatron-LM line (search::megatron_arguments,
// the one emitter): solve, evaluate and query print and serialise it alike.
#include <nlohmann/json.hpp>

#include <string>

#include "solver/search/megatron_args.hpp"

namespace nestfast::jobs {

// "<indent>Megatron-LM: <line>\n", then "<indent>  # <note>\n" per note.
std::string megatron_text(const search::MegatronArguments& megatron, const std::string& indent = "");

// Sets "megatron_args" (the line) and "megatron_notes" (a list) in `out`.
void add_megatron_json(nlohmann::json& out, const search::MegatronArguments& megatron);

}  // namespace nestfast::jobs
