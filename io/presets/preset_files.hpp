#pragma once
// Finding preset files: names on the search path, or explicit paths.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/presets/presets.hpp"

namespace nestfast::io {

struct PresetFile {
  std::filesystem::path path;
  // Set when found by name: the file's `name` key must say the same.
  std::optional<std::string> expected_name;
};

// A name that contains '/' or ends in ".toml" is a path (a relative one is
// taken relative to `base_dir` when given, else to the working directory);
// any other name is looked up on the search path. Throws
// "unknown <kind> preset 'x' (known: a, b, ...)" when nothing matches.
PresetFile find_preset_file(PresetKind kind, std::string_view name_or_path,
                            const std::filesystem::path& base_dir = {});

// Every preset file of a kind on the search path, by name; the first dir
// holding a name wins.
std::vector<PresetFile> preset_files(PresetKind kind);

}  // namespace nestfast::io
