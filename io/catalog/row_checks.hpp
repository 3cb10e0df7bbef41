#pragma once
// Every value read from a catalog's tables is checked against what a catalog
// job writes there, so a damaged or edited file (iter_time_s = NaN, tp = 0,
// a kind nobody writes) is refused in one line instead of being printed or
// merged as an answer. One table (row_checks.cpp) gives the rule of each
// member of /plans, /stages and /validation/alltoallv by its name; the members
// themselves, their offsets and types come from the rows' HDF5 types, so a
// renamed or added member needs one line of that table and nothing else. A
// member without a rule is refused too (unit_catalog_rows checks that every
// member has one).
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nestfast::io {

// Checks `count` rows of `row_type` (a compound of native numbers and fixed
// strings) laid out in `rows`; the first is row `first` of `table`. Throws
// std::invalid_argument "PATH: /TABLE row N: MEMBER = VALUE: RULE" for the
// first value that breaks its member's rule.
void check_rows(const std::string& path, const std::string& table, hid_t row_type, const void* rows,
                std::uint64_t count, std::uint64_t first);

// The members of `table`'s `row_type` that the table gives no rule (empty when all have one).
std::vector<std::string> members_without_rule(const std::string& table, hid_t row_type);

}  // namespace nestfast::io
