#pragma once
// Seeded demand matrices and server maps for the plan tests: the shapes the
// issue names (1-64 servers, 1-16 GPUs per server, zero rows and columns, a
// single hot entry, all-equal) plus uneven servers and huge entries.
#include <cstdint>
#include <string>
#include <vector>

#include "comm/plan/seeded_hash.hpp"
#include "comm/plan/server_map.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm::testing {

struct PlanCase {
  std::string name;
  ServerMap map;
  TrafficMatrix demand;
};

class CaseRandom {
 public:
  explicit CaseRandom(std::uint64_t seed) : stream_(splitmix64(seed)) {}
  std::uint64_t next() { return stream_.next(); }
  int below(int n) { return static_cast<int>(stream_.below(static_cast<std::uint64_t>(n))); }

 private:
  SplitMix64Stream stream_;
};

// Case `seed` of the property test: shape and content both follow from it.
inline PlanCase make_case(std::uint64_t seed) {
  CaseRandom random(seed);
  // Mostly small, some up to 64 servers or 16 GPUs per server; at most 4 GPUs
  // per server beyond 24 servers and 192 ranks in all, so that the whole
  // property test (verifying every rank's schedule) stays in seconds.
  int servers = 1 + (random.below(8) == 0 ? random.below(64) : random.below(12));
  int gpus = 1 + (random.below(3) == 0 ? random.below(16) : random.below(8));
  if (servers > 24) gpus = 1 + gpus % 4;
  while (servers * gpus > 192) --gpus;
  const bool uneven = random.below(4) == 0;
  std::vector<int> rank_server;
  for (int s = 0; s < servers; ++s) {
    const int here = uneven ? 1 + random.below(gpus) : gpus;
    for (int i = 0; i < here; ++i) rank_server.push_back(s);
  }
  if (uneven && random.below(2) == 0) {  // interleave ranks: a server's ranks need not be consecutive
    for (std::size_t i = rank_server.size(); i > 1; --i) std::swap(rank_server[i - 1], rank_server[random.below(static_cast<int>(i))]);
  }
  ServerMap map(rank_server);
  const int N = map.ranks();
  TrafficMatrix demand(N);
  const int kind = random.below(6);
  std::string name;
  switch (kind) {
    case 0: {
      name = "all-equal";
      const std::uint64_t value = 1 + random.next() % 5000;
      for (int g = 0; g < N; ++g) for (int h = 0; h < N; ++h) demand(g, h) = value;
      break;
    }
    case 1: {
      name = "single-hot-entry";
      demand(random.below(N), random.below(N)) = 1 + random.next() % (1u << 24);
      break;
    }
    case 2: {
      name = "zero-rows-and-cols";
      std::vector<bool> silent_row(N), silent_col(N);
      for (int g = 0; g < N; ++g) {
        silent_row[g] = random.below(3) == 0;
        silent_col[g] = random.below(3) == 0;
      }
      for (int g = 0; g < N; ++g) {
        for (int h = 0; h < N; ++h) {
          if (!silent_row[g] && !silent_col[h]) demand(g, h) = random.next() % 10000;
        }
      }
      break;
    }
    case 3: {
      name = "sparse";
      for (int g = 0; g < N; ++g) {
        for (int h = 0; h < N; ++h) {
          if (random.below(5) == 0) demand(g, h) = 1 + random.next() % 3000;
        }
      }
      break;
    }
    case 4: {
      name = "huge-entries";
      for (int g = 0; g < N; ++g) {
        for (int h = 0; h < N; ++h) demand(g, h) = random.next() % (std::uint64_t{1} << 34);
      }
      break;
    }
    default: {
      name = "dense-random";
      for (int g = 0; g < N; ++g) {
        for (int h = 0; h < N; ++h) demand(g, h) = random.next() % 100000;
      }
      break;
    }
  }
  name += " S=" + std::to_string(servers) + " N=" + std::to_string(N) + (uneven ? " uneven" : "");
  return {name, std::move(map), std::move(demand)};
}

}  // namespace nestfast::comm::testing
