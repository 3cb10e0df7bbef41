#include "comm/plan/fast_plan.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/plan/birkhoff.hpp"
#include "comm/plan/intra_server_balance.hpp"
#include "comm/plan/seeded_hash.hpp"
#include "comm/plan/stage_cover.hpp"

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

struct Decomposition {
  StageMethod method = StageMethod::birkhoff;
  std::uint64_t piece_cap = 0;
  BirkhoffStages stages;
  std::vector<std::uint64_t> capacity;  // what the stages carry per pair
  std::uint64_t line_sum = 0;
  // sum(w) + K alpha, the quantity the methods compete on
  double cost(std::uint64_t stage_cost) const {
    return static_cast<double>(line_sum) + static_cast<double>(stages.weights.size()) * static_cast<double>(stage_cost);
  }
};

Decomposition exact_decomposition(const std::vector<std::uint64_t>& server_matrix, int S, std::uint64_t quantum,
                                  std::size_t stage_limit) {
  Decomposition out;
  out.capacity = server_matrix;
  if (quantum > 1) {
    for (std::uint64_t& entry : out.capacity) entry = (entry + quantum - 1) / quantum * quantum;
  }
  out.line_sum = pad_to_equal_line_sums(out.capacity, S);
  out.stages = birkhoff_decompose(out.capacity, S, out.line_sum, stage_limit);
  return out;
}

Decomposition cover_decomposition(const std::vector<std::uint64_t>& server_matrix, int S, std::uint64_t piece_cap) {
  Decomposition out;
  out.method = StageMethod::cover;
  out.piece_cap = piece_cap;
  out.stages = cover_stages(server_matrix, S, piece_cap);
  const auto n = static_cast<std::size_t>(S);
  out.capacity.assign(n * n, 0);
  for (std::size_t k = 0; k < out.stages.weights.size(); ++k) {
    out.line_sum += out.stages.weights[k];
    for (std::size_t s = 0; s < n; ++s) out.capacity[s * n + static_cast<std::size_t>(out.stages.perms[k * n + s])] += out.stages.weights[k];
  }
  return out;
}

// The method of options.method; automatic with a stage cost: the covers at three piece caps
// (unsplit, and, where an entry outweighs two mean stages of an (S-1)-stage
// schedule, entries cut at 2 and 1 times that mean stage), then the exact
// decomposition unless it cannot win (its weight is at least the bound's,
// each of its stages costs stage_cost_bytes: it is cut off there).
Decomposition decompose(const std::vector<std::uint64_t>& server_matrix, int S, const FastPlanOptions& options) {
  // Free stages (alpha 0): the exact decomposition, whose many small stages
  // also pipeline best (comm/sim); a cover only when asked for.
  const bool exact_only = options.method == StageMethod::birkhoff || options.quantum > 1 ||
                          (options.method == StageMethod::automatic && options.stage_cost_bytes == 0);
  if (exact_only || S <= 1) return exact_decomposition(server_matrix, S, options.quantum, static_cast<std::size_t>(-1));
  const auto n = static_cast<std::size_t>(S);
  std::uint64_t most = 0;  // the largest line sum: the bound, in bytes per NIC
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t row = 0, col = 0;
    for (std::size_t j = 0; j < n; ++j) {
      row += server_matrix[i * n + j];
      col += server_matrix[j * n + i];
    }
    most = std::max({most, row, col});
  }
  const std::uint64_t alpha = options.stage_cost_bytes;
  auto better = [&](const Decomposition& a, const Decomposition& b) {  // a over b
    const double ca = a.cost(alpha), cb = b.cost(alpha);
    return ca != cb ? ca < cb : a.stages.weights.size() < b.stages.weights.size();
  };
  Decomposition best = cover_decomposition(server_matrix, S, 0);
  if (best.line_sum == most) return best;  // as light as any schedule, and splitting only adds stages
  // Pieces only help where an entry outweighs a mean stage (most / (S - 1))
  // at least twice: there one stage would idle the rest of its line.
  const std::uint64_t mean_stage = std::max<std::uint64_t>(1, most / static_cast<std::uint64_t>(S - 1));
  const std::uint64_t largest = *std::max_element(server_matrix.begin(), server_matrix.end());
  for (const std::uint64_t cap : {2 * mean_stage, mean_stage}) {
    if (largest <= 2 * mean_stage) break;
    Decomposition candidate = cover_decomposition(server_matrix, S, cap);
    if (better(candidate, best)) best = std::move(candidate);
  }
  if (options.method == StageMethod::cover) return best;
  // The exact decomposition weighs `most` in all; with j stages it costs most + j alpha.
  const double room = best.cost(alpha) - static_cast<double>(most);
  if (room <= 0) return best;  // the cover is as light as any schedule can be
  const std::size_t limit =
      alpha == 0 ? static_cast<std::size_t>(-1) : static_cast<std::size_t>(room / static_cast<double>(alpha)) + 1;
  Decomposition exact = exact_decomposition(server_matrix, S, 0, limit);
  if (exact.stages.complete && better(exact, best)) return exact;
  return best;
}

}  // namespace

FastPlan build_fast_plan(TrafficMatrix demand, const ServerMap& map, const FastPlanOptions& options) {
  if (demand.ranks() != map.ranks()) {
    throw std::invalid_argument("fast plan: the demand has " + std::to_string(demand.ranks()) +
                                " ranks but the server map has " + std::to_string(map.ranks()));
  }
  demand.check_total("fast plan");
  if (options.quantum > kMaxTotalBytes) {
    throw std::invalid_argument("fast plan: quantum " + std::to_string(options.quantum) + " is more than " +
                                std::to_string(kMaxTotalBytes) + " bytes");
  }
  const auto started = std::chrono::steady_clock::now();
  FastPlan plan;
  plan.map = map;
  plan.options = options;

  BalancedStreams balanced = balance_servers(demand, map);
  plan.demand = std::move(demand);
  plan.server_matrix = std::move(balanced.server_matrix);
  plan.balance = std::move(balanced.moves);
  plan.rail_begin = std::move(balanced.rail_begin);
  plan.rail_segments = std::move(balanced.rail_segments);

  const int S = map.servers();
  const auto servers = static_cast<std::size_t>(S);
  Decomposition chosen = decompose(plan.server_matrix, S, options);
  plan.method = chosen.method;
  plan.piece_cap = chosen.piece_cap;
  plan.padded_matrix = std::move(chosen.capacity);
  plan.padded_line_sum = chosen.line_sum;
  plan.stage_weights = std::move(chosen.stages.weights);
  plan.stage_perms = std::move(chosen.stages.perms);
  order_stages(plan.stage_weights, plan.stage_perms, chosen.stages.order, servers);
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
  print.add_word(static_cast<std::uint64_t>(plan.map.nics_per_server()));
  add_all(print, plan.demand.row_major());
  print.add_word(plan.options.quantum);
  print.add_word(static_cast<std::uint64_t>(plan.options.method));
  print.add_word(plan.options.stage_cost_bytes);
  print.add_word(static_cast<std::uint64_t>(plan.method));
  print.add_word(plan.piece_cap);
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
