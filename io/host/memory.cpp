#include "io/host/memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace nestfast::io {
namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

// "Key:   123 kB" from a /proc file, in bytes; kUnlimited when absent.
std::uint64_t proc_kib_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return kUnlimited;
}

std::uint64_t number_in(const std::string& file) {
  std::ifstream in(file);
  std::uint64_t value = 0;
  return in >> value ? value : kUnlimited;  // "max" reads as no number
}

std::uint64_t left_under(int resource, std::uint64_t used) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kUnlimited;
  const auto cap = static_cast<std::uint64_t>(limit.rlim_cur);
  return cap > used ? cap - used : 0;
}

std::string bytes_text(std::uint64_t bytes) {
  std::ostringstream text;
  text << bytes << " bytes";
  if (bytes >= (std::uint64_t{1} << 30)) text << " (" << static_cast<double>(bytes) / static_cast<double>(1ULL << 30) << " GiB)";
  return text.str();
}

}  // namespace

std::uint64_t available_memory_bytes() {
  std::uint64_t available = proc_kib_field("/proc/meminfo", "MemAvailable");
  const std::uint64_t mapped = proc_kib_field("/proc/self/status", "VmSize");
  const std::uint64_t data = proc_kib_field("/proc/self/status", "VmData");
  available = std::min(available, left_under(RLIMIT_AS, mapped == kUnlimited ? 0 : mapped));
  available = std::min(available, left_under(RLIMIT_DATA, data == kUnlimited ? 0 : data));
  // cgroup v2: this process's group, from "0::/path" in /proc/self/cgroup.
  std::ifstream groups("/proc/self/cgroup");
  std::string group;
  for (std::string line; std::getline(groups, line);) {
    if (line.rfind("0::", 0) == 0) group = line.substr(3);
  }
  const std::string dir = "/sys/fs/cgroup" + group;
  const std::uint64_t cgroup_max = number_in(dir + "/memory.max");
  const std::uint64_t cgroup_used = number_in(dir + "/memory.current");
  if (cgroup_max != kUnlimited && cgroup_used != kUnlimited) {
    available = std::min(available, cgroup_max > cgroup_used ? cgroup_max - cgroup_used : 0);
  }
  return available;
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t available = available_memory_bytes();
  if (bytes > available) {
    throw std::invalid_argument(what + " needs " + bytes_text(bytes) + ", more than the " + bytes_text(available) +
                                " of memory available");
  }
}

}  // namespace nestfast::io
