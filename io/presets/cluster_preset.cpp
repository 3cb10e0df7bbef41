// jobs/presets/clusters/*.toml -> ClusterSpec. Levels are listed innermost
// first; bandwidths are per device and direction in GB/s (1e9 B/s) and
// latencies in microseconds, converted to bytes/s and seconds here. An
// optional measured link efficiency comes with its source.
#include <fmt/format.h>

#include "io/presets/decimal_scale.hpp"
#include "io/presets/preset_readers.hpp"

namespace nestfast::io {

namespace {


NetworkLevel read_level(const TomlTableReader& table, bool outermost) {
  NetworkLevel level;
  level.name = table.string("name");
  // Only the outermost level may be unbounded (0): the cluster grows there.
  level.group_size = table.integer("group_size", outermost ? Bound::NonNegative : Bound::AtLeastOne);
  level.bandwidth_Bps = decimal_scaled(table.number("bandwidth_GBps", Bound::Positive), 9);
  level.latency_s = decimal_scaled(table.number("latency_us", Bound::NonNegative), -6);
  // Optional: a level without it is not oversubscribed.
  level.oversubscription = table.optional_number("oversubscription", Bound::AtLeastOne).value_or(1.0);
  // A measured link efficiency must say where it was measured.
  if (const auto efficiency = table.optional_number("efficiency", Bound::Positive)) {
    if (*efficiency > 1) table.fail("efficiency", fmt::format("must be a fraction in (0, 1], got {}", *efficiency));
    level.efficiency = *efficiency;
    const auto source = table.optional_string("efficiency_source");
    if (!source) table.fail("efficiency_source", "is required with efficiency (where was it measured?)");
    level.efficiency_source = *source;
  } else if (table.optional_string("efficiency_source")) {
    table.fail("efficiency_source", "given without efficiency");
  }
  return level;
}

}  // namespace

ClusterSpec read_cluster_preset(const PresetFile& file) {
  const toml::table document = parse_toml_file(file.path);
  const TomlTableReader root(document, file.path, "", {"cluster"});
  const TomlTableReader table(root.table("cluster"), file.path, "cluster",
                              {"name", "source", "gpu", "gpu_hbm_GiB", "level", "deepep", "deepep_source"});
  ClusterSpec cluster;
  auto header = read_preset_header(table, file);
  cluster.name = std::move(header.name);
  cluster.source = std::move(header.source);

  const auto levels = table.table_array("level");
  for (std::size_t index = 0; index < levels.size(); ++index) {
    const TomlTableReader level(*levels[index], file.path, fmt::format("cluster.level[{}]", index),
                                {"name", "group_size", "bandwidth_GBps", "latency_us", "oversubscription", "efficiency",
                                 "efficiency_source"});
    cluster.levels.push_back(read_level(level, index + 1 == levels.size()));
  }

  // Where DeepEP runs (ClusterSpec::deepep), with why; none when not given.
  if (const auto deepep = table.optional_string("deepep")) {
    try {
      cluster.deepep = parse_deepep_support(*deepep, "deepep");
    } catch (const std::invalid_argument&) {
      table.fail("deepep", fmt::format("'{}' is not one of none, intranode, internode", *deepep));
    }
    const auto source = table.optional_string("deepep_source");
    if (cluster.deepep != DeepEpSupport::None && !source)
      table.fail("deepep_source", "is required with deepep (which DeepEP requirement does the machine meet?)");
    cluster.deepep_source = source.value_or("");
  } else if (table.optional_string("deepep_source")) {
    table.fail("deepep_source", "given without deepep");
  }

  // The GPU is a preset of its own; a relative path is relative to this file.
  const std::string gpu_name = table.string("gpu");
  PresetFile gpu_file;
  try {
    gpu_file = find_preset_file(PresetKind::Gpu, gpu_name, file.path.parent_path());
  } catch (const std::invalid_argument& error) {
    table.fail("gpu", error.what());  // a bad GPU *name* is this file's problem
  }
  cluster.gpu = read_gpu_preset(gpu_file);
  // A setup may assume another memory size than the datasheet (NEST's do).
  if (table.optional_number("gpu_hbm_GiB", Bound::Positive)) {
    cluster.gpu.hbm_bytes = hbm_bytes_from_GiB(table, "gpu_hbm_GiB");
  }
  return cluster;
}

}  // namespace nestfast::io
