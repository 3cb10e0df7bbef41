#pragma once
// The one way nestfast puts a finished output file in place (catalogs,
// merged catalogs, NEST JSON, benchmark JSON): it is written under a
// temporary name, its data are synced (fsync), it is renamed over the final
// name, and the directory is synced, so a reader, or the file system after
// a crash, sees the old file or the whole new one, never a part of it. Only
// a regular file is ever replaced (io/host/files.hpp: check_output_target;
// callers check at their start too, before any work).
#include <string>

namespace nestfast::io {

// Syncs `temporary`, renames it to `path` and syncs `path`'s directory.
// Throws std::invalid_argument when `path` is not a regular file, and
// std::runtime_error naming both paths and the system's reason; the
// temporary is then left where it is (the caller decides: a catalog's
// .partial may still be resumed).
void commit_file(const std::string& temporary, const std::string& path);

// Writes `text` to "PATH.tmp.PID" and commits it to `path`. Throws
// std::invalid_argument when the temporary cannot be created (missing
// directory, no permission) and std::runtime_error when writing or
// committing fails; no temporary is left behind either way.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace nestfast::io
