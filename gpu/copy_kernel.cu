// The copy kernel behind DeviceCopyPlan: one launch runs every chunk of a
// copy list (gpu/copy_kernel.hpp has the body it shares with the host
// emulation).
#include "gpu/copy_kernel.hpp"
#include "gpu/portable.hpp"

namespace nestfast::gpu::detail {
namespace {

__global__ void copy_chunks_kernel(const CopyRange* chunks, std::uint64_t chunk_count, const unsigned char* src,
                                   unsigned char* dst) {
  copy_chunks_block(chunks, chunk_count, src, dst, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x);
}

}  // namespace

void launch_copy_chunks(const CopyRange* device_chunks, std::uint64_t chunk_count, const void* device_src,
                        void* device_dst) {
  if (chunk_count == 0) return;
  copy_chunks_kernel<<<copy_grid_blocks(chunk_count), kCopyThreadsPerBlock>>>(
      device_chunks, chunk_count, static_cast<const unsigned char*>(device_src),
      static_cast<unsigned char*>(device_dst));
  NESTFAST_GPU_CHECK(gpuGetLastError());
  NESTFAST_GPU_CHECK(gpuDeviceSynchronize());
}

}  // namespace nestfast::gpu::detail
