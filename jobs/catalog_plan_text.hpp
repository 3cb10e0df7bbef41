#pragma once
// The tables `nestfast run` and `catalog` print at the end: one line per
// sweep point (best plan, speed-up over manual) and the validation rows.
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"

namespace nestfast::jobs {

std::string summary_table(const std::vector<io::PlanEntry>& plans);
std::string validation_table(const std::vector<io::ValidationRow>& rows);

}  // namespace nestfast::jobs
