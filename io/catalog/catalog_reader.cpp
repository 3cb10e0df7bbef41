#include "io/catalog/catalog_reader.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "io/catalog/catalog_types.hpp"
#include "io/catalog/catalog_writer.hpp"
#include "io/catalog/h5_attributes.hpp"
#include "io/catalog/plan_rows.hpp"
#include "io/catalog/preset_groups.hpp"
#include "io/catalog/row_checks.hpp"
#include "io/catalog/table_links.hpp"
#include "io/host/files.hpp"
#include "io/host/memory.hpp"

namespace nestfast::io {
namespace {

template <typename Row>
std::vector<Row> read_rows(const std::string& path, hid_t file, const char* name, RowTable layout, std::uint64_t first,
                           std::uint64_t count, bool all) {
  const H5Handle dataset = h5_dataset(H5Dopen2(file, name, H5P_DEFAULT), std::string("opening /") + name);
  const H5Handle space = h5_space(H5Dget_space(dataset), std::string("reading the space of /") + name);
  hsize_t dims = 0;
  H5Sget_simple_extent_dims(space, &dims, nullptr);
  if (all) {
    first = 0;
    count = dims;
  }
  if (first > dims || count > dims - first) {
    throw std::invalid_argument(path + ": /" + name + ": rows " + std::to_string(first) + " + " +
                                std::to_string(count) + " are past its " + std::to_string(dims) + " rows");
  }
  // A damaged dimension (2^34 rows) is named with the memory it would take, before allocating.
  const std::uint64_t bytes = count > UINT64_MAX / sizeof(Row) ? UINT64_MAX : count * sizeof(Row);
  require_memory(bytes, path + ": reading " + std::to_string(count) + " rows of /" + name);
  std::vector<Row> rows(count);
  if (count == 0) return rows;
  const hsize_t start = first;
  const hsize_t length = count;
  h5_check(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, nullptr, &length, nullptr), "selecting rows");
  const H5Handle memory = h5_space(H5Screate_simple(1, &length, nullptr), "creating a memory space");
  const H5Handle memory_type = row_type(layout);
  if (H5Dread(dataset, memory_type, memory, space, H5P_DEFAULT, rows.data()) < 0) {
    // Every table is stored with a Fletcher32 checksum per chunk (catalog_types.cpp).
    const std::string reason = h5_system_reason();
    throw std::invalid_argument(path + ": /" + name + ": rows " + std::to_string(first) + " to " +
                                std::to_string(first + count - 1) + " cannot be read" +
                                (reason.empty() ? ": the file is damaged (a checksum or the compression fails)"
                                                : ": " + reason));
  }
  check_rows(path, name, layout, rows.data(), count, first);
  return rows;
}

// A catalog is an input: what HDF5 cannot read in it (a damaged header,
// attribute or table; HDF5 checks their checksums) is a one-line bad-input
// error naming the file, not a run-time failure of nestfast.
template <typename Read>
auto read_input(const std::string& path, Read&& read) {
  try {
    return read();
  } catch (const std::runtime_error& error) {
    std::string what = error.what();
    if (what.rfind("HDF5: ", 0) == 0) what = what.substr(6);
    throw std::invalid_argument(path + ": " + what + " (the catalog is damaged or unreadable)");
  }
}

}  // namespace

CatalogReader::CatalogReader(const std::string& path) : path_(path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  require_regular_input(path, "catalog");  // HDF5 would wait forever on a FIFO
  if (H5Fis_hdf5(path.c_str()) <= 0) throw std::invalid_argument(path + ": not an HDF5 file (or missing)");
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw std::invalid_argument(path + ": cannot be opened read-only (is a job still writing it?)");
  file_ = H5Handle(file, H5Fclose);
  const bool catalog = read_input(path_, [&] {
    return io::has_attribute(file_, "format") && read_string_attribute(file_, "format") == kCatalogFormat;
  });
  if (!catalog) {
    throw std::invalid_argument(path + ": not a nestfast catalog (no format=\"nestfast-catalog\" attribute)");
  }
  // The one schema check of every catalog read (query, evaluate --plan, merge).
  const std::int64_t version = read_input(path_, [&] {
    return io::has_attribute(file_, "schema_version") ? read_i64_attribute(file_, "schema_version") : std::int64_t{0};
  });
  if (version != kCatalogSchemaVersion) {
    throw std::invalid_argument(path + ": catalog schema_version " + std::to_string(version) + ", this nestfast reads " +
                                std::to_string(kCatalogSchemaVersion) + " only; run its job again with this nestfast");
  }
  if (!has("plans")) {
    throw std::invalid_argument(path + ": the catalog is unfinished (no /plans yet); let its job complete or resume it");
  }
}

std::string CatalogReader::string_attribute(const char* name) const {
  return read_input(path_, [&] { return read_string_attribute(file_, name); });
}

bool CatalogReader::has_attribute(const char* name) const {
  return read_input(path_, [&] { return io::has_attribute(file_, name); });
}

std::int64_t CatalogReader::integer_attribute(const char* name) const {
  return read_input(path_, [&] { return read_i64_attribute(file_, name); });
}

bool CatalogReader::has(const char* object_path) const {
  // Check each component, as H5Lexists requires the parents to exist.
  const std::string path = object_path;
  std::size_t end = 0;
  do {
    end = path.find('/', end + 1);
    const std::string prefix = path.substr(0, end);
    if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  } while (end != std::string::npos);
  return true;
}

std::vector<PlanRow> CatalogReader::plans() const {
  return read_input(path_, [&] { return read_rows<PlanRow>(path_, file_, "plans", RowTable::Plans, 0, 0, true); });
}

std::uint64_t CatalogReader::rows_of(const char* table) const {
  return read_input(path_, [&]() -> std::uint64_t {
    const H5Handle dataset = h5_dataset(H5Dopen2(file_, table, H5P_DEFAULT), std::string("opening /") + table);
    const H5Handle space = h5_space(H5Dget_space(dataset), std::string("reading the space of /") + table);
    hsize_t dims = 0;
    h5_check(H5Sget_simple_extent_dims(space, &dims, nullptr), std::string("reading the size of /") + table);
    return dims;
  });
}

std::uint64_t CatalogReader::stage_rows() const { return rows_of("stages"); }

std::vector<StageRow> CatalogReader::stages(std::uint64_t first, std::uint64_t count) const {
  return read_input(path_,
                    [&] { return read_rows<StageRow>(path_, file_, "stages", RowTable::Stages, first, count, false); });
}

std::vector<ValidationRow> CatalogReader::validation() const {
  if (!has("validation/alltoallv")) return {};
  std::vector<ValidationRow> rows = read_input(path_, [&] {
    return read_rows<ValidationRow>(path_, file_, "validation/alltoallv", RowTable::Validation, 0, 0, true);
  });
  check_validation_plans(path_, rows, rows_of("plans"));
  return rows;
}

CatalogReader::PlanTables CatalogReader::plan_tables() const {
  PlanTables tables;
  tables.plans = plans();
  tables.stages = stages(0, stage_rows());
  check_plan_stages(path_, tables.plans, tables.stages);
  return tables;
}

std::vector<search::PlanRecord> CatalogReader::plan_records() const {
  const PlanTables tables = plan_tables();
  std::vector<search::PlanRecord> records;
  records.reserve(tables.plans.size());
  for (const PlanRow& row : tables.plans) {
    const auto first = tables.stages.begin() + static_cast<std::ptrdiff_t>(row.stage_offset);
    records.push_back(read_input(path_, [&] {
      try {
        return plan_record(row, {first, first + static_cast<std::ptrdiff_t>(row.stage_count)});
      } catch (const std::invalid_argument& error) {  // a name that is no kind, mode or dimension
        throw std::invalid_argument(path_ + ": /plans row " + std::to_string(records.size()) + ": " + error.what());
      }
    }));
  }
  return records;
}

ModelSpec CatalogReader::model(const std::string& name) const {
  const std::string group_path = "models/" + preset_link_name(name);
  if (!has(group_path.c_str())) throw std::invalid_argument(path_ + ": no /" + group_path);
  return read_input(path_, [&] {
    const H5Handle group = h5_group(H5Gopen2(file_, group_path.c_str(), H5P_DEFAULT), "opening /" + group_path);
    return read_model_group(group, path_ + ":/" + group_path);
  });
}

ClusterSpec CatalogReader::cluster(const std::string& name) const {
  const std::string group_path = "clusters/" + preset_link_name(name);
  if (!has(group_path.c_str())) throw std::invalid_argument(path_ + ": no /" + group_path);
  return read_input(path_, [&] {
    const H5Handle group = h5_group(H5Gopen2(file_, group_path.c_str(), H5P_DEFAULT), "opening /" + group_path);
    return read_cluster_group(group, path_ + ":/" + group_path);
  });
}

}  // namespace nestfast::io
