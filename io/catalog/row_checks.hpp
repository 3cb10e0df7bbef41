#pragma once
// Every value read from a catalog's tables is checked against what a catalog
// job writes there, so a damaged or edited file (iter_time_s = NaN, tp = 0,
// a kind nobody writes) is refused in one line instead of being printed or
// merged as an answer. The rule of each member of /plans, /stages and
// /validation/alltoallv is a column of the tables' one list of members
// (catalog_types.cpp), beside its place, type, unit and meaning.
#include <cstdint>
#include <string>

#include "io/catalog/catalog_types.hpp"

namespace nestfast::io {

// Checks `count` rows laid out as `layout`'s row struct in `rows`; the first
// is row `first` of the dataset `table` (its path in the file, for the
// message). Throws std::invalid_argument "PATH: /TABLE row N: MEMBER = VALUE:
// RULE" for the first value that breaks its member's rule.
void check_rows(const std::string& path, const std::string& table, RowTable layout, const void* rows,
                std::uint64_t count, std::uint64_t first);

}  // namespace nestfast::io
