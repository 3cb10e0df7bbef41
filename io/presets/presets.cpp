// The public face of the presets: look a name up, read it, list them all.
#include "io/presets/presets.hpp"

#include "io/presets/preset_files.hpp"
#include "io/presets/preset_readers.hpp"
#include "io/presets/preset_summary.hpp"

namespace nestfast::io {

ModelSpec load_model(std::string_view name_or_path) {
  return read_model_preset(find_preset_file(PresetKind::Model, name_or_path));
}

GpuSpec load_gpu(std::string_view name_or_path) {
  return read_gpu_preset(find_preset_file(PresetKind::Gpu, name_or_path));
}

ClusterSpec load_cluster(std::string_view name_or_path) {
  return read_cluster_preset(find_preset_file(PresetKind::Cluster, name_or_path));
}

std::vector<PresetEntry> list_presets(std::optional<PresetKind> only) {
  std::vector<PresetEntry> entries;
  for (const PresetKind kind : kAllPresetKinds) {
    if (only && kind != *only) continue;
    for (const auto& file : preset_files(kind)) {
      PresetEntry entry{kind, *file.expected_name, file.path, ModelSpec{}, {}};
      switch (kind) {
        case PresetKind::Model: entry.spec = read_model_preset(file); break;
        case PresetKind::Gpu: entry.spec = read_gpu_preset(file); break;
        case PresetKind::Cluster: entry.spec = read_cluster_preset(file); break;
      }
      entry.summary = std::visit([](const auto& spec) { return preset_summary(spec); }, entry.spec);
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

}  // namespace nestfast::io
