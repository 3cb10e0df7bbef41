#include "comm/exec/messages.hpp"

#include <stdexcept>
#include <string>

namespace nestfast::comm {

namespace {

constexpr int kPhases = 5;

MPI_Count as_count(std::uint64_t bytes) { return static_cast<MPI_Count>(bytes); }

}  // namespace

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

void RequestBatch::receive(void* buffer, std::uint64_t bytes, int peer, int tag, MPI_Comm comm) {
  if (bytes == 0) return;
  MPI_Request request;
  check_mpi(MPI_Irecv_c(buffer, as_count(bytes), MPI_BYTE, peer, tag, comm, &request), "MPI_Irecv_c");
  requests_.push_back(request);
}

void RequestBatch::send(const void* buffer, std::uint64_t bytes, int peer, int tag, MPI_Comm comm) {
  if (bytes == 0) return;
  MPI_Request request;
  check_mpi(MPI_Isend_c(buffer, as_count(bytes), MPI_BYTE, peer, tag, comm, &request), "MPI_Isend_c");
  requests_.push_back(request);
}

void RequestBatch::wait_all() {
  if (requests_.empty()) return;
  const int code = MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  requests_.clear();
  check_mpi(code, "MPI_Waitall");
}

int phase_tag(MPI_Comm comm, TagPhase phase, int stage) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &value, &found);
  const int tag_ub = found ? *static_cast<int*>(value) : 32767;  // 32767 is the minimum MPI guarantees
  const int stage_slots = tag_ub / kPhases;
  return (stage % stage_slots) * kPhases + static_cast<int>(phase);
}

}  // namespace nestfast::comm
