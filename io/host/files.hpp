#pragma once
// The files nestfast reads and writes, checked before they are touched. An
// input must be a regular file (a FIFO or a device would block forever or
// never end), of a size its reader can hold; an output must not replace
// anything but a regular file (nestfast writes through a temporary and a
// rename, which would put a plain file where a device node, a FIFO or a
// socket was: users run it as root on some sites), nor one of the job's own
// inputs. Every problem is a std::invalid_argument of one line naming the path.
#include <cstdint>
#include <string>
#include <vector>

namespace nestfast::io {

// The whole file at `path`, a regular file of at most `max_bytes` bytes;
// `what` names it in errors ("job file", "NEST input", ...). Never blocks
// on a FIFO.
std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes);

// Throws unless `path` (after symlinks) is an existing regular file, for
// readers that open files themselves (HDF5).
void require_regular_input(const std::string& path, const std::string& what);

// Throws when `path` exists and is not a regular file (after symlinks), or
// when it is the same file as one of `inputs`; `what` names the option.
void check_output_target(const std::string& path, const std::string& what, const std::vector<std::string>& inputs = {});

}  // namespace nestfast::io
