#pragma once
// --gpu auto|on|off|emulate: where the DP search runs its instances. auto
// (the default) uses the GPU batch (gpu/batched_dp.hpp) when this build has
// a back-end and a device is present, else the CPU; the plans are the same.
// emulate runs the batch kernel's code on the CPU, lane by lane: slow, but it
// checks the batch path where there is no GPU (the e2e tests do).
#include <CLI/CLI.hpp>
#include <string>

#include "solver/search/dp_batch.hpp"

namespace nestfast::jobs {

struct DpDevice {
  search::DpBatchRunner runner;  // empty: OpenMP threads on the CPU
  std::string name;              // "cpu" or "gpu (<back-end>)"
};

void add_gpu_option(CLI::App& command, std::string& choice);

// Throws std::invalid_argument ("--gpu on: ...") when a GPU is asked for and
// there is none.
DpDevice choose_dp_device(const std::string& choice);

}  // namespace nestfast::jobs
