#pragma once
// Command-line lists: CLI11 splits an option's value at its delimiter
// (add_list_option: "--tp 1,2,4", "--algos fast,mpi"); these read the
// elements, with the same element parsers the job files use
// (parse_recompute, search::parse_placement). "all" (or nothing) means every
// value: the list functions then return {}. Every problem is one
// std::invalid_argument line naming the flag.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "solver/search/execution.hpp"

namespace nestfast::jobs {

// A std::vector<std::string> option whose values CLI11 splits at `delimiter`.
CLI::Option* add_list_option(CLI::App& command, const std::string& name, std::vector<std::string>& items,
                             const std::string& description, char delimiter = ',');

// One integer in [minimum, maximum], decimal digits only.
int parse_int(const std::string& item, const std::string& what, int minimum, int maximum);

// Sorted, without repeats; {} for "all".
std::vector<int> int_list(const std::vector<std::string>& items, const std::string& what, int minimum, int maximum);
std::vector<Recompute> recompute_list(const std::vector<std::string>& items, const std::string& what);
// Each item one placement order (search::parse_placement).
std::vector<std::vector<ParallelDim>> placement_list(const std::vector<std::string>& items, const std::string& what);
// ';'-separated module sets, each a comma list ("core_attn;core_attn,moe_act"),
// or all/auto (empty: the search's default sets).
std::vector<RecomputeModules> module_set_list(const std::vector<std::string>& items, const std::string& what);

}  // namespace nestfast::jobs
