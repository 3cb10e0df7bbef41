#pragma once
// Whether the MPI library accepts device pointers ("GPU-aware MPI"), and the
// staged path through pinned host memory for when it does not. comm/exec
// hands MPI `MpiDeviceBuffer::for_mpi()` either way and brackets every
// transfer with prepare_send / finish_receive.
//
// No GPU runtime or MPI header is included here.
#include <cstdint>
#include <memory>
#include <string>

namespace nestfast::gpu {

enum class MpiDeviceMode {
  direct,  // MPI reads and writes device memory itself
  staged,  // MPI works on a pinned host mirror; copies around each transfer
};

struct GpuAwareMpi {
  bool gpu_aware = false;  // the MPI library accepts this build's device pointers
  std::string how;         // what answered, e.g. "MPIX_GPU_query_support(CUDA) = 0"
};

// Asks the MPI library, after MPI_Init, whether it accepts device pointers of
// this build's back-end: MPIX_GPU_query_support (MPICH >= 4),
// MPIX_Query_cuda_support / MPIX_Query_rocm_support (Open MPI's mpi-ext.h).
// An MPI without any query counts as not GPU-aware. The environment variable
// NESTFAST_GPU_AWARE_MPI=0|1 overrides the answer (for an MPI that answers
// wrongly); any other value is a std::invalid_argument.
// A build without a GPU back-end always answers false.
GpuAwareMpi query_gpu_aware_mpi();

// direct when gpu_aware, else staged.
MpiDeviceMode choose_mpi_device_mode(const GpuAwareMpi& support);

const char* to_string(MpiDeviceMode mode);

// One device buffer as MPI sees it. Staged mode owns a pinned host mirror of
// the same size; offsets are the same in both.
class MpiDeviceBuffer {
 public:
  // `device` must stay valid for the lifetime of this object.
  MpiDeviceBuffer(void* device, std::uint64_t bytes, MpiDeviceMode mode);
  ~MpiDeviceBuffer();
  MpiDeviceBuffer(MpiDeviceBuffer&&) noexcept;
  MpiDeviceBuffer& operator=(MpiDeviceBuffer&&) noexcept;
  MpiDeviceBuffer(const MpiDeviceBuffer&) = delete;
  MpiDeviceBuffer& operator=(const MpiDeviceBuffer&) = delete;

  // The address to give MPI for byte `offset`: device memory when direct,
  // the pinned mirror when staged.
  void* for_mpi(std::uint64_t offset = 0) const;

  // Before MPI sends bytes [offset, offset + length): staged copies them
  // device -> mirror; direct waits for the device so kernels that wrote them
  // are finished.
  void prepare_send(std::uint64_t offset, std::uint64_t length) const;

  // After a receive into [offset, offset + length) completed: staged copies
  // mirror -> device; direct does nothing.
  void finish_receive(std::uint64_t offset, std::uint64_t length) const;

  MpiDeviceMode mode() const;
  std::uint64_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nestfast::gpu
