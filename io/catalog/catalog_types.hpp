#pragma once
// HDF5 compound types of the catalog's rows (native layout, fixed strings),
// and the one storage layout of every row table, with the unit and meaning
// of every member as attributes of the dataset ("<member>.unit",
// "<member>.meaning") and the table's own "meaning".
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {

enum class RowTable { Plans, Stages, Validation };

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
