#pragma once
// A communicator's rank and size as values, for the many places that need one of them.
#include <mpi.h>

namespace nestfast::comm {

inline int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

inline int size_of(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

}  // namespace nestfast::comm
