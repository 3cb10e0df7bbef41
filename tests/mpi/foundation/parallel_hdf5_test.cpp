// Proves parallel HDF5: all ranks create one file collectively, write
// disjoint hyperslabs of one dataset with collective I/O, and read back the
// whole dataset on every rank.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

std::string shared_temp_path() {
  char name[64] = {};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::snprintf(name, sizeof name, "/tmp/nestfast_phdf5_%d.h5", static_cast<int>(::getpid()));
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  return name;
}

}  // namespace

TEST(ParallelHdf5, CollectiveHyperslabWriteThenRead) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string path = shared_temp_path();
  constexpr hsize_t per_rank = 1000;

  hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  ASSERT_GE(H5Pset_fapl_mpio(access, MPI_COMM_WORLD, MPI_INFO_NULL), 0);
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access);
  ASSERT_GE(file, 0);
  const hsize_t total = per_rank * static_cast<hsize_t>(size);
  hid_t file_space = H5Screate_simple(1, &total, nullptr);
  hid_t dataset = H5Dcreate2(file, "values", H5T_NATIVE_INT64, file_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);

  std::vector<long long> mine(per_rank);
  for (hsize_t i = 0; i < per_rank; ++i) mine[i] = static_cast<long long>(rank) * 1'000'000 + static_cast<long long>(i);
  const hsize_t offset = per_rank * static_cast<hsize_t>(rank);
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &offset, nullptr, &per_rank, nullptr);
  hid_t memory_space = H5Screate_simple(1, &per_rank, nullptr);
  hid_t transfer = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE);
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_INT64, memory_space, file_space, transfer, mine.data()), 0);

  std::vector<long long> all(total);
  H5Sselect_all(file_space);
  ASSERT_GE(H5Dread(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, transfer, all.data()), 0);
  for (int r = 0; r < size; ++r) {
    for (hsize_t i = 0; i < per_rank; i += 97) {
      EXPECT_EQ(all[static_cast<hsize_t>(r) * per_rank + i], static_cast<long long>(r) * 1'000'000 + static_cast<long long>(i));
    }
  }

  H5Pclose(transfer);
  H5Sclose(memory_space);
  H5Sclose(file_space);
  H5Dclose(dataset);
  H5Fclose(file);
  H5Pclose(access);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::remove(path.c_str());
}
