#pragma once
// One measured all-to-all as JSON (`a2a bench --json` rows), with the names
// of /validation/alltoallv.
#include <nlohmann/json.hpp>

#include "comm/exec/validation.hpp"

namespace nestfast::io {

// `with_plan_row`: the validation phase's rows name their plan and always carry
// predicted_us (0: none); the bench's have no plan, and predicted_us only with --cluster.
nlohmann::json to_json(const comm::ValidationResult& result, bool with_plan_row);

}  // namespace nestfast::io
