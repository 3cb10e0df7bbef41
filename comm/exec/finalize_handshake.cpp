#include "comm/exec/finalize_handshake.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "comm/exec/communicator.hpp"
#include "comm/exec/messages.hpp"

namespace nestfast::comm {

namespace {

// One PMI-1 barrier on the process manager's socket: "cmd=barrier_in" out,
// "cmd=barrier_out" back (the request and answer MPICH's own PMI_Barrier
// sends, src/pmi/simple/simple_pmi.c). MPICH has no PMI request open between
// MPI calls, so the socket is ours for this exchange. False when there is no
// such socket, or it does not answer as PMI-1 does.
bool pmi_barrier() {
  const char* text = std::getenv("PMI_FD");
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  const long fd = std::strtol(text, &end, 10);
  if (*end != '\0' || fd < 0) return false;
  const std::string request = "cmd=barrier_in\n";
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = write(static_cast<int>(fd), request.data() + sent, request.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  std::string answer;
  for (char c = 0; c != '\n';) {  // byte by byte: never read past the answer
    const ssize_t n = read(static_cast<int>(fd), &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    answer += c;
  }
  return answer.rfind("cmd=barrier_out", 0) == 0;
}

}  // namespace

void finalize_handshake(MPI_Comm world) {
  const int rank = rank_of(world), size = size_of(world);
  if (size > 1) {
    const int tag = phase_tag(world, TagPhase::kPlain, 1);
    std::vector<MPI_Request> requests;
    requests.reserve(2 * static_cast<std::size_t>(size));
    char byte = 0;
    for (int shift = 1; shift < size; ++shift) {
      requests.emplace_back();
      check_mpi(MPI_Irecv(&byte, 0, MPI_BYTE, (rank - shift + size) % size, tag, world, &requests.back()), "MPI_Irecv");
    }
    for (int shift = 1; shift < size; ++shift) {
      requests.emplace_back();
      check_mpi(MPI_Isend(&byte, 0, MPI_BYTE, (rank + shift) % size, tag, world, &requests.back()), "MPI_Isend");
    }
    wait_yielding(requests);
  }
  // Every rank takes the same branch: hydra gives all of them a PMI_FD or none.
  if (!pmi_barrier()) barrier_yielding(world);
}

}  // namespace nestfast::comm
