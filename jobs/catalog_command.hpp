#pragma once
// What `nestfast catalog` and `nestfast run` share: run the job on
// MPI_COMM_WORLD, then rank 0 prints the tables and the catalog's path, or
// the one-line error every rank agreed on. Returns the exit code.
#include <CLI/CLI.hpp>

#include <string>

#include "jobs/catalog/job.hpp"

namespace nestfast::jobs {

// The options both commands take, bound to `request` and `slice`.
void add_catalog_options(CLI::App& command, CatalogRequest& request, std::string& slice);

int run_catalog_command(CatalogRequest request, const std::string& slice, const char* name);

}  // namespace nestfast::jobs
