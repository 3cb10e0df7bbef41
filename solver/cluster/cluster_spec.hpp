#pragma once
// The system: one accelerator kind and a hierarchy of network levels
// (Calculon's "system" input). Plain data; presets fill it from
// jobs/presets/{gpus,clusters}/*.toml. Units: bytes, seconds, FLOP/s.
#include <cstdint>
#include <string>
#include <vector>

namespace nestfast {

// One point of a GPU's dense-matmul efficiency curve: a GEMM of `flops`
// floating-point operations reaches `efficiency` x peak. Interpolated in
// log(flops) between points; clamped outside.
struct EfficiencyPoint {
  double flops = 0;
  double efficiency = 0;
};

struct GpuSpec {
  std::string name;
  std::string source;
  std::uint64_t hbm_bytes = 0;
  double hbm_bandwidth_Bps = 0;
  double peak_flops_bf16 = 0;  // dense, no sparsity
  double peak_flops_fp8 = 0;   // 0 where unsupported
  double peak_flops_fp32 = 0;
  double hbm_efficiency = 0;   // achievable fraction of hbm_bandwidth_Bps
  std::vector<EfficiencyPoint> matmul_efficiency;
  // The fused attention kernel (FlashAttention-2/3, cuDNN): achieved
  // fraction of the bf16 peak on the FLOPs it executes, forward and backward.
  double fused_attention_efficiency_forward = 0;
  double fused_attention_efficiency_backward = 0;
  // Fixed cost of every kernel a step runs (the launch gap and the tail of
  // its last wave), seconds.
  double kernel_overhead_s = 0;
  // Fraction of its speed a compute kernel loses while a communication
  // kernel runs beside it (the SMs and HBM bandwidth NCCL/RCCL take).
  double overlap_slowdown = 0;
};

// A network level, innermost first: level 0 joins the devices of a node,
// level 1 the nodes of a rack, and so on. A communication group lives on the
// lowest level whose group holds its whole span.
struct NetworkLevel {
  std::string name;            // "nvlink", "rack", "spine", ...
  int group_size = 0;          // children per group (devices per node, nodes per rack, ...)
  double bandwidth_Bps = 0;    // per device, one direction
  double latency_s = 0;
  double oversubscription = 1; // >= 1
  // Fraction of the line rate a collective library reaches on this level
  // (NCCL/RCCL bus bandwidth / line rate, from a published measurement named
  // in efficiency_source); 1 = the line rate. Effective bandwidth =
  // bandwidth_Bps * efficiency / oversubscription.
  double efficiency = 1;
  std::string efficiency_source;
};

// Where DeepEP's normal (training) kernels run on a cluster
// (deepseek-ai/DeepEP 567632dd, README.md:45, 89-91): nowhere (not an NVIDIA
// NVLink machine), inside a node only (NVLink: Ampere GPUs, or a network
// DeepEP is not tested on), or across nodes too (Hopper GPUs with InfiniBand
// and GPU-initiated RDMA through NVSHMEM, 8 GPUs per NVLink node).
enum class DeepEpSupport { None, Intranode, Internode };

struct ClusterSpec {
  std::string name;
  std::string source;
  GpuSpec gpu;
  std::vector<NetworkLevel> levels;  // innermost first; the outermost group_size may be 0 = unbounded
  DeepEpSupport deepep = DeepEpSupport::None;
  std::string deepep_source;  // why (required when deepep is not None)
};

const char* to_string(DeepEpSupport support);  // "none", "intranode", "internode"
// The inverse; std::invalid_argument naming `what` for anything else.
DeepEpSupport parse_deepep_support(const std::string& text, const std::string& what);

}  // namespace nestfast
