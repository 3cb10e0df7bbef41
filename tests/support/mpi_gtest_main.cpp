// GoogleTest main for tests run under mpiexec: every rank runs every test,
// only rank 0 prints, and the process exit code is the maximum over ranks,
// so a failure on any rank fails the run.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);

  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }

  const int local_result = RUN_ALL_TESTS();
  int global_result = 0;
  MPI_Allreduce(&local_result, &global_result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && local_result == 0 && global_result != 0) {
    std::fprintf(stderr, "[  FAILED  ] a test failed on another rank\n");
  }
  MPI_Finalize();
  return global_result;
}
