#include "jobs/catalog/agreement.hpp"

#include <vector>

namespace nestfast::jobs {

void agree_on_failure(MPI_Comm comm, int exit_code, const std::string& message) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = exit_code != 0 ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int code = exit_code;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
  if (rank == first) message.copy(text.data(), message.size());
  MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
  std::string agreed(text.data(), static_cast<std::size_t>(length));
  if (first != 0 && size > 1) agreed = "rank " + std::to_string(first) + ": " + agreed;
  throw JobError(code, agreed);
}

}  // namespace nestfast::jobs
