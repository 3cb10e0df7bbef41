#include "comm/exec/messages.hpp"

#include <sched.h>
#include <time.h>

#include <stdexcept>
#include <string>

namespace nestfast::comm {

namespace {

constexpr int kPhases = 6;

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
  wait_yielding(requests_);
  requests_.clear();
}

void IdleBackoff::idle() {
  const double now = MPI_Wtime();
  if (idle_since_ < 0) idle_since_ = now;
  if (now - idle_since_ < kIdleBeforePause) {
    sched_yield();
    return;
  }
  const timespec pause{0, kIdlePauseNs};
  nanosleep(&pause, nullptr);
}

void wait_yielding(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  IdleBackoff backoff;
  for (int done = 0;;) {
    check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) return;
    backoff.idle();
  }
}

void barrier_yielding(MPI_Comm comm) {
  std::vector<MPI_Request> request(1);
  check_mpi(MPI_Ibarrier(comm, request.data()), "MPI_Ibarrier");
  wait_yielding(request);
}

void allreduce_yielding(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  std::vector<MPI_Request> request(1);
  check_mpi(MPI_Iallreduce(in, out, count, type, op, comm, request.data()), "MPI_Iallreduce");
  wait_yielding(request);
}

void allgather_yielding(const void* in, int count, MPI_Datatype type, void* out, MPI_Comm comm) {
  std::vector<MPI_Request> request(1);
  check_mpi(MPI_Iallgather(in, count, type, out, count, type, comm, request.data()), "MPI_Iallgather");
  wait_yielding(request);
}

void bcast_yielding(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  std::vector<MPI_Request> request(1);
  check_mpi(MPI_Ibcast(buffer, count, type, root, comm, request.data()), "MPI_Ibcast");
  wait_yielding(request);
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
