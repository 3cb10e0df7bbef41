#include <fmt/format.h>

#include <cstdio>
#include <mutex>
#include <set>

#include "io/presets/preset_readers.hpp"

namespace nestfast::io {

PresetHeader read_preset_header(const TomlTableReader& table, const PresetFile& file) {
  PresetHeader header{table.string("name"), table.text_or_empty("source")};
  if (header.source.empty()) {
    static std::mutex mutex;
    static std::set<std::string> warned;
    const std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(file.path.string()).second) {
      std::fprintf(stderr, "nestfast: warning: %s: no source: say where its numbers come from (a datasheet, a paper)\n",
                   file.path.string().c_str());
    }
  }
  if (file.expected_name && header.name != *file.expected_name) {
    table.fail("name", fmt::format("'{}' does not match the file name '{}.toml'", header.name,
                                   *file.expected_name));
  }
  return header;
}

}  // namespace nestfast::io
