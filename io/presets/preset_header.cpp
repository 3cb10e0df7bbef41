#include <fmt/format.h>

#include "io/presets/preset_readers.hpp"

namespace nestfast::io {

PresetHeader read_preset_header(const TomlTableReader& table, const PresetFile& file) {
  PresetHeader header{table.string("name"), table.string("source")};
  if (file.expected_name && header.name != *file.expected_name) {
    table.fail("name", fmt::format("'{}' does not match the file name '{}.toml'", header.name,
                                   *file.expected_name));
  }
  return header;
}

}  // namespace nestfast::io
