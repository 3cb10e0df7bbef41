#pragma once
// One measured all-to-all as JSON (`a2a bench --json` rows), with the names
// of /validation/alltoallv.
#include <nlohmann/json.hpp>

#include "comm/exec/validation.hpp"

namespace nestfast::io {

// `with_plan_row`: the validation phase's rows name their plan; the bench's have none.
nlohmann::json to_json(const comm::ValidationResult& result, bool with_plan_row);

}  // namespace nestfast::io
