#pragma once
// The one line a user sees for an error: "nestfast: [rank R: ]error: MESSAGE".
// A message may quote the input's own bytes (a TOML key or value, a JSON
// string, a matrix line, a path), newlines and terminal escapes included:
// they are written escaped (\n, \t, \xHH), so an error is always one line
// and never drives the terminal.
#include <string>
#include <string_view>

namespace nestfast::jobs {

// `message` with every control byte (below 0x20, and 0x7f) escaped.
std::string one_line(std::string_view message);

// Writes the error line to stderr and flushes it; a rank < 0 is not named.
void print_error_line(std::string_view message, int rank = -1);

}  // namespace nestfast::jobs
