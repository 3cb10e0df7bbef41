#pragma once
// How much memory this process may still allocate, so that a large request
// is refused with what was too big and the limit, before allocating (a
// std::bad_alloc says neither).
#include <cstdint>
#include <string>

namespace nestfast::io {

// The least of: the memory the kernel reports available (MemAvailable), the
// address-space and data limits (ulimit -v, -d) minus what is mapped now, and
// the cgroup's memory.max minus its memory.current. Each that cannot be read
// is left out.
std::uint64_t available_memory_bytes();

// Throws std::invalid_argument("<what> needs N bytes, more than the M bytes
// of memory available") when `bytes` exceed available_memory_bytes().
void require_memory(std::uint64_t bytes, const std::string& what);

}  // namespace nestfast::io
