// Proves the MPI test machinery: every rank takes part and sees the others.
#include <gtest/gtest.h>
#include <mpi.h>

TEST(MpiFoundation, AllreduceSumsRankNumbers) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_GE(size, 2) << "run this test under mpiexec with several ranks";
  long long sum = 0;
  const long long mine = rank;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, static_cast<long long>(size) * (size - 1) / 2);
}
