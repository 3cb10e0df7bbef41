#include "comm/sim/flow_simulation.hpp"

#include <algorithm>

#include "comm/plan/bounds.hpp"
#include "comm/plan/stage_walk.hpp"
#include "comm/sim/port_clock.hpp"

namespace nestfast::comm {

namespace {

// Every ordered pair of GPUs on one server, in shifted rounds (in round r,
// local GPU i sends to local GPU i + r), so that the port clock, which plays
// messages in the order given, sees no avoidable downlink conflicts.
template <class Visit>
void for_each_local_shift(const ServerMap& map, Visit&& visit) {
  for (int r = 1; r < map.max_gpus_per_server(); ++r) {
    for (int g = 0; g < map.ranks(); ++g) {
      const int s = map.server_of(g), m = map.gpus_on(s);
      if (r < m) visit(g, map.rank_at(s, (map.local_index(g) + r) % m));
    }
  }
}

}  // namespace

Bounds lower_bounds(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model) {
  check_model(model);
  return {server_bound_bytes(demand, map) / model.nic_bandwidth_Bps, per_gpu_bound_bytes(demand, map) / model.nic_bandwidth_Bps};
}

double simulate_fast(const FastPlan& plan, const TwoTierModel& model) {
  check_model(model);
  const ServerMap& map = plan.map;
  const auto N = static_cast<std::size_t>(map.ranks());
  PortClock clock(map, model);

  // Step 0: the balance moves and the same-server exchange.
  std::vector<double> balanced_at(N, 0.0);  // when a rank holds all it takes in the balance
  for (const BalanceMove& move : plan.balance) {
    const double arrival = clock.send(move.from, move.to, move.range.end - move.range.begin, 0.0);
    balanced_at[move.to] = std::max(balanced_at[move.to], arrival);
  }
  for_each_local_shift(map, [&](int g, int h) { clock.send(g, h, plan.demand(g, h), 0.0); });
  clock.end_step();

  // Step k + 1: stage k on the rails, and the forwarding of stage k - 1.
  std::vector<ForwardMessage> pending;  // forwarding of the previous stage
  std::vector<double> landed(N, 0.0), landed_before(N, 0.0);
  StageWalk walk(plan);
  while (walk.next()) {
    for (const RailMessage& message : walk.rail()) {
      const double ready = message.carries_balanced ? balanced_at[message.from] : 0.0;
      landed[message.to] = clock.send(message.from, message.to, message.bytes, ready);
    }
    for (const ForwardMessage& forward : pending) clock.send(forward.proxy, forward.dst, forward.bytes, landed_before[forward.proxy]);
    clock.end_step();
    pending = walk.forwards();
    landed_before = landed;
  }
  for (const ForwardMessage& forward : pending) clock.send(forward.proxy, forward.dst, forward.bytes, landed_before[forward.proxy]);
  clock.end_step();
  return clock.finish();
}

double simulate_fanout(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model) {
  check_model(model);
  const auto N = static_cast<std::size_t>(map.ranks());
  std::vector<double> nic_out(N, 0), nic_in(N, 0), local_out(N, 0), local_in(N, 0);
  std::vector<int> remote_senders(N, 0);
  bool any_remote = false, any_local = false;
  for (int g = 0; g < map.ranks(); ++g) {
    for (int h = 0; h < map.ranks(); ++h) {
      const auto bytes = static_cast<double>(demand(g, h));
      if (bytes == 0 || g == h) continue;
      if (map.server_of(g) == map.server_of(h)) {
        local_out[g] += bytes;
        local_in[h] += bytes;
        any_local = true;
      } else {
        nic_out[g] += bytes;
        nic_in[h] += bytes;
        ++remote_senders[h];
        any_remote = true;
      }
    }
  }
  double busiest = 0;
  for (std::size_t g = 0; g < N; ++g) {
    const double downlink = model.nic_bandwidth_Bps / (remote_senders[g] > 1 ? 1 + model.incast_penalty : 1.0);
    busiest = std::max({busiest, nic_out[g] / model.nic_bandwidth_Bps, nic_in[g] / downlink,
                        local_out[g] / model.scaleup_bandwidth_Bps, local_in[g] / model.scaleup_bandwidth_Bps});
  }
  const double latency = std::max(any_remote ? model.nic_latency_s : 0.0, any_local ? model.scaleup_latency_s : 0.0);
  return busiest + latency;
}

double simulate_pairwise(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model) {
  check_model(model);
  const int N = map.ranks();
  PortClock clock(map, model);
  for (int round = 1; round < N; ++round) {
    for (int g = 0; g < N; ++g) {
      const int h = (g + round) % N;
      clock.send(g, h, demand(g, h), 0.0);
    }
    clock.end_step();
  }
  return clock.finish();
}

double simulate_hierarchical(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model) {
  check_model(model);
  const int N = map.ranks(), S = map.servers();
  PortClock clock(map, model);
  // Phase 1 over scale-up: bytes for rank h of another server go to the local
  // GPU with h's local index (mod this server's size); same-server bytes go
  // straight to their destination.
  auto aggregator = [&](int s, int h) { return map.rank_at(s, map.local_index(h) % map.gpus_on(s)); };
  std::vector<std::uint64_t> gathered(static_cast<std::size_t>(N) * N, 0);  // [aggregator][h]
  std::vector<double> gathered_at(static_cast<std::size_t>(N), 0.0);
  for (int g = 0; g < N; ++g) {
    const int s = map.server_of(g);
    for (int h = 0; h < N; ++h) {
      if (map.server_of(h) != s) gathered[static_cast<std::size_t>(aggregator(s, h)) * N + h] += demand(g, h);
    }
  }
  for_each_local_shift(map, [&](int g, int a) {
    std::uint64_t bytes = demand(g, a);  // same-server bytes go straight to their destination
    for (int h = 0; h < N; ++h) {
      if (map.server_of(h) != map.server_of(g) && aggregator(map.server_of(g), h) == a) bytes += demand(g, h);
    }
    gathered_at[a] = std::max(gathered_at[a], clock.send(g, a, bytes, 0.0));
  });
  clock.end_step();
  // Phase 2 on the rails, S - 1 shifted rounds between servers.
  for (int round = 1; round < S; ++round) {
    for (int a = 0; a < N; ++a) {
      const int t = (map.server_of(a) + round) % S;
      for (int j = 0; j < map.gpus_on(t); ++j) {
        const int h = map.rank_at(t, j);
        const std::uint64_t bytes = gathered[static_cast<std::size_t>(a) * N + h];
        if (bytes > 0) clock.send(a, h, bytes, gathered_at[a]);
      }
    }
    clock.end_step();
  }
  return clock.finish();
}

std::vector<SimulatedAlgorithm> simulate_all(const FastPlan& plan, const TwoTierModel& model) {
  return {{"fast", simulate_fast(plan, model)},
          {"fanout", simulate_fanout(plan.demand, plan.map, model)},
          {"pairwise", simulate_pairwise(plan.demand, plan.map, model)},
          {"hierarchical", simulate_hierarchical(plan.demand, plan.map, model)}};
}

}  // namespace nestfast::comm
