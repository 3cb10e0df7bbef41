#pragma once
// Reading a finished catalog on one process, read-only (query, tests, tools).
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/h5_handle.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

class CatalogReader {
 public:
  // Throws std::invalid_argument naming the path when it is not a readable nestfast catalog.
  explicit CatalogReader(const std::string& path);

  std::string string_attribute(const char* name) const;
  std::int64_t integer_attribute(const char* name) const;
  bool has_attribute(const char* name) const;  // of the file's root
  bool has(const char* object_path) const;
  // An integer attribute of a group such as "clusters/h100-superpod"; 0 when absent.
  std::uint64_t u64_attribute_of(const std::string& object_path, const char* name) const;

  // The model a stored plan was priced with (/models/NAME, as written by CatalogWriter::write_models).
  ModelSpec model(const std::string& name) const;
  // A stored cluster's GPU HBM per device in bytes; throws std::invalid_argument when the catalog lacks it.
  std::uint64_t gpu_hbm_bytes(const std::string& cluster) const;

  std::vector<PlanRow> plans() const;
  std::uint64_t stage_rows() const;  // rows in /stages
  // Rows [first, first + count) of /stages; throws std::invalid_argument when
  // they are past its end or would not fit in memory (a damaged catalog).
  std::vector<StageRow> stages(std::uint64_t first, std::uint64_t count) const;
  std::vector<ValidationRow> validation() const;  // empty when the job ran no validation

 private:
  std::string path_;
  H5Handle file_;
};

}  // namespace nestfast::io
