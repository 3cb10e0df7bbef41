#pragma once
// Point-to-point byte messages of any size (MPI 4 large-count calls, so
// counts above 2^31 need no chunking), collected into one Waitall. Empty
// messages are never posted: both sides know the count and skip it alike.
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace nestfast::comm {

class RequestBatch {
 public:
  void receive(void* buffer, std::uint64_t bytes, int peer, int tag, MPI_Comm comm);
  void send(const void* buffer, std::uint64_t bytes, int peer, int tag, MPI_Comm comm);
  void wait_all();  // wait_yielding; throws std::runtime_error naming MPI's error

 private:
  std::vector<MPI_Request> requests_;
};

// Distinct tags per phase and stage. Stages beyond the tag space wrap around,
// which stays correct because MPI never reorders messages of one sender,
// communicator and tag, and every step of a phase is posted in stage order.
enum class TagPhase : int { kIntrinsic = 0, kBalance = 1, kRail = 2, kForward = 3, kPlain = 4, kGrant = 5 };
int phase_tag(MPI_Comm comm, TagPhase phase, int stage);

// MPI_Waitall that gives the core away between polls (IdleBackoff). MPICH's
// own waits spin, so ranks that outnumber the cores (8 ranks on 2 here) burn
// whole scheduler slices waiting for a peer that cannot run; on a dedicated
// core the yield returns at once and costs a system call per poll.
void wait_yielding(std::vector<MPI_Request>& requests);

// What a progress loop does when a poll found nothing: yield the core, and
// once nothing has happened for kIdleBeforePause, sleep kIdlePause per poll.
// Yielding alone is not enough where ranks outnumber the cores: a rank that
// waits (a non-rail rank waiting for its forwards, a sender waiting for a
// grant) comes back at once and takes the slices its peers need to post the
// next chunk, so their links idle (4 x 2 testbed, hot:5 16 MiB at load
// average 13-16, fast at 0.69-0.90 of the bound yielding, 0.90-0.95 with the
// pause). A pause starves nobody: on the testbed a socket buffer holds 10 ms
// of a NIC's data, and on a fast network a rank that polled in vain for
// 1 ms waits on a slow peer, so 200 us more is a fifth of what it waited.
class IdleBackoff {
 public:
  static constexpr double kIdleBeforePause = 1e-3;  // seconds
  static constexpr long kIdlePauseNs = 200'000;
  void idle();                    // one poll found nothing
  void progressed() { idle_since_ = -1; }

 private:
  double idle_since_ = -1;  // MPI_Wtime of the first empty poll in a row, -1 while busy
};

// The blocking collectives this folder needs, with the same waiting
// (MPI_Ibarrier, MPI_Iallreduce, ... then wait_yielding).
void barrier_yielding(MPI_Comm comm);
void allreduce_yielding(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
void allgather_yielding(const void* in, int count, MPI_Datatype type, void* out, MPI_Comm comm);
void bcast_yielding(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);

// Throws std::runtime_error with MPI's message when `code` is not MPI_SUCCESS.
void check_mpi(int code, const char* what);

}  // namespace nestfast::comm
