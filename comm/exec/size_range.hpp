#pragma once
// Byte sizes, the same on every command line and in job files ([validate]
// sizes): digits and an optional unit as CLI11's AsSizeValue reads it (any
// case, 1K = 1024 bytes): B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T, P, E, e.g.
// "64KiB", "1m", "4096", "2 GB". A range "MIN:MAX" doubles from MIN up to
// MAX: "1M:64M". Every problem is one std::invalid_argument line naming
// `what` (the flag or the file:line and key) and the text.
#include <cstdint>
#include <string>
#include <vector>

namespace nestfast::comm {

// One size. Empty, negative, malformed, an unknown unit, more than 2^64 - 1
// bytes, a range, and zero unless `allow_zero` are errors.
std::uint64_t parse_size(const std::string& text, const std::string& what, bool allow_zero = false);

// One size or "MIN:MAX" (1 <= MIN <= MAX): the sizes MIN, 2 MIN, 4 MIN, ... up to MAX.
std::vector<std::uint64_t> parse_size_range(const std::string& text, const std::string& what);

// "64M", "1K", "1000": the shortest exact spelling, for headers.
std::string format_size(std::uint64_t bytes);

}  // namespace nestfast::comm
