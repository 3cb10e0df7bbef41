#include "comm/plan/fast_plan.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "comm/plan/birkhoff.hpp"
#include "comm/plan/intra_server_balance.hpp"
#include "comm/plan/seeded_hash.hpp"

namespace nestfast::comm {

std::span<const std::int32_t> FastPlan::stage_perm(std::size_t k) const {
  const auto S = static_cast<std::size_t>(servers());
  return {stage_perms.data() + k * S, S};
}

std::span<const std::int32_t> FastPlan::stage_source(std::size_t k) const {
  const auto S = static_cast<std::size_t>(servers());
  return {stage_sources.data() + k * S, S};
}

std::span<const StreamSegment> FastPlan::rail_stream(int rank, int server) const {
  const std::size_t slot = static_cast<std::size_t>(rank) * static_cast<std::size_t>(servers()) + static_cast<std::size_t>(server);
  return {rail_segments.data() + rail_begin[slot], rail_begin[slot + 1] - rail_begin[slot]};
}

std::uint64_t FastPlan::rail_stream_bytes(int rank, int server) const {
  std::uint64_t bytes = 0;
  for (const StreamSegment& segment : rail_stream(rank, server)) bytes += segment.end - segment.begin;
  return bytes;
}

namespace {

// Puts stage order[k] at position k, in place (cycle by cycle, one stage of
// scratch), so the largest array of the plan is never copied.
void order_stages(std::vector<std::uint64_t>& weights, std::vector<std::int32_t>& perms,
                  const std::vector<std::uint32_t>& order, std::size_t servers) {
  std::vector<bool> placed(order.size(), false);
  std::vector<std::int32_t> held(servers);
  auto block = [&](std::size_t k) { return perms.begin() + static_cast<std::ptrdiff_t>(k * servers); };
  for (std::size_t start = 0; start < order.size(); ++start) {
    if (placed[start] || order[start] == start) continue;
    const std::uint64_t held_weight = weights[start];
    std::copy_n(block(start), servers, held.begin());
    std::size_t k = start;
    while (true) {
      placed[k] = true;
      const std::size_t from = order[k];
      if (from == start) {
        weights[k] = held_weight;
        std::copy(held.begin(), held.end(), block(k));
        break;
      }
      weights[k] = weights[from];
      std::copy_n(block(from), servers, block(k));
      k = from;
    }
  }
}

}  // namespace

FastPlan build_fast_plan(const TrafficMatrix& demand, const ServerMap& map, const FastPlanOptions& options) {
  if (demand.ranks() != map.ranks()) {
    throw std::invalid_argument("fast plan: the demand has " + std::to_string(demand.ranks()) +
                                " ranks but the server map has " + std::to_string(map.ranks()));
  }
  const auto started = std::chrono::steady_clock::now();
  FastPlan plan;
  plan.map = map;
  plan.demand = demand;
  plan.options = options;

  BalancedStreams balanced = balance_servers(demand, map);
  plan.server_matrix = std::move(balanced.server_matrix);
  plan.balance = std::move(balanced.moves);
  plan.rail_begin = std::move(balanced.rail_begin);
  plan.rail_segments = std::move(balanced.rail_segments);

  plan.padded_matrix = plan.server_matrix;
  if (options.quantum > 1) {
    for (std::uint64_t& entry : plan.padded_matrix) entry = (entry + options.quantum - 1) / options.quantum * options.quantum;
  }
  const int S = map.servers();
  plan.padded_line_sum = pad_to_equal_line_sums(plan.padded_matrix, S);

  BirkhoffStages stages = birkhoff_decompose(plan.padded_matrix, S, plan.padded_line_sum);
  const auto servers = static_cast<std::size_t>(S);
  plan.stage_weights = std::move(stages.weights);
  plan.stage_perms = std::move(stages.perms);
  order_stages(plan.stage_weights, plan.stage_perms, stages.order, servers);
  plan.stage_sources.resize(plan.stage_perms.size());
  for (std::size_t k = 0; k < plan.stage_weights.size(); ++k) {
    const std::int32_t* perm = &plan.stage_perms[k * servers];
    std::int32_t* source = &plan.stage_sources[k * servers];
    for (std::size_t s = 0; s < servers; ++s) source[perm[s]] = static_cast<std::int32_t>(s);
  }
  plan.plan_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return plan;
}

namespace {

// A list of integers as its length and then one 64-bit word per value.
template <class Range>
void add_all(Fnv1a64& print, const Range& values) {
  print.add_word(static_cast<std::uint64_t>(values.size()));
  for (const auto& value : values) print.add_word(static_cast<std::uint64_t>(value));
}

}  // namespace

std::uint64_t plan_fingerprint(const FastPlan& plan) {
  Fnv1a64 print;  // over the words' little-endian bytes: the same on every platform
  add_all(print, plan.map.rank_server());
  add_all(print, plan.demand.row_major());
  print.add_word(plan.options.quantum);
  add_all(print, plan.server_matrix);
  add_all(print, plan.padded_matrix);
  print.add_word(plan.padded_line_sum);
  add_all(print, plan.stage_weights);
  add_all(print, plan.stage_perms);
  add_all(print, plan.stage_sources);
  print.add_word(plan.balance.size());
  for (const BalanceMove& move : plan.balance) {
    for (std::uint64_t word : {std::uint64_t(move.from), std::uint64_t(move.to), std::uint64_t(move.range.owner),
                               std::uint64_t(move.range.server), move.range.begin, move.range.end}) {
      print.add_word(word);
    }
  }
  add_all(print, plan.rail_begin);
  for (const StreamSegment& segment : plan.rail_segments) {
    for (std::uint64_t word : {std::uint64_t(segment.owner), std::uint64_t(segment.server), segment.begin, segment.end}) {
      print.add_word(word);
    }
  }
  return print.value();
}

}  // namespace nestfast::comm
