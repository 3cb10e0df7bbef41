#pragma once
// This process's rank and the rank count of MPI_COMM_WORLD, for the tests.
#include <mpi.h>

namespace nestfast::comm::test_world {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace nestfast::comm::test_world
