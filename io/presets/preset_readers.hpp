#pragma once
// One reader per preset kind: a checked TOML file in, a solver spec out.
#include <cstdint>
#include <string>
#include <string_view>

#include "io/presets/preset_files.hpp"
#include "io/presets/toml_table_reader.hpp"
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

ModelSpec read_model_preset(const PresetFile& file);
GpuSpec read_gpu_preset(const PresetFile& file);
ClusterSpec read_cluster_preset(const PresetFile& file);

struct PresetHeader {
  std::string name;
  std::string source;
};

// The `name` and `source` keys of every preset table; a preset found by name
// must carry that name, so listings and lookups agree. `source` (where the
// numbers come from) may be missing or empty: one warning line on stderr per
// file and process says so.
PresetHeader read_preset_header(const TomlTableReader& table, const PresetFile& file);

// A memory size given in GiB (positive, plausible) as bytes.
std::uint64_t hbm_bytes_from_GiB(const TomlTableReader& table, std::string_view key);

}  // namespace nestfast::io
