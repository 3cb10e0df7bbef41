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

// One row of /plans: a plan of one sweep point (NEST's rank-k or a
// baseline). The member names are search::PlanRecord's and the JSON keys of
// every command (solver/search/plan_record.hpp); units and meanings are
// attributes of the dataset (catalog_types.cpp).
struct PlanRow {
  std::uint64_t point_id = 0;
  char model[kNameChars] = {};
  char cluster[kNameChars] = {};
  std::int32_t gpus = 0;
  std::int32_t global_batch = 0;
  std::int32_t seq_len = 0;
  std::int32_t rank_k = 0;    // 0 = best; baselines are 0
  std::int32_t feasible = 0;  // 0: no plan fits (times are then 0)
  std::int32_t tp = 0;
  std::int32_t cp = 0;
  std::int32_t ep = 0;
  std::int32_t etp = 0;  // expert tensor parallelism: tp, or 1 (whole experts)
  std::int32_t pp = 0;
  std::int32_t dp = 0;
  std::int32_t sp = 0;
  std::int32_t micro_batch = 0;
  std::int32_t micro_batches = 0;
  std::int32_t zero_stage = 0;
  std::int32_t vpp = 0;
  char kind[kShortChars] = {};  // "nest", "manual", "phaze", "mcmc", "exhaustive"
  char recompute[kShortChars] = {};
  char recompute_modules[kNameChars] = {};  // what selective stages checkpoint: "core_attn" or "core_attn,layernorm,..."
  char placement[kOrderChars] = {};
  char optimizer[kShortChars] = {};
  char a2a[kShortChars] = {};
  char framework[kShortChars] = {};  // "megatron-core" or "nest"
  char attention[kShortChars] = {};  // "flash" or "unfused"
  char overlap[kOrderChars] = {};    // the overlaps asked: "all", "none" or some of "grad,param,tp,p2p,a2a,shared,wgrad" (31 characters at most)
  char grad_reduce[kShortChars] = {};  // "fp32" or "bf16": the gradients' dtype, kept and reduced
  char megatron_args[kArgumentChars] = {};         // exactly what solve/evaluate print for the plan
  char megatron_environment[kEnvironmentChars] = {};  // the environment it needs ("" = none)
  double moe_imbalance = 0;
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu_pct = 0;
  double compute_s = 0;
  double recompute_s = 0;
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double zero3_gather_s = 0;
  double p2p_s = 0;
  double bubble_s = 0;
  double dp_sync_s = 0;
  double optimizer_s = 0;
  std::uint64_t memory_peak_bytes = 0;
  std::uint64_t hbm_bytes = 0;
  std::uint64_t stage_offset = 0;  // first row of this plan in /stages
  std::uint64_t stage_count = 0;
};

// One row of /stages: one pipeline stage of one plan (search::StageRecord).
struct StageRow {
  std::uint64_t plan_row = 0;
  std::int32_t stage = 0;          // index within its plan (pipeline order)
  std::int32_t pipeline_rank = 0;  // stage % pp (interleaved chunks share a rank)
  std::int32_t first_layer = 0;
  std::int32_t last_layer = 0;
  std::int32_t devices = 0;
  std::int32_t first_device = 0;
  std::int32_t boundary_level = 0;  // network level of the boundary into this stage (-1: none)
  std::int32_t recompute_layers = 0;  // full recompute: 0 = every block, N = the first N (block method)
  char recompute[kShortChars] = {};   // none, selective or full
  char boundary_level_name[kNameChars] = {};
  double forward_per_microbatch_s = 0;
  double backward_per_microbatch_s = 0;
  double p2p_per_microbatch_s = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t weights_bytes = 0;
  std::uint64_t gradients_bytes = 0;
  std::uint64_t optimizer_bytes = 0;
  std::uint64_t activations_bytes = 0;
  std::uint64_t working_bytes = 0;
};

// One row of /validation/alltoallv (comm::AlltoallvResult, the rows of `a2a bench --json`).
struct ValidationRow {
  std::uint64_t plan_row = 0;
  char algo[kShortChars] = {};
  char picked[kShortChars] = {};
  std::uint64_t bytes_per_rank = 0;
  std::int32_t servers = 0;
  std::int32_t gpus_per_server = 0;
  std::int32_t iterations = 0;
  std::int32_t stages = 0;
  double time_min_us = 0;
  double time_avg_us = 0;
  double time_max_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  double lower_bound_us = 0;
  double efficiency_pct = 0;
  double predicted_us = 0;
  std::uint64_t wrong_bytes = 0;
};

// Rows are written as they lie in memory (a type conversion would break
// collective I/O on compressed datasets), so they must have no padding.
static_assert(sizeof(PlanRow) == 8 + 3 * kNameChars + 16 * 4 + 7 * kShortChars + 2 * kOrderChars + kArgumentChars +
                                   kEnvironmentChars + 14 * 8 + 4 * 8);
static_assert(sizeof(StageRow) == 8 + 8 * 4 + kShortChars + kNameChars + 3 * 8 + 6 * 8);
static_assert(sizeof(ValidationRow) == 8 + 2 * kShortChars + 8 + 4 * 4 + 8 * 8 + 8);

// A plan with its stages, before it has a row number.
struct PlanEntry {
  PlanRow row;
  std::vector<StageRow> stages;
};

}  // namespace nestfast::io
