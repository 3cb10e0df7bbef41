#pragma once
// The NEST artifact's DP input, as plain data: per tensor-parallel width one
// layer chain (topological order) with per-layer costs, the network levels,
// the memory limit and the baseline configurations to evaluate. Units are the
// artifact's: latencies in ms, sizes in bytes, bandwidths in bytes/s,
// network latencies in s. The io/nest_json reader fills it and validates it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nestfast::compat {

struct NestLayer {
  std::int64_t id = 0;  // the artifact's node id (-1 is the embedding)
  double fw_ms = 0.0;
  double bw_ms = 0.0;
  std::uint64_t parameter_bytes = 0;
  std::uint64_t activation_bytes = 0;
};

// An edge between two chain positions, source < dest.
struct NestEdge {
  std::size_t source = 0;
  std::size_t dest = 0;
  std::uint64_t bytes = 0;
};

struct NestGraph {
  int tp = 1;
  std::vector<NestLayer> layers;  // in the unique topological order
  std::vector<NestEdge> edges;
};

// Levels innermost first: level l groups devices_per_level[l] groups of level l-1.
struct NestNetwork {
  std::vector<double> bandwidth_Bps;
  std::vector<double> latency_s;
  std::vector<int> devices_per_level;
};

enum class NestOptimizer { Sgd, Adam };

struct NestBaseline {
  std::string name;
  int p = 1;  // pipeline stages
  int d = 1;  // data-parallel replicas
  int t = 1;  // tensor-parallel width (selects the graph)
  int num_transformer_layers = 0;
  std::vector<int> layer_partition;  // optional: layers per stage, embedding counted as layer 0
};

struct NestProblem {
  std::vector<NestGraph> graphs;  // one per tensor-parallel width, ascending tp
  NestNetwork network;
  int max_devices = 0;
  std::uint64_t memory_per_device = 0;
  double mbs_in_batch = 0.0;  // micro-batches per global batch
  bool recompute = false;
  NestOptimizer optimizer = NestOptimizer::Sgd;
  int ep_degree = 1;
  int cp_degree = 1;
  std::vector<NestBaseline> baselines;

  // Devices of one pipeline stage at tensor-parallel width tp.
  int stage_devices(int tp) const { return tp * ep_degree * cp_degree; }
  // nullptr when the input has no graph for that width.
  const NestGraph* graph_for(int tp) const {
    for (const auto& graph : graphs) {
      if (graph.tp == tp) return &graph;
    }
    return nullptr;
  }
};

}  // namespace nestfast::compat
