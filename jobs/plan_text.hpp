#pragma once
// Plan records for people and scripts, printed one way by solve, query and
// evaluate: degrees under the record's field names, layers as FIRST-LAST in
// the chain (0 = embedding, L+1 = head), boundary levels as "2 (spine)" or
// "none", times with their units; and the JSON documents of those commands.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "solver/search/plan_record.hpp"

namespace nestfast::jobs {

std::string layers_text(int first_layer, int last_layer);
std::string boundary_text(const search::StageRecord& stage);
std::string recompute_text(const search::StageRecord& stage);  // "full/4": block recompute of 4 layers
std::string degrees_text(const search::PlanRecord& record);
// "iteration 25.2030 s, 332838 tokens/s, MFU 31.6%, 8 micro-batches, peak memory 70.10 of 80.00 GiB HBM"
std::string price_text(const search::PlanRecord& record);
// One line per part of the iteration, in seconds and % of it.
std::string breakdown_text(const search::PlanRecord& record);
// One line per stage; `memory_split` adds weights, gradients, optimizer, activations, working.
std::string stage_table(const search::PlanRecord& record, bool memory_split);

// The plans of one point (nest rank 0 first, then alternatives, then
// baselines): the best in full, the others one line each with the best's
// speed-up over them, then the Megatron-LM launch of the best.
std::string point_text(const std::vector<search::PlanRecord>& plans);

// {"plans": [...]}: the records (each feasible one with its Megatron-LM
// line, environment and notes), every plan but the best with
// "nest_speedup_x" (its time / the best's).
nlohmann::json point_json(const std::vector<search::PlanRecord>& plans);

// The best NEST plan of a point's records (nest, rank_k 0), or null.
const search::PlanRecord* best_plan(const std::vector<search::PlanRecord>& plans);

}  // namespace nestfast::jobs
