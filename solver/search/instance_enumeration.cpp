// enumerate_instances: the outer loops of the search, in one fixed order.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "solver/cluster/gpu_throughput.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::search {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> values;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) values.push_back(d);
  }
  return values;
}

// The user's list when given, else the defaults; always filtered by `valid`.
template <class Valid>
std::vector<int> choose(const std::vector<int>& restriction, const std::vector<int>& defaults, Valid valid) {
  std::vector<int> values;
  for (int v : restriction.empty() ? defaults : restriction) {
    if (valid(v)) values.push_back(v);
  }
  return values;
}

std::vector<int> powers_of_two_up_to(int max_value) {
  std::vector<int> values;
  for (int v = 1; v <= max_value; v *= 2) values.push_back(v);
  return values;
}

// Every order of the dims whose degree exceeds 1, then the size-1 dims in
// the default order (their position changes no stride).
std::vector<std::array<ParallelDim, kParallelDims>> placements_for(const std::array<int, kParallelDims>& size,
                                                                    const StrategySpace& space) {
  std::vector<std::array<ParallelDim, kParallelDims>> orders;
  if (!space.placements.empty()) {
    for (const auto& order : space.placements) {
      std::array<ParallelDim, kParallelDims> fixed{};
      std::copy(order.begin(), order.end(), fixed.begin());
      orders.push_back(fixed);
    }
    return orders;
  }
  const std::array<ParallelDim, kParallelDims> kDefault = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep,
                                                           ParallelDim::Dp, ParallelDim::Pp};
  std::vector<ParallelDim> active;
  std::vector<ParallelDim> idle;
  for (ParallelDim dim : kDefault) {
    (size[static_cast<int>(dim)] > 1 ? active : idle).push_back(dim);
  }
  std::vector<int> index(active.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int>(i);
  do {
    std::array<ParallelDim, kParallelDims> order{};
    std::size_t k = 0;
    for (int i : index) order[k++] = active[static_cast<std::size_t>(i)];
    for (ParallelDim dim : idle) order[k++] = dim;
    orders.push_back(order);
  } while (std::next_permutation(index.begin(), index.end()));
  return orders;
}

bool contains(const std::vector<int>& values, int v) {
  return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

std::vector<DpInstance> enumerate_instances(const SolveProblem& problem, const StrategySpace& space) {
  const ModelSpec& model = problem.model;
  const int gpus = problem.gpus;
  if (gpus < 1) throw std::invalid_argument("--gpus: must be at least 1");
  if (problem.global_batch < 1) throw std::invalid_argument("--gbs: must be at least 1");
  const int seq = problem.seq_len > 0 ? problem.seq_len : model.seq_len;
  const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  validate_model(model);
  validate_cluster(problem.cluster);

  unsigned recompute_mask = 0;
  for (Recompute mode : space.recompute) recompute_mask |= 1u << static_cast<unsigned>(mode);
  if (space.recompute.empty()) recompute_mask = (1u << kRecomputeModes) - 1;

  const auto tps = choose(space.tp, divisors(gpus), [&](int tp) {
    return gpus % tp == 0 && model.heads % tp == 0 && kv_heads % tp == 0;
  });
  std::vector<DpInstance> instances;
  std::string first_rejection;
  for (int tp : tps) {
    const auto cps = choose(space.cp, powers_of_two_up_to(kDefaultMaxCp), [&](int cp) {
      return (gpus / tp) % cp == 0 && (cp == 1 || seq % (2 * cp) == 0);
    });
    for (int cp : cps) {
      const auto pps = choose(space.pp, divisors(gpus / (tp * cp)),
                              [&](int pp) { return (gpus / (tp * cp)) % pp == 0 && pp <= model.num_layers; });
      for (int pp : pps) {
        const int dp = gpus / (tp * cp * pp);
        if (!contains(space.dp, dp)) continue;
        const std::vector<int> ep_defaults = model.moe.enabled() ? divisors(dp) : std::vector<int>{1};
        const auto eps = choose(space.ep, ep_defaults, [&](int ep) {
          return dp % ep == 0 && (ep == 1 || (model.moe.enabled() && model.moe.num_experts % ep == 0));
        });
        for (int ep : eps) {
          const auto sps = choose(space.sp, {0, 1}, [&](int sp) {
            return sp == 0 || (sp == 1 && tp > 1 && (seq / cp) % tp == 0);
          });
          for (int sp : sps) {
            const auto mbss = choose(space.micro_batch, powers_of_two_up_to(kDefaultMaxMicroBatch), [&](int mbs) {
              return problem.global_batch % (dp * mbs) == 0;
            });
            for (int mbs : mbss) {
              const int micro_batches = problem.global_batch / (dp * mbs);
              const auto zeros = choose(space.zero_stage, {0, 1, 2, 3},
                                        [&](int z) { return z <= 3 && (z == 0 || dp * cp > 1); });
              for (int zero : zeros) {
                const auto vpps = choose(space.vpp, powers_of_two_up_to(kDefaultMaxVpp), [&](int v) {
                  if (v == 1) return true;
                  return pp > 1 && model.num_layers % (pp * v) == 0 && micro_batches % pp == 0;
                });
                for (int vpp : vpps) {
                  const std::array<int, kParallelDims> size = {tp, cp, ep, pp, dp / ep};
                  // The cost model's own check is the last word (and names
                  // what is wrong when nothing is left).
                  DpInstance probe;
                  probe.tp = tp;
                  probe.cp = cp;
                  probe.ep = ep;
                  probe.pp = pp;
                  probe.dp = dp;
                  probe.sp = sp;
                  probe.micro_batch = mbs;
                  probe.zero_stage = zero;
                  probe.vpp = vpp;
                  try {
                    validate_degrees(model, problem.cluster, execution_skeleton(problem, probe), gpus);
                  } catch (const std::invalid_argument& error) {
                    if (first_rejection.empty()) first_rejection = error.what();
                    continue;
                  }
                  for (const auto& placement : placements_for(size, space)) {
                    DpInstance instance;
                    instance.problem = 0;
                    instance.tp = tp;
                    instance.cp = cp;
                    instance.ep = ep;
                    instance.pp = pp;
                    instance.dp = dp;
                    instance.sp = sp;
                    instance.micro_batch = mbs;
                    instance.zero_stage = zero;
                    instance.vpp = vpp;
                    instance.placement = placement;
                    instance.recompute_mask = recompute_mask;
                    instance.uneven_layers = space.uneven_layers ? 1 : 0;
                    instance.ordinal = instances.size();
                    instances.push_back(instance);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (instances.empty()) {
    if (!first_rejection.empty()) throw std::invalid_argument(first_rejection);
    throw std::invalid_argument("no valid parallel configuration: no tp*cp*pp*dp = " + std::to_string(gpus) +
                                " with gbs " + std::to_string(problem.global_batch) +
                                " divisible by dp*mbs satisfies the restrictions (check --tp/--pp/--dp/--mbs/--gbs)");
  }
  return instances;
}

Execution execution_skeleton(const SolveProblem& problem, const DpInstance& instance) {
  Execution execution;
  execution.tp = instance.tp;
  execution.cp = instance.cp;
  execution.ep = instance.ep;
  execution.pp = instance.pp;
  execution.dp = instance.dp;
  execution.sp = instance.sp != 0;
  execution.micro_batch = instance.micro_batch;
  execution.global_batch = problem.global_batch;
  execution.seq_len = problem.seq_len;
  execution.zero_stage = instance.zero_stage;
  execution.vpp = instance.vpp;
  execution.optimizer = problem.optimizer;
  execution.a2a = problem.a2a;
  execution.expert_imbalance = problem.expert_imbalance;
  execution.placement.assign(instance.placement.begin(), instance.placement.end());
  return execution;
}

}  // namespace nestfast::search
