// Prints the FAST plan fingerprint of one workload: built at -O0 and at -O2
// (see CMakeLists.txt) to show the plan does not depend on the optimisation
// level. Usage: plan_fingerprint_O? SERVERS GPUS_PER_SERVER WORKLOAD BYTES SEED QUANTUM STAGE_COST_BYTES
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "comm/plan/fast_plan.hpp"
#include "comm/workload/workload.hpp"

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s SERVERS GPUS_PER_SERVER WORKLOAD BYTES SEED QUANTUM STAGE_COST_BYTES\n", argv[0]);
    return 2;
  }
  try {
    using namespace nestfast::comm;
    const ServerMap map = ServerMap::uniform(std::atoi(argv[1]), std::atoi(argv[2]));
    const TrafficMatrix demand = make_workload(argv[3], map.ranks(), std::strtoull(argv[4], nullptr, 10), std::strtoull(argv[5], nullptr, 10));
    FastPlanOptions options;
    options.quantum = std::strtoull(argv[6], nullptr, 10);
    options.stage_cost_bytes = std::strtoull(argv[7], nullptr, 10);
    std::printf("%016" PRIx64 "\n", plan_fingerprint(build_fast_plan(demand, map, options)));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  return 0;
}
