#pragma once
// Model, GPU and cluster presets: TOML data files under
// <presets dir>/{models,gpus,clusters}/<name>.toml, turned into the solver's
// plain-data specs (units converted here: bytes, bytes/s, seconds, FLOP/s).
//
// A name is looked up on the search path (preset_search_path()); a name that
// contains '/' or ends in ".toml" is a path to a file. Every problem (unknown
// name, TOML syntax, unknown or missing key, wrong type, impossible value) is
// a std::invalid_argument with a one-line message naming file:line and key.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

enum class PresetKind { Model, Gpu, Cluster };

inline constexpr PresetKind kAllPresetKinds[] = {PresetKind::Model, PresetKind::Gpu, PresetKind::Cluster};

// "model", "gpu", "cluster".
std::string_view preset_kind_name(PresetKind kind);
// The folder of a kind inside a presets dir: "models", "gpus", "clusters".
std::string_view preset_kind_folder(PresetKind kind);

ModelSpec load_model(std::string_view name_or_path);
GpuSpec load_gpu(std::string_view name_or_path);
// The cluster's `gpu` key names a GPU preset (or a .toml path, relative to the cluster file).
ClusterSpec load_cluster(std::string_view name_or_path);

struct PresetEntry {
  PresetKind kind;
  std::string name;
  std::filesystem::path path;
  std::variant<ModelSpec, GpuSpec, ClusterSpec> spec;  // the alternative matching `kind`
  std::string summary;                                // one line of key specs
};

// Every preset on the search path (of one kind when `only` is given), loaded
// and checked, by kind then name. A name found in several dirs is listed
// once, from the first dir (which wins).
std::vector<PresetEntry> list_presets(std::optional<PresetKind> only = std::nullopt);

// Where names are looked up, first match wins: $NESTFAST_PRESETS (must be a
// dir when set), <dir of the executable>/../share/nestfast/presets, then the
// source tree's jobs/presets. Dirs that do not exist are skipped (except the
// one $NESTFAST_PRESETS names).
std::vector<std::filesystem::path> preset_search_path();

}  // namespace nestfast::io
