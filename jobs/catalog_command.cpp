#include "jobs/catalog_command.hpp"

#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <tuple>

#include "jobs/catalog/agreement.hpp"
#include "jobs/catalog_plan_text.hpp"
#include "jobs/dp_device.hpp"
#include "jobs/error_line.hpp"

namespace nestfast::jobs {

namespace {

// The installed copy (<prefix>/share/nestfast) when there is one, else the source tree's.
std::string plot_script_path() {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed = executable.parent_path().parent_path() / "share" / "nestfast" / "plot_catalog.py";
    if (fs::exists(installed, error)) return installed.string();
  }
  return NESTFAST_SOURCE_PLOT_SCRIPT;
}

// --slice "I/N" -> (I, N) with 0 <= I < N.
std::pair<int, int> parse_slice(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used_index = 0;
    std::size_t used_count = 0;
    const int index = std::stoi(text.substr(0, slash), &used_index);
    const int count = std::stoi(text.substr(slash + 1), &used_count);
    if (used_index != slash || used_count != text.size() - slash - 1 || count < 1 || index < 0 || index >= count) {
      throw std::invalid_argument("range");
    }
    return {index, count};
  } catch (const std::exception&) {
    throw std::invalid_argument("--slice: \"" + text + "\" is not I/N with 0 <= I < N");
  }
}

}  // namespace

void add_catalog_options(CLI::App& command, CatalogRequest& request, std::string& slice) {
  command.add_option("--out", request.out, "Catalog file to write (default: [job].out)");
  command.add_flag("--force", request.force, "Overwrite a finished catalog; discard a partial one instead of resuming");
  command.add_option("--slice", slice, "Handle slice I of N (0-based) of the sweep points; writes a part file");
  command.add_flag("--no-progress", [&request](std::int64_t) { request.progress = false; }, "No progress line");
  add_gpu_option(command, request.gpu);
}

int run_catalog_command(CatalogRequest request, const std::string& slice, const char* name) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    agree(MPI_COMM_WORLD, [&] {
      if (!slice.empty()) std::tie(request.slice_index, request.slice_count) = parse_slice(slice);
    });
    const CatalogReport report = run_catalog_job(MPI_COMM_WORLD, request);
    if (rank == 0) {
      std::printf("nestfast %s: job '%s', %llu sweep points, %llu work items (%llu resumed) on %d ranks: sweep %.1f s, total %.1f s\n\n",
                  name, report.job_name.c_str(), static_cast<unsigned long long>(report.points),
                  static_cast<unsigned long long>(report.items), static_cast<unsigned long long>(report.items_resumed),
                  report.ranks, report.sweep_s, report.wall_s);
      std::printf("%s", summary_table(report.plans).c_str());
      if (!report.validation.empty()) {
        std::printf("\nValidation of the chosen plans' all-to-alls on this job's ranks (/validation/alltoallv):\n%s",
                    validation_table(report.validation).c_str());
      }
      std::printf("\ncatalog: %s\n", report.path.c_str());
      std::printf("inspect: nestfast query %s --model MODEL --gpus N\n", report.path.c_str());
      std::printf("figures: python3 %s %s --out figures\n", plot_script_path().c_str(), report.path.c_str());
      std::fflush(stdout);
    }
    return 0;
  } catch (const JobError& error) {
    if (rank == 0) print_error_line(error.what());
    return error.exit_code();
  }
}

}  // namespace nestfast::jobs
