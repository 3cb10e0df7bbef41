#pragma once
// The validation phase of `nestfast run` (ARCHITECTURE.md data-flow step 4):
// the chosen plans' expert-parallel all-to-all traffic is run on the job's own
// ranks with each configured algorithm, every byte is checked, and one result
// per (plan, algorithm, size) comes back for /validation/alltoallv.
// Collective over `comm`: every rank passes identical settings and requests.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/plan/server_map.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

struct ValidationSettings {
  bool enabled = true;
  bool all_plans = false;                      // also plans without expert parallelism
  std::string sizes = "1M:64M";                // bytes per rank, MIN:MAX doubling
  std::vector<std::string> algos = {"fast", "mpi", "pairwise"};
  std::string skew = "zipf:0.8";               // token-routing skew of the generated traffic
  int virtual_servers = 0;                     // 0 = servers from the shared-memory node split
  int nics_per_server = 0;                     // 0 = one NIC per GPU (ServerMap)
  // The NIC rate of the machine the validation runs on, GB/s per NIC and
  // direction; 0 = the rate the plan's cluster preset declares (the job runs
  // on the cluster it plans for).
  double nic_GBps = 0;
  std::uint64_t fast_chunk_bytes = 0;          // AlgorithmSettings::fast_chunk_bytes
  int iterations = 5;
  int warmup = 1;
  std::uint64_t seed = 1;
};

// validate.skew: "uniform" (0) or "zipf:S" with a finite S >= 0, the popularity
// exponent of the experts. One std::invalid_argument line naming `what` otherwise.
double skew_exponent(const std::string& skew, const std::string& what);

// One chosen plan whose all-to-all is to be run.
struct ValidationRequest {
  std::uint64_t plan_row = 0;   // row of the plan in /plans
  int ep = 1;                   // expert-parallel degree of the plan
  int experts = 0;              // experts per MoE layer (0 for dense plans run with validate.all)
  int top_k = 1;
  std::string cluster;          // the plan's cluster, as the job names it (for the caller's TrafficPrice)
  // The link rates the plan's cluster declares, per GPU and direction (bytes/s):
  // across servers and inside one. The lower bound rests on them.
  double gpu_nic_Bps = 0;
  double gpu_scaleup_Bps = 0;
};

// One measured all-to-all: a row of /validation/alltoallv and of
// `a2a bench --json`, under the same names (io/catalog/catalog_rows.hpp).
struct ValidationResult {
  std::uint64_t plan_row = 0;    // validation only: the plan's row in /plans
  std::string algo;
  std::string picked;            // the algorithm that ran: algo itself, or auto's choice
  std::uint64_t bytes_per_rank = 0;
  int servers = 0;
  int gpus_per_server = 0;
  int iterations = 0;
  int stages = 0;                // communication stages of one exchange
  double time_min_us = 0;
  double time_avg_us = 0;
  double time_max_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  double lower_bound_us = 0;     // lower bound (comm.md section 4) at the declared link rates; 0: none declared
  double efficiency_pct = 0;     // 100 * lower_bound_us / time_avg_us in (0, 100]; NaN where unknown (no bound,
                                 // or an iteration beat it: the declared rates are below the real ones)
  bool bound_violated = false;   // an iteration was faster than lower_bound_us
  double predicted_us = 0;       // the solver's price of the traffic that ran (TrafficPrice; 0: none)
  std::uint64_t wrong_bytes = 0; // bytes that arrived wrong
  bool validated = false;        // the bytes were checked
  std::string first_bad;         // "(src s, dst d, offset o), ..." for the first wrong bytes, "" if none
};

// The prediction a validated all-to-all is set against: seconds for `demand`
// as it runs on `map` for `request`'s plan (0: none). comm runs traffic and
// does not price it; the job passes the solver's cost model (jobs/traffic_price.hpp).
using TrafficPrice = std::function<double(const ValidationRequest& request, const TrafficMatrix& demand,
                                          const ServerMap& map)>;

// Requests with expert parallelism (ep > 1 and experts > 0) run their EP
// all-to-all: groups of min(ep, ranks) consecutive ranks, each exchanging a
// moe:experts,top_k,skew token routing (seeded per group); ranks left over
// idle. Other requests run only with settings.all_plans, as a uniform
// all-to-all over all ranks. Rows come back identical on every rank, in
// (request, size, algorithm) order, each with `price` of the traffic of its
// (request, size) (none without `price`). std::invalid_argument (on every rank) for
// bad settings: unknown algorithm, malformed sizes or skew, iterations < 1.
std::vector<ValidationResult> run_validation(MPI_Comm comm, const ValidationSettings& settings,
                                             const std::vector<ValidationRequest>& requests,
                                             const TrafficPrice& price = {});

}  // namespace nestfast::comm
