#pragma once
// A catalog job as read from its TOML file (io.md "Job file"): what to sweep,
// how to restrict the strategy space, and how to validate the chosen plans.
// Plain data: rank 0 parses it, every rank receives it as an archive.
#include <cstdint>
#include <string>
#include <vector>

#include "comm/exec/validation.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::io {

// One [[sweep]] block; the cross product of its lists is expanded.
struct SweepSpec {
  std::vector<std::string> models;    // preset names or paths
  std::vector<std::string> clusters;  // preset names or paths
  std::vector<int> gpus;
  std::vector<int> global_batch;      // sequences
  std::vector<int> seq_len;           // empty = each model's own sequence length
  // Where the block and its keys are in the job file, for errors found later
  // (when presets are loaded): 0 = absent.
  int line = 0;
  int models_line = 0;
  int clusters_line = 0;
  int gpus_line = 0;
  int global_batch_line = 0;
  int seq_len_line = 0;
};

// [search]: restrictions of the strategy space. An empty list means "all".
struct SearchLimits {
  std::vector<int> tp;
  std::vector<int> pp;
  std::vector<int> ep;
  std::vector<int> cp;
  std::vector<int> mbs;
  std::vector<int> zero;
  std::vector<int> vpp;
  std::vector<bool> sp;
  std::vector<std::string> recompute;  // none, selective, full
  std::vector<int> recompute_layers;   // block recompute of N layers per stage; empty = the search's default
  std::vector<std::string> recompute_modules;  // module sets for selective stages ("core_attn,moe_act"); empty = auto
  std::string framework = "megatron-core";  // or "nest"
  bool allow_fsdp_pp = false;          // megatron-core: ZeRO-2/3 with pp > 1
  Attention attention = Attention::Flash;  // how every plan is priced (solve's --attention)
  Overlap overlap;                         // ... and its --overlap
  GradReduce grad_reduce = GradReduce::Fp32;  // ... and its --grad-reduce
  std::string a2a = "auto";                   // ... and its --a2a: auto, fast (nest only), fanout or deepep
  int top_k = 5;                       // alternatives kept per sweep point
  std::vector<std::string> baselines = {"manual", "phaze", "mcmc"};
};

struct JobSpec {
  std::string name = "nestfast-job";
  std::string out = "catalog.h5";
  std::vector<SweepSpec> sweeps;
  SearchLimits search;
  comm::ValidationSettings validate;
  std::string source;  // file name the job came from (or "<embedded default job>")
  std::string text;    // the TOML text, stored verbatim in the catalog
};

// One expanded point of the sweep, numbered in job order.
struct SweepPoint {
  std::uint64_t id = 0;
  int sweep_index = 0;  // which [[sweep]] block it came from
  std::string model;
  std::string cluster;
  int gpus = 0;
  int global_batch = 0;
  int seq_len = 0;  // 0 = the model's own
};

}  // namespace nestfast::io
