#pragma once
// Checks every command line gets, beyond each option's own: no option takes
// an empty value (--gbs "" is not 0), and seeds are unsigned 64-bit
// integers written in decimal (CLI11 would turn -1 and 2^64 alike into
// 2^64-1). A failed check is a usage error: one line naming the option.
#include <CLI/CLI.hpp>

namespace nestfast::jobs {

// Adds the non-empty check to every option of `app` and its subcommands that takes a value.
void refuse_empty_values(CLI::App& app);

// A decimal integer in [0, 2^64).
extern const CLI::Validator kUnsigned64;

}  // namespace nestfast::jobs
