#include "io/catalog_merge/catalog_merge.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "io/atomic_file/atomic_file.hpp"
#include "io/catalog/catalog_reader.hpp"
#include "io/catalog/catalog_types.hpp"
#include "io/catalog/catalog_writer.hpp"
#include "io/catalog/h5_attributes.hpp"
#include "io/catalog/h5_handle.hpp"
#include "io/host/files.hpp"
#include "io/job/job_file.hpp"

namespace nestfast::io {
namespace {

namespace fs = std::filesystem;

// The same storage as a direct run's tables (chunked, shuffled, deflated).

// One part file, read whole: its plans with their stages, and its validation rows.
struct Part {
  std::string path;
  std::string job_text;
  std::string job_name;
  std::string version;
  std::string git_sha;
  std::int64_t schema_version = 0;
  std::int64_t mpi_ranks = 0;
  std::int64_t sweep_points = -1;  // -1: a part written before nestfast stored it
  std::vector<PlanEntry> plans;
  std::vector<ValidationRow> validation;
  std::uint64_t first_point = 0;
};

Part read_part(const std::string& path) {
  const CatalogReader reader(path);
  Part part;
  part.path = path;
  part.job_text = reader.string_attribute("job");
  part.job_name = reader.string_attribute("job_name");
  part.version = reader.string_attribute("nestfast_version");
  part.git_sha = reader.string_attribute("git_sha");
  part.schema_version = reader.integer_attribute("schema_version");
  part.mpi_ranks = reader.integer_attribute("mpi_ranks");
  if (reader.has_attribute("sweep_points")) part.sweep_points = reader.integer_attribute("sweep_points");
  const CatalogReader::PlanTables tables = reader.plan_tables();
  const std::vector<PlanRow>& rows = tables.plans;
  part.plans.reserve(rows.size());
  for (const PlanRow& row : rows) {
    const auto first = tables.stages.begin() + static_cast<std::ptrdiff_t>(row.stage_offset);
    part.plans.push_back(PlanEntry{row, {first, first + static_cast<std::ptrdiff_t>(row.stage_count)}});
  }
  if (part.plans.empty()) throw std::invalid_argument(path + ": the part catalog has no plans");
  // Each part holds the presets of its own plans: one that lost them (a deleted /clusters) is damaged,
  // even where another part holds a group of the same name.
  std::set<std::string> models, clusters;
  for (const PlanRow& row : rows) {
    if (models.insert(get_fixed(row.model)).second) (void)reader.model(get_fixed(row.model));
    if (clusters.insert(get_fixed(row.cluster)).second) (void)reader.cluster(get_fixed(row.cluster));
  }
  part.first_point = part.plans.front().row.point_id;
  part.validation = reader.validation();
  return part;
}

// Every part must come from the same job and the same nestfast as the first.
void check_same_job(const Part& first, const Part& part) {
  const auto differs = [&](const char* what) {
    return std::invalid_argument(part.path + ": its " + what + " differs from " + first.path +
                                 "'s (parts of different sweeps cannot be merged)");
  };
  if (part.job_text != first.job_text) throw differs("job text");
  if (part.version != first.version || part.schema_version != first.schema_version) {
    throw differs("nestfast version or schema");
  }
}

// Each sweep point in exactly one part, and every point of the job's sweep present.
std::uint64_t check_coverage(const std::vector<Part>& parts) {
  std::map<std::uint64_t, std::size_t> owner;  // point -> index of its part
  for (std::size_t index = 0; index < parts.size(); ++index) {
    for (const PlanEntry& plan : parts[index].plans) {
      const auto [it, inserted] = owner.emplace(plan.row.point_id, index);
      if (!inserted && it->second != index) {
        throw std::invalid_argument(parts[index].path + ": sweep point " + std::to_string(plan.row.point_id) +
                                    " is also in " + parts[it->second].path + " (the same slice given twice?)");
      }
    }
  }
  const JobSpec job = parse_job(parts.front().job_text, parts.front().path + ":/job");
  const std::uint64_t expected = expand_sweep(job).size();
  for (const Part& part : parts) {
    if (part.sweep_points >= 0 && static_cast<std::uint64_t>(part.sweep_points) != expected) {
      throw std::invalid_argument(part.path + ": sweep_points=" + std::to_string(part.sweep_points) +
                                  " disagrees with its job's " + std::to_string(expected) + " points");
    }
  }
  for (std::uint64_t point = 0; point < expected; ++point) {
    if (!owner.contains(point)) {
      throw std::invalid_argument("sweep point " + std::to_string(point) + " of " + std::to_string(expected) +
                                  " is in none of the " + std::to_string(parts.size()) +
                                  " parts (a slice missing or unfinished?)");
    }
  }
  if (owner.size() != expected) {
    throw std::invalid_argument(parts.front().path + ": the parts hold " + std::to_string(owner.size()) +
                                " sweep points, the job has " + std::to_string(expected));
  }
  return expected;
}

void write_table(hid_t parent, const char* name, RowTable table, std::uint64_t count, const void* rows) {
  const H5Handle dataset = create_row_table(parent, name, table, count);
  const H5Handle type = row_type(table);
  if (count > 0) h5_check(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), std::string("writing ") + name);
}

std::string member_name(hid_t group, hsize_t index, const std::string& path) {
  const ssize_t length = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, nullptr, 0, H5P_DEFAULT);
  if (length < 0) throw std::invalid_argument(path + ": a preset group's name cannot be read (the catalog is damaged)");
  std::vector<char> name(static_cast<std::size_t>(length) + 1, '\0');
  H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, name.data(), name.size(), H5P_DEFAULT);
  return std::string(name.data());
}

// The stored bytes of one preset group: every attribute and dataset, by name,
// as the file holds them (presets are written with fixed-size types only).
// HDF5 checksums neither attributes nor small datasets, so a flipped byte in a
// preset is found only by comparing the parts (which hold the same presets).
std::string preset_bytes(hid_t parent, const std::string& member, const std::string& where, const std::string& path) {
  const auto damaged = [&] {
    return std::invalid_argument(path + ": /" + where + " cannot be read: the file is damaged");
  };
  const hid_t group_id = H5Gopen2(parent, member.c_str(), H5P_DEFAULT);
  if (group_id < 0) throw damaged();
  const H5Handle group(group_id, H5Gclose);
  std::string bytes;
  const auto append = [&](const std::string& name, hid_t type, hsize_t elements, auto&& read) {
    const std::size_t size = H5Tget_size(type) * elements;
    // A preset member is a few levels or one scalar; a huge dataspace is damage, not a preset to allocate for.
    if (size == 0 || size > (std::size_t{1} << 20)) throw damaged();
    std::string data(size, '\0');
    if (read(data.data()) < 0) throw damaged();
    bytes.append(name).append(1, '\0').append(std::to_string(size)).append(1, '\0').append(data);
  };
  H5O_info_t info{};  // HDF5 1.10 (Debian 12): H5Oget_info2 with the fields asked for
  if (H5Oget_info2(group, &info, H5O_INFO_NUM_ATTRS) < 0) throw damaged();
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    const hid_t attribute_id = H5Aopen_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
    if (attribute_id < 0) throw damaged();
    const H5Handle attribute(attribute_id, H5Aclose);
    const H5Handle type(H5Aget_type(attribute), H5Tclose);
    const H5Handle space(H5Aget_space(attribute), H5Sclose);
    const hssize_t elements = H5Sget_simple_extent_npoints(space);
    const ssize_t length = H5Aget_name(attribute, 0, nullptr);
    if (!type.valid() || elements < 0 || length < 0) throw damaged();
    std::string name(static_cast<std::size_t>(length) + 1, '\0');
    H5Aget_name(attribute, name.size(), name.data());
    append("@" + name, type, static_cast<hsize_t>(elements), [&](void* out) { return H5Aread(attribute, type, out); });
  }
  H5G_info_t links{};
  if (H5Gget_info(group, &links) < 0) throw damaged();
  for (hsize_t i = 0; i < links.nlinks; ++i) {
    const std::string name = member_name(group, i, path);
    const hid_t dataset_id = H5Dopen2(group, name.c_str(), H5P_DEFAULT);
    if (dataset_id < 0) throw damaged();
    const H5Handle dataset(dataset_id, H5Dclose);
    const H5Handle type(H5Dget_type(dataset), H5Tclose);
    const H5Handle space(H5Dget_space(dataset), H5Sclose);
    const hssize_t elements = H5Sget_simple_extent_npoints(space);
    if (!type.valid() || elements < 0) throw damaged();
    append(name, type, static_cast<hsize_t>(elements),
           [&](void* out) { return H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out); });
  }
  return bytes;
}

// Copies the members of group `name` (models or clusters) of every part that
// the merged file does not hold yet; the parts of one job name the same presets,
// so a member that several parts hold must be stored the same in each.
void copy_preset_groups(hid_t out_file, const std::vector<Part>& parts, const char* name) {
  std::map<std::string, std::pair<std::string, std::string>> stored;  // member -> (bytes, part path)
  const H5Handle target = h5_group(H5Gcreate2(out_file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                   std::string("creating /") + name);
  for (const Part& part : parts) {
    // What cannot be read here is the part's damage: a bad input, named.
    const auto unreadable = [&](const std::string& what) {
      return std::invalid_argument(part.path + ": " + what + " cannot be read (the catalog is damaged or unreadable)");
    };
    const hid_t file_id = H5Fopen(part.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_id < 0) throw unreadable("the file");
    const H5Handle file(file_id, H5Fclose);
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) continue;
    const hid_t source_id = H5Gopen2(file, name, H5P_DEFAULT);
    if (source_id < 0) throw unreadable(std::string("/") + name);
    const H5Handle source(source_id, H5Gclose);
    H5G_info_t info{};
    if (H5Gget_info(source, &info) < 0) throw unreadable(std::string("the list of /") + name);
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      const std::string member = member_name(source, i, part.path);
      const std::string where = std::string(name).append("/").append(member);
      std::string bytes = preset_bytes(source, member, where, part.path);
      if (const auto seen = stored.find(member); seen != stored.end()) {
        if (seen->second.first != bytes) {
          throw std::invalid_argument(part.path + ": /" + where + " differs from " + seen->second.second +
                                      "'s (parts of one job hold the same presets: one file is damaged)");
        }
        continue;
      }
      stored.emplace(member, std::make_pair(std::move(bytes), part.path));
      if (H5Ocopy(source, member.c_str(), target, member.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
        // Without a system reason (a full disk, EIO) it is the part that cannot be read.
        const std::string reason = h5_system_reason();
        if (reason.empty()) throw std::invalid_argument(part.path + ": /" + where + " cannot be read: the file is damaged");
        throw std::runtime_error("HDF5: copying /" + where + " from " + part.path + " failed: " + reason);
      }
    }
  }
}

}  // namespace

MergeSummary merge_catalogs(const std::vector<std::string>& paths, const std::string& out, bool force) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (paths.empty()) throw std::invalid_argument("merge: no part catalogs given");
  std::error_code error;
  check_output_target(out, "--out", paths);
  check_output_target(out + ".partial", "the merge's temporary file", paths);
  if (fs::exists(out, error) && !force) {
    throw std::invalid_argument(out + ": exists already; pass --force to replace it");
  }

  std::vector<Part> parts;
  parts.reserve(paths.size());
  for (const std::string& path : paths) {
    parts.push_back(read_part(path));
    check_same_job(parts.front(), parts.back());
  }
  MergeSummary summary;
  summary.parts = parts.size();
  summary.points = check_coverage(parts);

  // Slices are contiguous blocks of the sweep: parts in point order give the direct run's row order.
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return a.first_point < b.first_point; });
  std::vector<PlanRow> plan_rows;
  std::vector<StageRow> stage_rows;
  std::vector<ValidationRow> validation_rows;
  for (const Part& part : parts) {
    const std::uint64_t plan_base = plan_rows.size();
    for (const PlanEntry& plan : part.plans) {
      if (!plan_rows.empty() && plan.row.point_id < plan_rows.back().point_id) {
        throw std::invalid_argument(part.path + ": its sweep points interleave with another part's "
                                    "(not a slice of `catalog --slice I/N`)");
      }
      PlanRow row = plan.row;
      row.stage_offset = stage_rows.size();
      for (StageRow stage : plan.stages) {
        stage.plan_row = plan_rows.size();
        stage_rows.push_back(stage);
      }
      plan_rows.push_back(row);
    }
    for (ValidationRow row : part.validation) {
      row.plan_row += plan_base;
      validation_rows.push_back(row);
    }
  }
  summary.plans = plan_rows.size();
  summary.stages = stage_rows.size();
  summary.validation_rows = validation_rows.size();

  const std::string partial = out + ".partial";
  const H5Handle creation = catalog_creation_properties();
  const H5Handle access = h5_plist(H5Pcreate(H5P_FILE_ACCESS), "creating file access properties");
  h5_check(H5Pset_libver_bounds(access, kCatalogOldestFormat, H5F_LIBVER_LATEST), "choosing the file format");
  const hid_t created = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, creation, access);
  if (created < 0) throw std::invalid_argument(partial + ": cannot be created (missing directory or no write permission)");
  try {
    const H5Handle file(created, H5Fclose);
    const Part& first = parts.front();
    std::int64_t most_ranks = 0;
    for (const Part& part : parts) most_ranks = std::max(most_ranks, part.mpi_ranks);
    write_attribute(file, "format", kCatalogFormat);
    write_attribute(file, "schema_version", first.schema_version);
    write_attribute(file, "nestfast_version", first.version);
    write_attribute(file, "git_sha", first.git_sha);
    write_attribute(file, "created_utc", created_utc_now());
    write_attribute(file, "mpi_ranks", most_ranks);  // the largest part job's
    write_attribute(file, "sweep_points", summary.points);
    write_attribute(file, "merged_parts", static_cast<std::int64_t>(parts.size()));
    write_attribute(file, "job_name", first.job_name);
    write_attribute(file, "job", first.job_text);
    copy_preset_groups(file, parts, "models");
    copy_preset_groups(file, parts, "clusters");
    write_table(file, "plans", RowTable::Plans, plan_rows.size(), plan_rows.data());
    write_table(file, "stages", RowTable::Stages, stage_rows.size(), stage_rows.data());
    const H5Handle validation = h5_group(H5Gcreate2(file, "validation", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                         "creating /validation");
    write_table(validation, "alltoallv", RowTable::Validation, validation_rows.size(), validation_rows.data());
  } catch (...) {
    fs::remove(partial, error);  // never leave a half-written file behind
    throw;
  }
  commit_file(partial, out);
  return summary;
}

}  // namespace nestfast::io
