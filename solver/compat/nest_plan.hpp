#pragma once
// A pipeline plan over a NestGraph and the answer written back in the
// artifact's output format.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nestfast::compat {

// Chain positions [first, end) on `devices` devices.
struct NestStage {
  int devices = 1;
  std::size_t first = 0;
  std::size_t end = 0;
};

// Stages in layer order: stages.front() holds the embedding.
struct NestPlan {
  int tp = 1;
  int dp = 1;
  std::vector<NestStage> stages;
};

// The artifact's networkSkeleton: devices in the order it lists them (the
// iteration order of its hash map, which is also the order in which its
// findDevice searches them), each with the chain positions it holds.
struct SkeletonDevice {
  std::int64_t device = 0;
  std::vector<std::size_t> positions;
};
using NetworkSkeleton = std::vector<SkeletonDevice>;

struct BaselineResult {
  std::string name;
  std::optional<double> time_per_batch;  // nullopt: infeasible
};

enum class CostModelKind { Compat, Corrected };

struct NestAnswer {
  CostModelKind model = CostModelKind::Compat;
  NestPlan plan;
  double time_per_batch = 0.0;  // compat: the artifact's mixed units (ms + s); corrected: seconds
  std::vector<BaselineResult> baselines;
};

}  // namespace nestfast::compat
