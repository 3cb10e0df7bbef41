#pragma once
// Message sizes given as "MIN:MAX" (doubling from MIN up to MAX) or one size,
// with optional binary suffixes K, M, G or KiB, MiB, GiB (1K = 1024 bytes) or
// B: "1M:64M", "4096", "64KiB".
#include <cstdint>
#include <string>
#include <vector>

namespace nestfast::comm {

// std::invalid_argument naming `what` (e.g. "--sizes") on malformed text,
// a zero size, or MIN > MAX.
std::vector<std::uint64_t> parse_size_range(const std::string& text, const std::string& what);

// "64M", "1K", "1000": the shortest exact spelling, for headers.
std::string format_size(std::uint64_t bytes);

}  // namespace nestfast::comm
