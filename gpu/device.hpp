#pragma once
// Which GPU back-end this build has, and whether a device is present.
// Compiled as CUDA, HIP or plain host code, whichever the build found.
#include <string>

namespace nestfast::gpu {

// "cuda", "hip" or "none".
std::string backend_name();

// Number of usable devices; 0 when the build has no back-end or no device
// (never throws: a missing driver is "no device").
int device_count() noexcept;

// Throws std::runtime_error saying that `what` needs a GPU back-end when
// this build has none; does nothing otherwise.
void require_backend(const char* what);

// Runs a tiny kernel on device 0 and checks its result on the host.
// Throws std::runtime_error naming the runtime's error; requires device_count() > 0.
bool run_self_test();

}  // namespace nestfast::gpu
