#pragma once
// Boost.Serialization archives as byte strings, and broadcasting an object
// from one rank to all as such an archive. Every rank runs the same binary,
// so the compact binary archive is used.
#include <mpi.h>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nestfast::io {

template <typename T>
std::string to_archive(const T& value) {
  std::ostringstream stream(std::ios::binary);
  {
    boost::archive::binary_oarchive archive(stream);
    archive << value;
  }
  return stream.str();
}

template <typename T>
void from_archive(const std::string& bytes, T& value) {
  std::istringstream stream(bytes, std::ios::binary);
  boost::archive::binary_iarchive archive(stream);
  archive >> value;
}

// Collective: `value` on `root` is copied to every rank of `comm`.
template <typename T>
void broadcast_archive(MPI_Comm comm, int root, T& value) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string bytes;
  if (rank == root) bytes = to_archive(value);
  std::uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm);
  if (size > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    throw std::runtime_error("broadcast_archive: archive larger than 2 GiB");
  }
  bytes.resize(size);
  MPI_Bcast(bytes.data(), static_cast<int>(size), MPI_BYTE, root, comm);
  if (rank != root) from_archive(bytes, value);
}

// Collective: every rank's `value` arrives at `root` (in rank order); the
// result is empty on the other ranks.
template <typename T>
std::vector<T> gather_archives(MPI_Comm comm, int root, const T& value) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::string bytes = to_archive(value);
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::runtime_error("gather_archives: archive larger than 2 GiB");
  }
  const int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(rank == root ? static_cast<std::size_t>(size) : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm);
  std::vector<int> displacements(lengths.size(), 0);
  long long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += lengths[r];
  }
  if (total > std::numeric_limits<int>::max()) throw std::runtime_error("gather_archives: more than 2 GiB in total");
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(bytes.data(), length, MPI_BYTE, all.data(), lengths.data(), displacements.data(), MPI_BYTE, root, comm);
  std::vector<T> values;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    values.emplace_back();
    from_archive(all.substr(static_cast<std::size_t>(displacements[r]), static_cast<std::size_t>(lengths[r])),
                 values.back());
  }
  return values;
}

}  // namespace nestfast::io
