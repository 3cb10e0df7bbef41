#include "jobs/dp_device.hpp"

#include <stdexcept>

#include "gpu/batched_dp.hpp"
#include "gpu/device.hpp"

namespace nestfast::jobs {

void add_gpu_option(CLI::App& command, std::string& choice) {
  command
      .add_option("--gpu", choice,
                  "run the DP instances as GPU batches: auto (when a device is present), on, off, or emulate "
                  "(the batch kernel run on the CPU, for checking) (default auto)")
      ->check(CLI::IsMember({"auto", "on", "off", "emulate"}));
}

DpDevice choose_dp_device(const std::string& choice) {
  if (choice == "emulate") return {gpu::run_dp_batch_emulated, "gpu kernel emulated on the cpu"};
  const bool present = gpu::device_count() > 0;
  if (choice == "on" && !present) {
    throw std::invalid_argument("--gpu on: no GPU device present (this build's GPU back-end: " + gpu::backend_name() +
                                ")");
  }
  if (choice == "off" || !present) return {{}, "cpu"};
  return {gpu::run_dp_batch_on_device, "gpu (" + gpu::backend_name() + ")"};
}

}  // namespace nestfast::jobs
