// The batched DP kernel: one block per instance (gpu/batched_dp_kernel.hpp
// has the body it shares with the host emulation).
#include <stdexcept>
#include <string>

#include "gpu/batched_dp_kernel.hpp"
#include "gpu/buffers.hpp"
#include "gpu/portable.hpp"

namespace nestfast::gpu::detail {
namespace {

__global__ void batched_dp_kernel(const DpBatchEntry* entries, const double* values, const int* ints,
                                  double* value_scratch, int* cut_scratch, int* boundaries, DpBatchOutput* outputs) {
  extern __shared__ double shared[];
  const DpBatchEntry entry = entries[blockIdx.x];
  const int phases = dp_block_phases(entry);  // the same for every thread of the block
  for (int phase = 0; phase < phases; ++phase) {
    dp_block_phase(phase, entry, values, ints, value_scratch, cut_scratch, boundaries, &outputs[blockIdx.x], shared,
                   threadIdx.x, blockDim.x);
    __syncthreads();
  }
}

template <class T>
DeviceBuffer upload(const std::vector<T>& host) {
  DeviceBuffer buffer(host.size() * sizeof(T));
  buffer.copy_from_host(host.data(), host.size() * sizeof(T));
  return buffer;
}

}  // namespace

void launch_batched_dp(const PackedDpBatch& batch, std::vector<DpBatchOutput>& outputs, std::vector<int>& boundaries) {
  outputs.assign(batch.entries.size(), DpBatchOutput{});
  boundaries.assign(batch.boundary_ints, 0);
  if (batch.entries.empty()) return;
  const std::size_t shared_bytes = batch.max_shared_doubles * sizeof(double);
  int device = 0;
  int shared_limit = 0;
  NESTFAST_GPU_CHECK(gpuGetDevice(&device));
  NESTFAST_GPU_CHECK(gpuDeviceGetAttribute(&shared_limit, gpuDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (shared_bytes > static_cast<std::size_t>(shared_limit)) {
    throw std::runtime_error("batched DP: an instance needs " + std::to_string(shared_bytes) +
                             " bytes of shared memory, the device allows " + std::to_string(shared_limit));
  }
  constexpr std::size_t kDefaultSharedLimit = 48 * 1024;  // above this CUDA wants an explicit opt-in
  if (shared_bytes > kDefaultSharedLimit) {
    NESTFAST_GPU_CHECK(gpuFuncSetAttribute(reinterpret_cast<const void*>(batched_dp_kernel),
                                           gpuFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
  }
  const DeviceBuffer entries = upload(batch.entries);
  const DeviceBuffer values = upload(batch.values);
  const DeviceBuffer ints = upload(batch.ints);
  DeviceBuffer value_scratch(batch.cells * sizeof(double));
  DeviceBuffer cut_scratch(batch.cells * sizeof(int));
  DeviceBuffer device_boundaries(batch.boundary_ints * sizeof(int));
  DeviceBuffer device_outputs(outputs.size() * sizeof(DpBatchOutput));
  batched_dp_kernel<<<static_cast<unsigned>(batch.entries.size()), kDpThreadsPerBlock, shared_bytes>>>(
      static_cast<const DpBatchEntry*>(entries.data()), static_cast<const double*>(values.data()),
      static_cast<const int*>(ints.data()), static_cast<double*>(value_scratch.data()),
      static_cast<int*>(cut_scratch.data()), static_cast<int*>(device_boundaries.data()),
      static_cast<DpBatchOutput*>(device_outputs.data()));
  NESTFAST_GPU_CHECK(gpuGetLastError());
  NESTFAST_GPU_CHECK(gpuDeviceSynchronize());
  device_outputs.copy_to_host(outputs.data(), outputs.size() * sizeof(DpBatchOutput));
  device_boundaries.copy_to_host(boundaries.data(), boundaries.size() * sizeof(int));
}

}  // namespace nestfast::gpu::detail
