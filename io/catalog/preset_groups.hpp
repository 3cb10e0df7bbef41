#pragma once
// The models and clusters a catalog was priced with, as HDF5 groups
// (/models/<name>, /clusters/<name>), written by the catalog job and read
// back by query, evaluate --plan CATALOG and the tests: the file alone is
// enough to price any of its plans again. One list of fields per spec serves
// both directions.
#include <hdf5.h>

#include <string>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

// Collective when the file is open for parallel access (identical arguments
// on every rank); `root` is the rank that writes the per-level datasets.
void write_model_group(hid_t parent, const ModelSpec& model);
void write_cluster_group(hid_t parent, const ClusterSpec& cluster, bool root);

// Serial reads; std::invalid_argument naming `where` when a field is missing.
ModelSpec read_model_group(hid_t group, const std::string& where);
ClusterSpec read_cluster_group(hid_t group, const std::string& where);

}  // namespace nestfast::io
