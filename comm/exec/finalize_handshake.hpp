#pragma once
// What every rank does right before MPI_Finalize, so that MPICH 4.0.x over
// UCX's TCP transport cannot hang in it.
//
// Why it hangs (MPICH 4.0.2 src/mpid/ch4/netmod/ucx/ucx_init.c,
// MPIDI_UCX_mpi_finalize_hook; UCX 1.13 src/uct/tcp/tcp_ep.c,
// uct_tcp_ep_flush and uct_tcp_ep_am_prepare): MPI_Finalize closes every
// endpoint in flush mode, progresses UCX until its own closes are done, then
// blocks in the PMI barrier without progressing UCX any more. A TCP endpoint
// that has sent anything since its last flush closes by sending a zero-length
// PUT and waiting for the peer's PUT ACK. A rank whose closes needed nothing
// from a late peer, or that got its ACKs before the late peer's PUT arrived,
// sits in the PMI barrier; the late peer waits for an ACK forever and never
// reaches the barrier. MPICH fixed it in 4.2.0 (commits 08d8105, d6c7cd5: the
// PMI barrier moved in front of the closes, so every rank progresses while
// any close is open).
//
// The same order from outside: (1) every rank sends a zero-byte message to
// every other rank and receives one from each, so that every endpoint pair
// needs a PUT ACK in both directions and no rank's closes can finish before
// it has answered every peer; (2) a barrier after which no rank progresses
// UCX before MPI_Finalize issues its closes: the process manager's PMI
// barrier (hydra's PMI-1 wire protocol on PMI_FD, MPICH src/pmi/simple),
// where a rank blocks in a read. Each rank then sends its own closing PUT to
// a peer before it ACKs the peer's (one TCP stream per pair, in order), so
// every PUT is answered before its receiver leaves. Without a PMI_FD (srun,
// PMIx) step (2) is an MPI_Barrier, which narrows the race but cannot close
// it: use MPICH >= 4.2 there.
#include <mpi.h>

namespace nestfast::comm {

// Collective over `world` (MPI_COMM_WORLD, all ranks, nothing in flight).
// Call on the normal exit path only, right before MPI_Finalize.
void finalize_handshake(MPI_Comm world);

}  // namespace nestfast::comm
