#pragma once
// The one list of the members of every catalog row table: each member's
// place and type in its row, the rule its values keep (checked by every read,
// row_checks.hpp), its unit and meaning. From it come the HDF5 compound types
// of the rows (native layout, fixed strings) and the one storage layout of
// every row table, with the unit and meaning of every member as attributes of
// the dataset ("<member>.unit", "<member>.meaning") and the table's own
// "meaning".
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {

enum class RowTable { Plans, Stages, Validation };

enum class FieldType { U64, I32, F64, Name, Short, Order, Arguments, Environment };

// What a catalog job writes into a member. "When feasible" rules hold in
// /plans rows with feasible = 1; a row without a plan (feasible = 0) keeps
// those members at 0 or "" (jobs/catalog/assemble.cpp).
enum class ValueRule {
  Any,                   // every value is one a job may write (ids, row numbers, byte counts)
  Positive,              // an integer >= 1
  PositiveWhenFeasible,  // an integer >= 1 in a plan, 0 without one
  Index,                 // an integer >= 0
  Level,                 // a network level >= 0, or -1 for none
  Flag,                  // 0 or 1
  ZeroStage,             // 0 to 3
  NonNegative,           // a finite real >= 0 (a time, a bandwidth)
  PriceWhenFeasible,     // a finite real > 0 in a plan, 0 without one
  Percent,               // a finite real in [0, 100]
  Efficiency,            // a percentage in [0, 100], or NaN where there is no bound
  Name,                  // a non-empty text
  Text,                  // any text
  PlanKind,              // nest, manual, phaze, mcmc, exhaustive
  RecomputeSummary,      // none, selective, full, full/N or mixed (io::recompute_summary), in a plan
  RecomputeModules,      // parse_recompute_modules's lists, in a plan
  StageRecompute,        // none, selective or full
  Optimizer,             // parse_optimizer's names
  AllToAll,              // parse_all_to_all's names
  Framework,             // search::parse_framework's names, in a plan
  Attention,             // search::parse_attention's names, in a plan
  Overlap,               // search::parse_overlap_text's lists, in a plan
  GradReduce,            // parse_grad_reduce's names, in a plan
  Placement,             // search::parse_placement's orders, or ""
};

// One member of a row table. The unit and meaning become the dataset
// attributes "<member>.unit" and "<member>.meaning", so a file explains itself
// to h5ls, h5py and pandas (jobs/catalog_frame.py).
struct RowField {
  const char* name;
  std::size_t offset;  // in the row struct of catalog_rows.hpp
  FieldType type;
  ValueRule rule;
  const char* unit;  // "s", "bytes", "%", "GB/s", "us", "1" (a count or a ratio), "" (a name or a flag)
  const char* meaning;
};

const std::vector<RowField>& row_fields(RowTable table);  // in member order
std::size_t row_size(RowTable table);                     // bytes of one row struct
std::size_t field_bytes(FieldType type);                  // bytes of a member (a text's with its NUL)

H5Handle fixed_string_type(std::size_t chars);
H5Handle row_type(RowTable table);
std::vector<std::string> row_member_names(RowTable table);  // in member order

// Creates the 1-D table `name` of `rows` rows of `table` under `parent`:
// extendible, chunked, shuffled and deflated, with the member attributes. The
// catalog writer and the merge both use it, so a merged catalog stores its
// tables exactly as a direct run. Collective when the file is open for
// parallel access.
H5Handle create_row_table(hid_t parent, const char* name, RowTable table, std::uint64_t rows);

// The creation properties of a catalog file (a direct run's and a merge's):
// attributes in dense storage, so the root attribute `job` holds a job text
// of any length (compact attributes stop at 64 KiB). Dense storage needs the
// file format of HDF5 1.8 or later (kCatalogOldestFormat).
H5Handle catalog_creation_properties();
inline constexpr H5F_libver_t kCatalogOldestFormat = H5F_LIBVER_V18;

// The group name of a model or cluster under /models or /clusters: HDF5 link
// names may not contain '/' or be ".", so preset paths become names.
std::string preset_link_name(const std::string& name);

// The root attribute created_utc of a catalog, direct or merged: now, in UTC, as "2026-12-01T10:19:00Z".
std::string created_utc_now();

}  // namespace nestfast::io
