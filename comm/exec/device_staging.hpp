#pragma once
// Device buffers for any algorithm: the send buffer is copied from the GPU
// into pinned host memory, the algorithm runs there, and the result is copied
// back (the staged path of comm.md section 2, used for every MPI, GPU-aware or
// not). Timed as a whole, so the copies count.
#include <memory>

#include "comm/exec/alltoallv.hpp"
#include "gpu/buffers.hpp"

namespace nestfast::comm {

class DeviceStagedAlltoallv final : public Alltoallv {
 public:
  explicit DeviceStagedAlltoallv(std::unique_ptr<Alltoallv> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  // `send` and `recv` are device pointers.
  void execute(const std::byte* send, std::byte* recv) override;
  int stages() const override { return inner_->stages(); }
  std::string decision() const override { return inner_->decision(); }
  std::vector<StageTimes> stage_times() const override { return inner_->stage_times(); }

 private:
  std::unique_ptr<Alltoallv> inner_;
  std::uint64_t send_bytes_ = 0;
  std::uint64_t recv_bytes_ = 0;
  gpu::PinnedHostBuffer send_mirror_;
  gpu::PinnedHostBuffer recv_mirror_;
};

// Collective: std::invalid_argument on every rank unless every rank sees a GPU.
void require_devices_everywhere(MPI_Comm comm, const char* what);

}  // namespace nestfast::comm
