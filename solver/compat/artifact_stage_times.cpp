#include "solver/compat/artifact_stage_times.hpp"

#include <algorithm>
#include "solver/compat/stage_memory.hpp"

namespace nestfast::compat {

namespace {

// Arrival of `bytes` over level l (device_placement.cpp lines 1416-1421).
double arrival(const LevelMap& levels, int level, double bytes) {
  const double one_way = bytes / levels.clipped_bandwidth(level) + levels.latency(level);
  return level == 0 ? one_way : 2 * one_way;
}

}  // namespace

ArtifactStageTimes::ArtifactStageTimes(const NestProblem& problem, const NestGraph& graph, const LevelMap& levels)
    : size_(graph.layers.size()), levels_(static_cast<std::size_t>(levels.levels())) {
  const std::size_t n = size_;
  const std::size_t entries = (n + 1) * (n + 1);
  forward_.assign(entries * levels_, 0.0);
  backward_.assign(entries * levels_, 0.0);
  recompute_backward_.assign(entries * levels_, 0.0);
  max_in_flight_.assign(entries, 0);
  parameters_.assign(entries, 0.0);

  // Edges by destination and by source, each in input order.
  std::vector<std::vector<const NestEdge*>> into(n), out_of(n);
  for (const auto& edge : graph.edges) {
    into[edge.dest].push_back(&edge);
    out_of[edge.source].push_back(&edge);
  }
  const auto latest_arrival = [&](const std::vector<const NestEdge*>& edges, int level, auto&& external) {
    double latest = 0.0;
    for (const NestEdge* edge : edges) {
      if (external(*edge)) latest = std::max(latest, arrival(levels, level, static_cast<double>(edge->bytes)));
    }
    return latest;
  };

  // Forward passes: for a fixed first layer the pass grows one layer at a time.
  for (std::size_t first = 0; first < n; ++first) {
    for (std::size_t level = 0; level < levels_; ++level) {
      double finish = 0.0;
      for (std::size_t end = first + 1; end <= n; ++end) {
        const std::size_t layer = end - 1;
        const double arrived = latest_arrival(into[layer], static_cast<int>(level),
                                              [&](const NestEdge& edge) { return edge.source < first; });
        finish = std::max(finish, arrived) + graph.layers[layer].fw_ms;
        forward_[at(first, end, static_cast<int>(level))] = finish;
      }
    }
  }

  // The recomputed forward of [first, end): backward latencies summed in
  // chain order (lines 1477-1491).
  std::vector<double> recomputed(entries, 0.0);
  for (std::size_t first = 0; first < n; ++first) {
    double sum = 0.0;
    for (std::size_t end = first + 1; end <= n; ++end) {
      sum += graph.layers[end - 1].bw_ms;
      recomputed[pair(first, end)] = sum;
    }
  }

  // Backward passes: for a fixed end the pass grows one layer at a time
  // towards the front. outgoing[layer * levels + level]: the latest arrival
  // of the layer's gradients from stages at or after `end`.
  std::vector<double> outgoing(n * levels_, 0.0);
  for (std::size_t end = 1; end <= n; ++end) {
    for (std::size_t layer = 0; layer < end; ++layer) {
      for (std::size_t level = 0; level < levels_; ++level) {
        outgoing[layer * levels_ + level] = latest_arrival(out_of[layer], static_cast<int>(level),
                                                           [&](const NestEdge& edge) { return edge.dest >= end; });
      }
    }
    for (std::size_t level = 0; level < levels_; ++level) {
      double finish = 0.0;
      for (std::size_t first = end; first-- > 0;) {
        finish = std::max(finish, outgoing[first * levels_ + level]) + graph.layers[first].bw_ms;
        backward_[at(first, end, static_cast<int>(level))] = finish;
      }
    }
    // With recomputation: the recomputed forward (backward latencies summed
    // in chain order, no transfers) is the earliest start of every layer's
    // backward; max(recomputation, successor's finish) is the successor's
    // finish for every layer but the last, since finishes only grow backwards.
    for (std::size_t first = 0; first < end; ++first) {
      for (std::size_t level = 0; level < levels_; ++level) {
        double finish = recomputed[pair(first, end)];
        for (std::size_t layer = end; layer-- > first;) {
          finish = std::max(finish, outgoing[layer * levels_ + level]) + graph.layers[layer].bw_ms;
        }
        recompute_backward_[at(first, end, static_cast<int>(level))] = finish;
      }
    }
  }

  // Memory (lines 1528-1572): sums in chain order, as the artifact's.
  for (std::size_t first = 0; first < n; ++first) {
    double parameters = 0.0;
    double activations = 0.0;
    double incoming = 0.0;
    for (std::size_t end = first + 1; end <= n; ++end) {
      const std::size_t layer = end - 1;
      parameters += static_cast<double>(graph.layers[layer].parameter_bytes);
      activations += static_cast<double>(graph.layers[layer].activation_bytes);
      for (const NestEdge* edge : into[layer]) {
        if (edge->source < first) incoming += static_cast<double>(edge->bytes);
      }
      parameters_[pair(first, end)] = parameters;
      max_in_flight_[pair(first, end)] =
          compat::max_in_flight(problem, parameters, activations, problem.recompute ? incoming : activations);
    }
  }
}

}  // namespace nestfast::compat
