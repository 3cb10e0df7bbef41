#pragma once
// Step one of every plan-based alltoallv (comm.md section 2): the send counts
// are allgathered once as 64-bit integers, and each rank checks that what the
// others will send it is what it expects to receive.
#include <mpi.h>

#include "comm/exec/layout.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

// Collective over `comm`. Throws std::invalid_argument on EVERY rank (never
// hangs) when any rank's receive counts disagree with its peers' send counts,
// naming the first disagreeing pair.
TrafficMatrix gather_counts(MPI_Comm comm, const AlltoallvLayout& layout);

}  // namespace nestfast::comm
