#include "comm/workload/workload.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "comm/plan/seeded_hash.hpp"
#include "comm/workload/matrix_file.hpp"

namespace nestfast::comm {

namespace {

// A counter-based generator: the k-th draw of a stream depends only on
// (seed, stream, k), so rows can be generated in any order.
SplitMix64Stream stream_of(std::uint64_t seed, std::uint64_t stream) {
  return SplitMix64Stream(splitmix64(seed ^ splitmix64(stream + 0x632be59bd9b4e019ull)));
}

std::invalid_argument bad_spec(const std::string& spec, const std::string& why) {
  return std::invalid_argument("workload '" + spec + "': " + why);
}

double parse_number(const std::string& spec, const std::string& text, const char* what) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value)) {
    throw bad_spec(spec, std::string(what) + " '" + text + "' is not a number");
  }
  return value;
}

int parse_count(const std::string& spec, const std::string& text, const char* what) {
  const double value = parse_number(spec, text, what);
  if (value < 1 || value != std::floor(value) || value > 1e9) {
    throw bad_spec(spec, std::string(what) + " '" + text + "' is not a positive integer");
  }
  return static_cast<int>(value);
}

// Splits bytes over entries in proportion to weights; every share is the
// floor of its exact value plus one for the largest remainders (ties to the
// lower index), so the shares sum to exactly `bytes`.
void apportion(std::uint64_t bytes, const std::vector<double>& weights, std::uint64_t* shares) {
  double sum = 0;
  for (double w : weights) sum += w;
  const std::size_t n = weights.size();
  if (n == 0) return;
  if (!(sum > 0)) {
    std::fill(shares, shares + n, 0);
    return;
  }
  std::vector<double> remainder(n);
  std::uint64_t given = 0;
  const auto total = static_cast<double>(bytes);
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = total * (weights[i] / sum);
    shares[i] = std::min(bytes, static_cast<std::uint64_t>(std::floor(exact)));
    remainder[i] = exact - static_cast<double>(shares[i]);
    given += shares[i];
  }
  while (given > bytes) {  // rounding pushed the floors over: take back from the largest
    std::size_t largest = 0;
    for (std::size_t i = 1; i < n; ++i) if (shares[i] > shares[largest]) largest = i;
    --shares[largest];
    --given;
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  const std::uint64_t missing = bytes - given;
  const std::size_t lift = static_cast<std::size_t>(std::min<std::uint64_t>(missing, n));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(lift), order.end(),
                    [&](std::size_t a, std::size_t b) { return remainder[a] != remainder[b] ? remainder[a] > remainder[b] : a < b; });
  for (std::size_t i = 0; i < lift; ++i) ++shares[order[i]];
  // More missing than entries only when the floors were pulled down above.
  for (std::uint64_t extra = lift; extra < missing; ++extra) ++shares[extra % n];
}

// A seeded ordering of n items; item order[k] has popularity rank k.
std::vector<int> seeded_order(int n, std::uint64_t seed, std::uint64_t stream) {
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[i] = i;
  SplitMix64Stream draws = stream_of(seed, stream);
  for (int i = n - 1; i > 0; --i) std::swap(order[i], order[draws.below(static_cast<std::uint64_t>(i) + 1)]);
  return order;
}

std::vector<double> zipf_popularity(int n, double skew, std::uint64_t seed, std::uint64_t stream) {
  const std::vector<int> order = seeded_order(n, seed, stream);
  std::vector<double> weight(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) weight[order[k]] = std::pow(static_cast<double>(k + 1), -skew);
  return weight;
}

TrafficMatrix same_row_everywhere(int ranks, std::uint64_t bytes_per_rank, const std::vector<double>& weights) {
  TrafficMatrix demand(ranks);
  std::vector<std::uint64_t> row(static_cast<std::size_t>(ranks));
  apportion(bytes_per_rank, weights, row.data());
  for (int g = 0; g < ranks; ++g) std::copy(row.begin(), row.end(), &demand(g, 0));
  return demand;
}

constexpr int kTokensPerRank = 4096;

TrafficMatrix moe_routing(const WorkloadSpec& spec, int ranks, std::uint64_t bytes_per_rank, std::uint64_t seed) {
  const std::vector<double> popularity = zipf_popularity(spec.experts, spec.skew, seed, 0x30e);
  std::vector<double> cumulative(popularity.size());
  double running = 0;
  for (std::size_t e = 0; e < popularity.size(); ++e) cumulative[e] = running += popularity[e];
  std::vector<std::size_t> by_popularity(popularity.size());
  for (std::size_t e = 0; e < by_popularity.size(); ++e) by_popularity[e] = e;
  std::stable_sort(by_popularity.begin(), by_popularity.end(), [&](std::size_t a, std::size_t b) { return popularity[a] > popularity[b]; });

  TrafficMatrix demand(ranks);
  std::vector<double> copies(static_cast<std::size_t>(ranks));
  std::vector<int> chosen(static_cast<std::size_t>(spec.top_k));
  for (int g = 0; g < ranks; ++g) {
    std::fill(copies.begin(), copies.end(), 0.0);
    SplitMix64Stream draws = stream_of(seed, 0x10000u + static_cast<std::uint64_t>(g));
    for (int token = 0; token < kTokensPerRank; ++token) {
      for (int pick = 0; pick < spec.top_k; ++pick) {
        int expert = -1;
        for (int attempt = 0; attempt < 64 && expert < 0; ++attempt) {
          const double u = draws.unit() * running;
          const auto e = static_cast<int>(std::min<std::size_t>(
              static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin()),
              cumulative.size() - 1));
          if (std::find(chosen.begin(), chosen.begin() + pick, e) == chosen.begin() + pick) expert = e;
        }
        for (std::size_t k = 0; expert < 0; ++k) {  // heavy skew: the most popular expert not yet chosen
          const int e = static_cast<int>(by_popularity[k]);
          if (std::find(chosen.begin(), chosen.begin() + pick, e) == chosen.begin() + pick) expert = e;
        }
        chosen[pick] = expert;
        copies[static_cast<std::size_t>(expert % ranks)] += 1;
      }
    }
    apportion(bytes_per_rank, copies, &demand(g, 0));
  }
  return demand;
}

}  // namespace

WorkloadSpec parse_workload(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const bool has_args = colon != std::string::npos;
  WorkloadSpec out;
  auto no_args = [&] {
    if (has_args) throw bad_spec(spec, "'" + name + "' takes no parameters");
  };
  auto need_args = [&](const char* form) {
    if (!has_args || args.empty()) throw bad_spec(spec, std::string("expected ") + form);
  };
  if (name == "uniform") {
    no_args();
    out.kind = WorkloadSpec::Kind::uniform;
  } else if (name == "random") {
    no_args();
    out.kind = WorkloadSpec::Kind::random;
  } else if (name == "zipf") {
    need_args("zipf:S with a skew exponent S >= 0");
    out.kind = WorkloadSpec::Kind::zipf;
    out.skew = parse_number(spec, args, "skew");
    if (out.skew < 0) throw bad_spec(spec, "the skew must be >= 0");
  } else if (name == "hot") {
    need_args("hot:K with a factor K > 0");
    out.kind = WorkloadSpec::Kind::hot;
    out.hot_factor = parse_number(spec, args, "factor");
    if (out.hot_factor <= 0) throw bad_spec(spec, "the hot factor must be > 0");
  } else if (name == "moe") {
    need_args("moe:E,topk,zipf");
    std::vector<std::string> parts;
    std::stringstream split(args);
    for (std::string part; std::getline(split, part, ',');) parts.push_back(part);
    if (parts.size() != 3) throw bad_spec(spec, "expected moe:E,topk,zipf (three values)");
    out.kind = WorkloadSpec::Kind::moe;
    out.experts = parse_count(spec, parts[0], "expert count");
    if (out.experts > kMaxExperts) {
      throw bad_spec(spec, std::to_string(out.experts) + " experts, at most " + std::to_string(kMaxExperts));
    }
    out.top_k = parse_count(spec, parts[1], "topk");
    out.skew = parse_number(spec, parts[2], "skew");
    if (out.top_k > out.experts) throw bad_spec(spec, "topk exceeds the expert count");
    if (out.skew < 0) throw bad_spec(spec, "the skew must be >= 0");
  } else if (name == "file") {
    need_args("file:PATH");
    out.kind = WorkloadSpec::Kind::file;
    out.path = args;
  } else {
    throw bad_spec(spec, "unknown kind '" + name + "' (uniform, random, zipf:S, hot:K, moe:E,topk,zipf, file:PATH)");
  }
  return out;
}

void check_bytes_per_rank(int ranks, std::uint64_t bytes_per_rank) {
  if (ranks > 0 && bytes_per_rank > kMaxTotalBytes / static_cast<std::uint64_t>(ranks)) {
    throw std::invalid_argument("workload: " + std::to_string(ranks) + " ranks x " + std::to_string(bytes_per_rank) +
                                " bytes per rank is more than " + std::to_string(kMaxTotalBytes) +
                                " bytes (2^50, 1 PiB), the most one alltoallv may move");
  }
}

std::string describe_workload(const WorkloadSpec& spec, const std::string& text, const TrafficMatrix& demand,
                              const std::string& sizes, std::uint64_t seed) {
  if (spec.kind != WorkloadSpec::Kind::file) {
    return "workload " + text + ", " + sizes + " bytes per rank, seed " + std::to_string(seed);
  }
  const int ranks = demand.ranks();
  const int dimension = parse_matrix_file(spec.matrix_text, spec.path, ranks, spec.scale).dimension;
  std::uint64_t least = UINT64_MAX, most = 0;
  for (int src = 0; src < ranks; ++src) {
    std::uint64_t sent = 0;
    for (int dst = 0; dst < ranks; ++dst) sent += demand(src, dst);
    least = std::min(least, sent);
    most = std::max(most, sent);
  }
  std::ostringstream scale;
  scale << spec.scale;
  return "workload file:" + spec.path + " (nccl-tests matrix " + std::to_string(dimension) + "x" +
         std::to_string(dimension) + (dimension > ranks ? ", its first " + std::to_string(ranks) + " rows and columns" : "") +
         ", scale " + scale.str() + ", cells rounded down to 16 bytes): " + std::to_string(least) + ".." +
         std::to_string(most) + " bytes sent per rank, " + std::to_string(demand.total()) +
         " in all; the file sets the sizes (no bytes per rank, no seed)";
}

TrafficMatrix make_workload(const std::string& spec, int ranks, std::uint64_t bytes_per_rank, std::uint64_t seed) {
  return make_workload(parse_workload(spec), ranks, bytes_per_rank, seed);
}

TrafficMatrix make_workload(const WorkloadSpec& spec, int ranks, std::uint64_t bytes_per_rank, std::uint64_t seed) {
  if (ranks < 1) throw std::invalid_argument("workload: need at least one rank (got " + std::to_string(ranks) + ")");
  if (spec.kind != WorkloadSpec::Kind::file) check_bytes_per_rank(ranks, bytes_per_rank);
  const auto N = static_cast<std::size_t>(ranks);
  switch (spec.kind) {
    case WorkloadSpec::Kind::uniform:
      return same_row_everywhere(ranks, bytes_per_rank, std::vector<double>(N, 1.0));
    case WorkloadSpec::Kind::random: {
      TrafficMatrix demand(ranks);
      std::vector<double> weights(N);
      for (int g = 0; g < ranks; ++g) {
        SplitMix64Stream draws = stream_of(seed, static_cast<std::uint64_t>(g));
        for (double& w : weights) w = draws.unit();
        apportion(bytes_per_rank, weights, &demand(g, 0));
      }
      return demand;
    }
    case WorkloadSpec::Kind::zipf:
      return same_row_everywhere(ranks, bytes_per_rank, zipf_popularity(ranks, spec.skew, seed, 0x21f));
    case WorkloadSpec::Kind::hot: {
      std::vector<double> weights(N, 1.0);
      weights[stream_of(seed, 0x407).below(N)] = spec.hot_factor;
      return same_row_everywhere(ranks, bytes_per_rank, weights);
    }
    case WorkloadSpec::Kind::moe:
      return moe_routing(spec, ranks, bytes_per_rank, seed);
    case WorkloadSpec::Kind::file:
      return parse_matrix_file(spec.matrix_text, spec.path, ranks, spec.scale).demand;
  }
  throw std::logic_error("workload: unhandled kind");
}

}  // namespace nestfast::comm
