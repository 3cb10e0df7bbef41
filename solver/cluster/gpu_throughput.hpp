#pragma once
// How long one device takes for a GEMM or a memory-bound pass, from its
// GpuSpec: peak x the matmul efficiency curve, and HBM bandwidth x its
// achievable fraction.
#include "solver/cluster/cluster_spec.hpp"

namespace nestfast {

// Efficiency of one GEMM of `flops` operations: piecewise linear in
// log(flops) between the spec's points, clamped at both ends; 1 when the
// curve is empty.
double matmul_efficiency(const GpuSpec& gpu, double flops);

// Seconds for one bf16 GEMM of `flops` operations.
double matmul_time(const GpuSpec& gpu, double flops);

// Seconds to stream `bytes` through HBM (read + write counted by the caller).
double hbm_time(const GpuSpec& gpu, double bytes);

// Seconds for a fused attention kernel executing `flops` (forward, or
// backward), at the GPU's fused-attention efficiency.
double fused_attention_time(const GpuSpec& gpu, double flops, bool backward);

// Throws std::invalid_argument naming the key when a value is missing,
// non-positive, NaN, or the curve is not increasing in flops.
void validate_gpu(const GpuSpec& gpu);
// Also checks every level (group_size >= 1 except an unbounded outermost 0,
// bandwidth > 0, latency >= 0, oversubscription >= 1, efficiency in (0, 1],
// all finite).
void validate_cluster(const ClusterSpec& cluster);

}  // namespace nestfast
