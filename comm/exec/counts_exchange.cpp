#include "comm/exec/counts_exchange.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

TrafficMatrix gather_counts(MPI_Comm comm, const AlltoallvLayout& layout) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // A wrong-length layout is also a disagreement every rank must learn about.
  const bool my_shape_ok = layout.ranks() == size && static_cast<int>(layout.recv_counts.size()) == size &&
                           static_cast<int>(layout.send_displs.size()) == size &&
                           static_cast<int>(layout.recv_displs.size()) == size;
  int bad_shape_rank = my_shape_ok ? size : rank;
  allreduce_yielding(MPI_IN_PLACE, &bad_shape_rank, 1, MPI_INT, MPI_MIN, comm);
  if (bad_shape_rank != size) {
    throw std::invalid_argument("alltoallv layout of rank " + std::to_string(bad_shape_rank) +
                                " does not have one count and displacement per rank (" + std::to_string(size) +
                                " ranks)");
  }

  std::vector<std::uint64_t> gathered(static_cast<std::size_t>(size) * size);
  allgather_yielding(layout.send_counts.data(), size, MPI_UINT64_T, gathered.data(), comm);
  const TrafficMatrix counts(size, std::move(gathered));

  // The receiving rank with the lowest number that disagrees describes its first mismatch to all.
  int first_src = -1;
  long long mismatches = 0;
  for (int src = 0; src < size; ++src) {
    if (counts(src, rank) == layout.recv_counts[src]) continue;
    if (first_src < 0) first_src = src;
    ++mismatches;
  }
  int reporter = mismatches > 0 ? rank : size;
  allreduce_yielding(MPI_IN_PLACE, &reporter, 1, MPI_INT, MPI_MIN, comm);
  if (reporter == size) return counts;

  allreduce_yielding(MPI_IN_PLACE, &mismatches, 1, MPI_LONG_LONG, MPI_SUM, comm);
  std::uint64_t detail[2] = {static_cast<std::uint64_t>(first_src), 0};
  if (rank == reporter) detail[1] = layout.recv_counts[first_src];
  bcast_yielding(detail, 2, MPI_UINT64_T, reporter, comm);
  const int src = static_cast<int>(detail[0]);
  throw std::invalid_argument("alltoallv counts disagree: rank " + std::to_string(reporter) + " expects " +
                              std::to_string(detail[1]) + " bytes from rank " + std::to_string(src) +
                              ", which sends " + std::to_string(counts(src, reporter)) + " (" +
                              std::to_string(mismatches) + " mismatched pairs in all)");
}

}  // namespace nestfast::comm
