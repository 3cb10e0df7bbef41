#pragma once
// Reading a finished catalog on one process, read-only (query, tests, tools).
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/h5_handle.hpp"
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/plan_record.hpp"

namespace nestfast::io {

class CatalogReader {
 public:
  // Throws std::invalid_argument naming the path when it is not a readable
  // nestfast catalog of this schema_version (an older one is refused with
  // one line saying so).
  explicit CatalogReader(const std::string& path);

  std::string string_attribute(const char* name) const;
  std::int64_t integer_attribute(const char* name) const;
  bool has_attribute(const char* name) const;  // of the file's root
  bool has(const char* object_path) const;

  std::vector<PlanRow> plans() const;
  std::uint64_t stage_rows() const;  // rows in /stages
  // Rows [first, first + count) of /stages; throws std::invalid_argument when
  // they are past its end or would not fit in memory (a damaged catalog).
  std::vector<StageRow> stages(std::uint64_t first, std::uint64_t count) const;
  // Empty when the job ran no validation; each row's plan_row is a row of /plans (table_links.hpp).
  std::vector<ValidationRow> validation() const;

  // /plans and all of /stages, each plan's stages checked to be its own (table_links.hpp).
  struct PlanTables {
    std::vector<PlanRow> plans;
    std::vector<StageRow> stages;
  };
  PlanTables plan_tables() const;
  // Every plan with its stages, as the records solve and evaluate print.
  std::vector<search::PlanRecord> plan_records() const;
  // The model and cluster a plan was priced with (/models/<name>, /clusters/<name>).
  ModelSpec model(const std::string& name) const;
  ClusterSpec cluster(const std::string& name) const;

 private:
  std::uint64_t rows_of(const char* table) const;  // the dimension of a row table

  std::string path_;
  H5Handle file_;
};

}  // namespace nestfast::io
