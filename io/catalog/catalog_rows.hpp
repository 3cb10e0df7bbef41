#pragma once
// The rows of the catalog's tables (io.md "Catalog"), as fixed-size records:
// every string is a fixed-length, NUL-terminated char array, because
// parallel-written datasets must not hold variable-length types.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace nestfast::io {

inline constexpr std::size_t kNameChars = 64;   // model and cluster names
inline constexpr std::size_t kShortChars = 16;  // kind, recompute, algo
inline constexpr std::size_t kOrderChars = 32;  // placement order "tp,ep,pp,dp"
inline constexpr std::size_t kArgumentChars = 2048;  // the Megatron-LM argument line
inline constexpr std::size_t kEnvironmentChars = 64; // its environment ("CUDA_DEVICE_MAX_CONNECTIONS=1")

// Copies `text` into a fixed field (N - 1 characters and the NUL); an
// over-long text is an error, never silently cut.
template <std::size_t N>
void set_fixed(char (&field)[N], const std::string& text) {
  if (text.size() >= N) {
    throw std::invalid_argument("\"" + text + "\" is longer than the catalog's " + std::to_string(N - 1) +
                                "-character field");
  }
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), text.size());
}

template <std::size_t N>
std::string get_fixed(const char (&field)[N]) {
  std::size_t length = 0;
  while (length < N && field[length] != '\0') ++length;
  return std::string(field, length);
}

// One row of /plans: a plan of one sweep point (NEST's rank-k or a baseline).
struct PlanRow {
  std::uint64_t point_id = 0;
  char model[kNameChars] = {};
  char cluster[kNameChars] = {};
  std::int32_t gpus = 0;
  std::int32_t global_batch = 0;
  std::int32_t seq_len = 0;
  char kind[kShortChars] = {};  // "nest", "manual", "phaze", "mcmc"
  std::int32_t rank_k = 0;      // 0 = best; baselines are 0
  std::int32_t feasible = 0;    // 0: no plan fits (degrees and times are then 0)
  std::int32_t tp = 0;
  std::int32_t pp = 0;
  std::int32_t dp = 0;
  std::int32_t ep = 0;
  std::int32_t cp = 0;
  std::int32_t sp = 0;
  std::int32_t mbs = 0;
  std::int32_t zero = 0;
  std::int32_t vpp = 0;
  char recompute[kShortChars] = {};
  char placement_order[kOrderChars] = {};
  char framework[kShortChars] = {};  // "megatron-core" or "nest"
  char attention[kShortChars] = {};  // "flash" or "unfused"
  char overlap[kOrderChars] = {};    // the overlaps priced: "all", "none" or "grad,param,tp,p2p,a2a" (some)
  char megatron_args[kArgumentChars] = {};    // exactly what solve/evaluate print for the plan
  char megatron_env[kEnvironmentChars] = {};  // the environment it needs ("" = none)
  double iter_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  std::uint64_t mem_peak_bytes = 0;
  std::uint64_t stage_offset = 0;  // first row of this plan in /stages
  std::uint64_t stage_count = 0;
};

// One row of /stages: one pipeline stage of one plan.
struct StageRow {
  std::uint64_t plan_row = 0;
  std::int32_t stage = 0;  // index within its plan (pipeline order)
  std::int32_t first_layer = 0;
  std::int32_t last_layer = 0;
  std::int32_t devices = 0;
  std::int32_t first_device = 0;
  std::int32_t boundary_level = 0;  // network level of the boundary into this stage (-1: first stage)
  std::int32_t pipeline_rank = 0;   // stage % pp (interleaved chunks share a rank)
  std::int32_t recompute_layers = 0;  // full recompute: 0 = every block, N = the first N (block method)
  char recompute[kShortChars] = {};   // none, selective or full
  double fw_s = 0;
  double bw_s = 0;
  double p2p_s = 0;
  std::uint64_t mem_bytes = 0;
};

// One row of /validation/alltoallv.
struct ValidationRow {
  std::uint64_t plan_row = 0;
  char algo[kShortChars] = {};
  std::uint64_t bytes_per_rank = 0;
  std::int32_t servers = 0;
  std::int32_t gpus_per_server = 0;
  double time_us_min = 0;
  double time_us_avg = 0;
  double time_us_max = 0;
  double algbw = 0;  // GB/s
  double busbw = 0;  // GB/s
  double lb_us = 0;
  double eff = 0;
  std::uint64_t wrong = 0;
  double predicted_us = 0;
};

// Rows are written as they lie in memory (a type conversion would break
// collective I/O on compressed datasets), so they must have no padding.
static_assert(sizeof(PlanRow) == 8 + 2 * kNameChars + 3 * 4 + kShortChars + 11 * 4 + kShortChars + kOrderChars +
                                   2 * kShortChars + kOrderChars + kArgumentChars + kEnvironmentChars + 3 * 8 + 3 * 8);
static_assert(sizeof(StageRow) == 8 + 8 * 4 + kShortChars + 3 * 8 + 8);
static_assert(sizeof(ValidationRow) == 8 + kShortChars + 8 + 2 * 4 + 7 * 8 + 8 + 8);

// A plan with its stages, before it has a row number.
struct PlanEntry {
  PlanRow row;
  std::vector<StageRow> stages;
};

}  // namespace nestfast::io
