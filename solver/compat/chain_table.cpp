#include "solver/compat/chain_table.hpp"

#include <algorithm>

namespace nestfast::compat {

ChainTable::ChainTable(const NestGraph& graph) : graph_(&graph) {
  const std::size_t n = graph.layers.size();
  parameter_prefix_.assign(n + 1, 0);
  activation_prefix_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& layer = graph.layers[i];
    parameter_prefix_[i + 1] = parameter_prefix_[i] + layer.parameter_bytes;
    activation_prefix_[i + 1] = activation_prefix_[i] + layer.activation_bytes;
  }
  fw_sum_.assign((n + 1) * (n + 1), 0.0);
  bw_sum_.assign((n + 1) * (n + 1), 0.0);
  for (std::size_t first = 0; first < n; ++first) {
    for (std::size_t end = first + 1; end <= n; ++end) {
      fw_sum_[index(first, end)] = fw_sum_[index(first, end - 1)] + graph.layers[end - 1].fw_ms;
      bw_sum_[index(first, end)] = bw_sum_[index(first, end - 1)] + graph.layers[end - 1].bw_ms;
    }
  }
  // incoming(first, end): edges with source < first <= dest < end, a prefix
  // over `end` for each `first`.
  incoming_.assign((n + 1) * (n + 1), EdgeSum{});
  outgoing_.assign((n + 1) * (n + 1), EdgeSum{});
  std::vector<EdgeSum> by_dest(n + 1);
  for (std::size_t first = 0; first <= n; ++first) {
    std::fill(by_dest.begin(), by_dest.end(), EdgeSum{});
    for (const auto& edge : graph.edges) {
      if (edge.source < first && edge.dest >= first) {
        by_dest[edge.dest].bytes += edge.bytes;
        by_dest[edge.dest].count += 1;
      }
    }
    EdgeSum running;
    for (std::size_t end = first; end <= n; ++end) {
      incoming_[index(first, end)] = running;
      if (end < n) {
        running.bytes += by_dest[end].bytes;
        running.count += by_dest[end].count;
      }
    }
  }
  // outgoing(first, end): edges with first <= source < end <= dest, grown
  // from first = end downwards one source at a time.
  std::vector<std::vector<const NestEdge*>> by_source(n);
  for (const auto& edge : graph.edges) by_source[edge.source].push_back(&edge);
  for (std::size_t end = 0; end <= n; ++end) {
    EdgeSum running;
    for (std::size_t first = end; first-- > 0;) {
      for (const NestEdge* edge : by_source[first]) {
        if (edge->dest >= end) {
          running.bytes += edge->bytes;
          running.count += 1;
        }
      }
      outgoing_[index(first, end)] = running;
    }
  }
}

EdgeSum ChainTable::incoming(std::size_t first, std::size_t end) const { return incoming_[index(first, end)]; }
EdgeSum ChainTable::outgoing(std::size_t first, std::size_t end) const { return outgoing_[index(first, end)]; }

}  // namespace nestfast::compat
