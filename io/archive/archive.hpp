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

}  // namespace nestfast::io
