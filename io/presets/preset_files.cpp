#include "io/presets/preset_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace nestfast::io {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPresetExtension = ".toml";

bool is_dir(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

bool looks_like_path(std::string_view name) {
  return name.find('/') != std::string_view::npos ||
         (name.size() > kPresetExtension.size() && name.ends_with(kPresetExtension));
}

// The installed layout: <prefix>/bin/nestfast and <prefix>/share/nestfast/presets.
std::optional<fs::path> installed_presets_dir() {
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  return executable.parent_path().parent_path() / "share" / "nestfast" / "presets";
}

// name -> file, first dir of the search path wins.
std::map<std::string, fs::path> files_by_name(PresetKind kind) {
  std::map<std::string, fs::path> files;
  for (const auto& dir : preset_search_path()) {
    const fs::path kind_dir = dir / preset_kind_folder(kind);
    if (!is_dir(kind_dir)) continue;
    for (const auto& entry : fs::directory_iterator(kind_dir)) {
      if (!entry.is_regular_file() || entry.path().extension() != kPresetExtension) continue;
      files.emplace(entry.path().stem().string(), entry.path());
    }
  }
  return files;
}

}  // namespace

std::string_view preset_kind_name(PresetKind kind) {
  switch (kind) {
    case PresetKind::Model: return "model";
    case PresetKind::Gpu: return "gpu";
    case PresetKind::Cluster: return "cluster";
  }
  return "preset";
}

std::string_view preset_kind_folder(PresetKind kind) {
  switch (kind) {
    case PresetKind::Model: return "models";
    case PresetKind::Gpu: return "gpus";
    case PresetKind::Cluster: return "clusters";
  }
  return "";
}

std::vector<fs::path> preset_search_path() {
  std::vector<fs::path> dirs;
  const auto add = [&dirs](const fs::path& dir) {
    std::error_code error;
    const fs::path canonical = fs::weakly_canonical(dir, error);
    const fs::path& key = error ? dir : canonical;
    if (std::find(dirs.begin(), dirs.end(), key) == dirs.end()) dirs.push_back(key);
  };
  if (const char* env = std::getenv("NESTFAST_PRESETS"); env != nullptr && *env != '\0') {
    if (!is_dir(env)) {
      throw std::invalid_argument(fmt::format("NESTFAST_PRESETS: '{}' is not a directory", env));
    }
    add(env);
  }
  if (const auto installed = installed_presets_dir(); installed && is_dir(*installed)) add(*installed);
  if (is_dir(NESTFAST_SOURCE_PRESETS_DIR)) add(NESTFAST_SOURCE_PRESETS_DIR);
  return dirs;
}

PresetFile find_preset_file(PresetKind kind, std::string_view name_or_path, const fs::path& base_dir) {
  if (looks_like_path(name_or_path)) {
    fs::path path{std::string(name_or_path)};
    if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      throw std::invalid_argument(
          fmt::format("{} preset file '{}' does not exist", preset_kind_name(kind), path.string()));
    }
    return {path, std::nullopt};
  }
  const auto files = files_by_name(kind);
  if (const auto found = files.find(std::string(name_or_path)); found != files.end()) {
    return {found->second, found->first};
  }
  std::string known;
  for (const auto& [name, path] : files) known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument(fmt::format("unknown {} preset '{}' (known: {})", preset_kind_name(kind),
                                          name_or_path, known.empty() ? "none" : known));
}

std::vector<PresetFile> preset_files(PresetKind kind) {
  std::vector<PresetFile> result;
  for (auto& [name, path] : files_by_name(kind)) result.push_back({path, name});
  return result;
}

}  // namespace nestfast::io
