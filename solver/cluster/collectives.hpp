#pragma once
// Collective communication cost, alpha-beta per network level, hierarchical
// across levels. Pure functions of the ClusterSpec; bytes and seconds.
//
// On level l, n participants, b bytes per participant (the full buffer):
//   all-reduce     ring:  2(n-1) * alpha_l + 2(n-1)/n * b / bw_l
//                  halving-doubling: 2 ceil(log2 n) * alpha_l + same bandwidth term
//                  (the cheaper of the two is taken, as NCCL's tuner does)
//   all-gather / reduce-scatter (b = the full gathered buffer):
//                  min(n-1, ceil(log2 n)) * alpha_l + (n-1)/n * b / bw_l
//                  (ring, or NCCL 2.23's PAT at scale: the cheaper, as for
//                  all-reduce; an all-reduce is exactly one of each)
//   all-to-all (b = bytes one participant sends in total, own share included):
//                  (n-1) * alpha_l + (n-1)/n * b / bw_l
// where bw_l = levels[l].bandwidth_Bps * levels[l].efficiency / levels[l].oversubscription.
//
// A group spanning several levels is described by its fan-out per level
// (GroupShape) and costed hierarchically: reduce-scatter inside the
// innermost level, the all-reduce of the 1/n0 shard one level up (recursing),
// then all-gather back down. All-gather and reduce-scatter alone use the
// same decomposition (only one half of it).
#include <cstdint>
#include <span>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/cluster/collective_kernel.hpp"

namespace nestfast {

// fanout[l] = how many level-(l-1) children (devices for l = 0) one level-l
// block of the group holds; the product is the group size. Trailing 1s are
// allowed. The group's level is the highest l with fanout[l] > 1 (0 for a
// single device).
struct GroupShape {
  std::vector<int> fanout;

  int size() const;
  int level() const;
  bool trivial() const { return size() <= 1; }
};

// Effective per-device bandwidth of a level: bandwidth * efficiency / oversubscription.
double effective_bandwidth(const NetworkLevel& level);

// Point-to-point transfer of `bytes` between two devices whose lowest common
// level is `level`.
double p2p_time(const ClusterSpec& cluster, int level, double bytes);

// Flat (single-level) collectives on level `level` with n participants.
double flat_all_reduce_time(const NetworkLevel& level, int n, double bytes);
double flat_all_gather_time(const NetworkLevel& level, int n, double bytes);  // also reduce-scatter

// The group's fanning levels with their latency and effective bandwidth
// (what collective_kernel.hpp computes on). Throws std::invalid_argument when
// it fans out over more than kMaxGroupLevels levels.
FlatGroup flat_group(const ClusterSpec& cluster, const GroupShape& group);

// Hierarchical collectives over a group shape.
double all_reduce_time(const ClusterSpec& cluster, const GroupShape& group, double bytes);
double all_gather_time(const ClusterSpec& cluster, const GroupShape& group, double bytes);
double reduce_scatter_time(const ClusterSpec& cluster, const GroupShape& group, double bytes);

// All-to-all of `bytes` sent per device (own share included, uniform
// destinations) inside `group`, while every other group of the same shape
// runs its own all-to-all at the same time (MoE layers do).
// `imbalance` >= 1 is the hottest receiver's load over the mean.
// A device's bytes split into `local` (to group members on its node) and
// cross-node shares, each priced at the level that joins the two ends; the
// cross shares go through the device's one NIC, so their times add up to
// `cross_time`. With k = fanout[0] group members per node and S nodes:
//  - fan-out (every device posts all sends at once; the hot device's NIC
//    and NVLink carry `imbalance` x the mean):
//      (n-1) alpha_top + imbalance * max(cross_time, local / bw_0)
//  - FAST (comm.md): intra-node rebalancing spreads a node's cross-node
//    bytes over its k NICs, so the node-level bound applies; with one hot
//    device per node the node carries (k - 1 + imbalance) / k x the mean.
//    Received pieces are forwarded inside the node (cross * (k-1)/k bytes):
//      (k-1) alpha_0 + (S-1) alpha_top      (intrinsic step + one Birkhoff
//                                            stage per peer node)
//      + max((k-1+imbalance)/k * cross_time, imbalance * (local + forwarded) / bw_0)
double all_to_all_fanout_time(const ClusterSpec& cluster, const GroupShape& group, double bytes,
                              double imbalance);
double all_to_all_fast_time(const ClusterSpec& cluster, const GroupShape& group, double bytes,
                            double imbalance);

// Where a token goes under DeepEP (solver/model/expert_routing.hpp gives the
// chances): node_hit[j] = P(the token has an expert on node j of the group),
// nodes in group order, seen from node 0 (every node alike under uniform
// routing); member_hit = the mean P(it has an expert on one given member).
struct DeepEpRouting {
  std::vector<double> node_hit;
  double member_hit = 0;
};

// DeepEP's normal (training) dispatch, or its combine, inside `group`
// (deepseek-ai/DeepEP 567632dd; members node by node, fanout[0] per node):
// each device sends `token_bytes`, its tokens once each.
//  - within one node: one NVLink copy per (token, destination member)
//    (csrc/kernels/intranode.cu:346-349);
//  - across nodes: one RDMA copy per (token, destination node), on the
//    device's own rail to the member of the same local index, which forwards
//    it over NVLink once per destination member there; the node's own
//    members get theirs over NVLink directly (csrc/kernels/internode.cu:
//    628-690, 807-828, 960-998). The combine runs the same path backwards,
//    summing at the forwarder (:1955-1960).
// With R = rail bytes out, sum_j token_bytes * node_hit[j] at the level that
// joins node 0 and j, and V = NVLink bytes out, token_bytes * (k-1) *
// member_hit (own node) + the arrivals, token_bytes * sum_j node_hit[j], each
// forwarded to (k-1) * member_hit / mean node_hit other members:
//      2 (alpha_top + alpha_0)            (the layout notify round the host
//                                          waits on, then the data)
//      + max((k-1+imbalance)/k * R time, imbalance * V / bw_0)
// a node's arrivals spreading over its k rails as FAST's do.
double all_to_all_deepep_time(const ClusterSpec& cluster, const GroupShape& group, double token_bytes,
                              const DeepEpRouting& routing, double imbalance);

// FAST's price of one given all-to-all inside `group` (what a validation runs,
// priced by the model above): bytes[g * n + h] = bytes member g sends member h,
// n = group.size(), members in group order (node by node, fanout[0] per node,
// nodes in the order the levels above group them). The loads are read off
// the matrix instead of assumed from `imbalance`:
//  - the busiest node's cross-node bytes, out or in, over its k NICs (the
//    intra-node balance), each node pair at the level that joins the two;
//  - the busiest member's scale-up bytes, sent or received: its same-node
//    blocks, the balance hand-overs (down to ceil(node's bytes for a peer / k)
//    per member), and the forwarding of rail arrivals (a member's rail brings
//    1/k of its node's arrivals; what is not its own goes on to the others).
// On a uniform matrix this is the uniform price at imbalance 1.
// std::invalid_argument when bytes.size() != n * n.
double all_to_all_fast_time(const ClusterSpec& cluster, const GroupShape& group, std::span<const std::uint64_t> bytes);

}  // namespace nestfast
