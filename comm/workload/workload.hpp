#pragma once
// Seeded alltoallv demand generators (comm.md section 3). Every generated row
// sums to exactly bytes_per_rank (largest-remainder rounding); the same spec,
// ranks, size and seed give the same matrix on every platform.
//   uniform          every pair the same
//   random           independent uniform weights per pair
//   zipf:S           destination popularity ~ 1 / k^S over a seeded ordering of the ranks
//   hot:K            one seeded hot receiver gets K times the others' share
//   moe:E,topk,zipf  4096 tokens per rank, each routed to topk distinct of E experts
//                    (expert e on rank e mod N) with zipf popularity; bytes per token-copy
//                    = bytes_per_rank / (4096 * topk)
//   file:PATH        the nccl-tests alltoallv matrix file (matrix_file.hpp: its rules, the
//                    scale factor, the first N rows and columns of a larger matrix);
//                    bytes_per_rank and seed are ignored. The caller reads the file
//                    (io/host/files.hpp) into WorkloadSpec::matrix_text.
// No workload moves more than kMaxTotalBytes in all (traffic_matrix.hpp).
#include <cstdint>
#include <string>

#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

struct WorkloadSpec {
  enum class Kind { uniform, random, zipf, hot, moe, file };
  Kind kind = Kind::uniform;
  double skew = 0;        // zipf:S, and the popularity skew of moe
  double hot_factor = 0;  // hot:K
  int experts = 0;        // moe
  int top_k = 0;          // moe
  std::string path;         // file
  std::string matrix_text;  // file: its contents
  double scale = 1;         // file: every cell times this (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE)
};

// Throws std::invalid_argument naming the spec when it is malformed.
WorkloadSpec parse_workload(const std::string& spec);

// The most experts of a moe: workload (DeepSeek-V3 has 256 per layer).
inline constexpr int kMaxExperts = 1 << 16;

// Throws std::invalid_argument when `ranks` ranks sending `bytes_per_rank`
// each would move more than kMaxTotalBytes.
void check_bytes_per_rank(int ranks, std::uint64_t bytes_per_rank);

// One header line: "workload zipf:0.8, 1048576 bytes per rank, seed 1"
// (`sizes` as the caller spells them), or for a matrix file what the file
// sets (its size, the rows used, the scale, the bytes each rank sends) and
// never a size or seed it overrides. `text` is the spec as the user wrote it.
std::string describe_workload(const WorkloadSpec& spec, const std::string& text, const TrafficMatrix& demand,
                              const std::string& sizes, std::uint64_t seed);

// Throws std::invalid_argument on a bad spec, ranks < 1, more than
// kMaxTotalBytes in all, or a matrix text that breaks nccl-tests' rules
// (named by path:line) or is smaller than ranks x ranks.
TrafficMatrix make_workload(const std::string& spec, int ranks, std::uint64_t bytes_per_rank, std::uint64_t seed);
TrafficMatrix make_workload(const WorkloadSpec& spec, int ranks, std::uint64_t bytes_per_rank, std::uint64_t seed);

}  // namespace nestfast::comm
