#pragma once
// What a communication that runs beside compute costs the step.
//
// A collective of `comm` seconds launched behind `window` seconds of
// compute on another stream finishes max(comm, window) after the window
// starts, so max(0, comm - window) of it is exposed. Beside that, the
// compute runs slower while the two overlap: NCCL/RCCL kernels take SMs and
// HBM bandwidth from it (GpuSpec::overlap_slowdown = the fraction of speed
// lost), which adds slowdown x min(comm, window). Both terms are >= 0 and
// grow with comm, and a longer window never makes comm + window cost less,
// so stage times stay monotone where the DP needs it.
//
// Header-only and device-compilable: layer_table (per layer) and the stage
// kernel (the interleaved p2p) price with the same arithmetic on CPU and GPU.
#include "solver/cluster/host_device.hpp"

namespace nestfast {

NESTFAST_HD inline double exposed_seconds(double comm, double window, double slowdown) {
  const double exposed = comm > window ? comm - window : 0.0;
  const double overlapped = comm < window ? comm : window;
  return exposed + slowdown * overlapped;
}

}  // namespace nestfast
