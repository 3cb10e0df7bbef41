// enumerate_instances: the outer loops of the search, in one fixed order.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "solver/cluster/gpu_throughput.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/megatron_rules.hpp"
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

bool same_active_order(const std::array<ParallelDim, kParallelDims>& order, const std::array<int, kParallelDims>& size,
                       const std::array<ParallelDim, kParallelDims>& reference) {
  std::vector<ParallelDim> a, b;
  for (ParallelDim dim : order)
    if (size[static_cast<int>(dim)] > 1) a.push_back(dim);
  for (ParallelDim dim : reference)
    if (size[static_cast<int>(dim)] > 1) b.push_back(dim);
  return a == b;
}

// Nest: every order of the dims whose degree exceeds 1, then the size-1
// dims in the default order (their position changes no stride).
// MegatronCore: its two rank orders (tp-cp-ep-dp-pp, and tp-cp-ep-pp-dp with
// --use-tp-pp-dp-mapping where its expert grid allows it: `expert_pp_stride`
// = etp * ep, which must equal the dense grid's tp * cp at pp > 1,
// MegatronRule::TpPpDpMappingGroups), or those of the user's orders that
// are one of them.
std::vector<std::array<ParallelDim, kParallelDims>> placements_for(const std::array<int, kParallelDims>& size,
                                                                    const StrategySpace& space, bool megatron, int pp,
                                                                    int expert_pp_stride, int dense_pp_stride) {
  std::vector<std::array<ParallelDim, kParallelDims>> orders;
  const std::array<ParallelDim, kParallelDims> kDefault = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep,
                                                           ParallelDim::Dp, ParallelDim::Pp};
  const std::array<ParallelDim, kParallelDims> kPpDp = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep,
                                                        ParallelDim::Pp, ParallelDim::Dp};
  if (megatron) {
    std::vector<std::array<ParallelDim, kParallelDims>> allowed = {kDefault};
    // tp-pp-dp needs the expert grid's pp groups to equal the dense ones
    // (etp * ep == tp * cp: ep == cp at etp = tp, ep == tp * cp with whole experts).
    if (!same_active_order(kPpDp, size, kDefault) && (pp == 1 || expert_pp_stride == dense_pp_stride))
      allowed.push_back(kPpDp);
    if (space.placements.empty()) return allowed;
    for (const auto& order : space.placements) {
      std::array<ParallelDim, kParallelDims> fixed{};
      std::copy(order.begin(), order.end(), fixed.begin());
      for (const auto& candidate : allowed)
        if (same_active_order(fixed, size, candidate) &&
            std::find(orders.begin(), orders.end(), candidate) == orders.end())
          orders.push_back(candidate);
    }
    return orders;
  }
  if (!space.placements.empty()) {
    for (const auto& order : space.placements) {
      std::array<ParallelDim, kParallelDims> fixed{};
      std::copy(order.begin(), order.end(), fixed.begin());
      orders.push_back(fixed);
    }
    return orders;
  }
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

std::string gpus_error(const SolveProblem& problem) {
  const int gpus = problem.gpus;
  if (gpus < 1 || gpus > kMaxGpus) {
    return std::to_string(gpus) + " is not in [1, " + std::to_string(kMaxGpus) + "]";
  }
  const ClusterSpec& cluster = problem.cluster;
  const int node = cluster.levels.empty() ? 0 : cluster.levels.front().group_size;
  if (node > 0 && gpus % node != 0) {
    return std::to_string(gpus) + " is not a multiple of the " + std::to_string(node) + " GPUs per node of cluster '" +
           cluster.name + "'";
  }
  return "";
}

std::vector<DpInstance> enumerate_instances(const SolveProblem& problem, const StrategySpace& space) {
  const ModelSpec& model = problem.model;
  const int gpus = problem.gpus;
  // Whole nodes only is the commands' rule (gpus_error); the search itself takes any count in range.
  if (gpus < 1 || gpus > kMaxGpus) {
    throw std::invalid_argument("--gpus: " + std::to_string(gpus) + " is not in [1, " + std::to_string(kMaxGpus) + "]");
  }
  if (problem.global_batch < 1 || problem.global_batch > kMaxGlobalBatch) {
    throw std::invalid_argument("--gbs: " + std::to_string(problem.global_batch) + " is not in [1, " +
                                std::to_string(kMaxGlobalBatch) + "]");
  }
  if (problem.seq_len < 0 || problem.seq_len > kMaxSeqLen) {
    throw std::invalid_argument("--seq: " + std::to_string(problem.seq_len) + " is not in [1, " +
                                std::to_string(kMaxSeqLen) + "]");
  }
  const int seq = problem.seq_len > 0 ? problem.seq_len : model.seq_len;
  const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const bool megatron = problem.framework == Framework::MegatronCore;
  validate_model(model);
  validate_cluster(problem.cluster);
  // DeepEP asked of a cluster it does not run on would only drop every
  // expert-parallel plan: say so instead.
  if (problem.a2a == AllToAllAlgorithm::DeepEp && model.moe.enabled() && problem.cluster.deepep == DeepEpSupport::None)
    throw std::invalid_argument("--a2a: deepep, but DeepEP does not run on cluster '" + problem.cluster.name +
                                "' (its preset's deepep is none)");

  std::vector<Recompute> modes = space.recompute;
  if (modes.empty()) modes = {Recompute::None, Recompute::Selective, Recompute::Full};
  std::vector<RecomputeModules> module_sets;
  for (RecomputeModules set : space.recompute_modules.empty() ? default_module_sets(model) : space.recompute_modules)
    if (!recompute_modules_refused(model, set)) module_sets.push_back(set);
  if (module_sets.empty())
    throw std::invalid_argument("--recompute-modules: " + to_string_modules(space.recompute_modules.front()) + ": " +
                                describe(MegatronRule::RecomputeModulesApply) + " (model '" + model.name + "')");
  const bool selective = std::find(modes.begin(), modes.end(), Recompute::Selective) != modes.end();
  unsigned all_modes_mask = 0;
  for (Recompute mode : modes) all_modes_mask |= 1u << static_cast<unsigned>(mode);

  // Why a value the user asked for is not searched (the first such reason
  // names the flag when nothing is left).
  std::string first_rejection;
  auto reject = [&first_rejection](bool user_given, const std::string& reason) {
    if (user_given && first_rejection.empty()) first_rejection = reason;
    return false;
  };

  const auto tps = choose(space.tp, divisors(gpus), [&](int tp) {
    if (gpus % tp != 0) return reject(true, "--tp: " + std::to_string(tp) + " does not divide --gpus " + std::to_string(gpus));
    if (model.heads % tp != 0 || kv_heads % tp != 0)
      return reject(!space.tp.empty(), "--tp: " + std::to_string(tp) + " does not divide heads = " +
                                           std::to_string(model.heads) + " and kv_heads = " + std::to_string(kv_heads) +
                                           " of model '" + model.name + "'");
    return true;
  });
  std::vector<DpInstance> instances;
  for (int tp : tps) {
    const auto cps = choose(space.cp, powers_of_two_up_to(kDefaultMaxCp), [&](int cp) {
      if ((gpus / tp) % cp != 0)
        return reject(!space.cp.empty(), "--cp: " + std::to_string(cp) + " does not divide gpus/tp = " + std::to_string(gpus / tp));
      if (cp > 1 && seq % (2 * cp) != 0)
        return reject(!space.cp.empty(), "--cp: the sequence length " + std::to_string(seq) + " is not a multiple of 2*cp = " +
                                             std::to_string(2 * cp));
      if (megatron && cp > 1 && model.attention == AttentionKind::MultiLatent)
        return reject(!space.cp.empty(), "--cp " + std::to_string(cp) + ": " + describe(MegatronRule::MlaContextParallel));
      return true;
    });
    for (int cp : cps) {
      const auto pps = choose(space.pp, divisors(gpus / (tp * cp)), [&](int pp) {
        if ((gpus / (tp * cp)) % pp != 0)
          return reject(!space.pp.empty(), "--pp: " + std::to_string(pp) + " does not divide gpus/(tp*cp) = " +
                                               std::to_string(gpus / (tp * cp)));
        if (pp > model.num_layers)
          return reject(!space.pp.empty(), "--pp: " + std::to_string(pp) + " stages but the model has only " +
                                               std::to_string(model.num_layers) + " blocks");
        return true;
      });
      for (int pp : pps) {
        const int dp = gpus / (tp * cp * pp);
        if (!contains(space.dp, dp)) continue;
        // Nest carves ep out of dp; Megatron's expert grid etp-ep-edp-pp takes
        // ep x etp from tp*cp*dp (parallel_state.py:871-900), so with whole
        // experts (etp 1) ep may span the tp ranks too.
        const int ep_pool = megatron ? tp * cp * dp : dp;
        const std::vector<int> ep_defaults = model.moe.enabled() ? divisors(ep_pool) : std::vector<int>{1};
        const auto eps = choose(space.ep, ep_defaults, [&](int ep) {
          if (ep_pool % ep != 0)
            return reject(!space.ep.empty(), "--ep: " + std::to_string(ep) + (megatron ? " does not divide tp*cp*dp = " : " does not divide dp = ") +
                                                 std::to_string(ep_pool));
          if (ep > 1 && !(model.moe.enabled() && model.moe.num_experts % ep == 0))
            return reject(!space.ep.empty(), "--ep: " + std::to_string(ep) + " does not divide the experts of model '" + model.name + "'");
          return true;
        });
        for (int ep : eps) {
          // Expert tensor parallelism under Megatron-Core: tp (0) when ep x tp
          // fits the grid, and whole experts (1) beside tp > 1 at ep > 1.
          std::vector<int> expert_tps;
          if ((tp * cp * dp) % (tp * ep) == 0) expert_tps.push_back(0);
          if (megatron && ep > 1 && tp > 1) expert_tps.push_back(1);
          for (int expert_tp : expert_tps) {
            const auto sps = choose(space.sp, {0, 1}, [&](int sp) {
              if (sp == 1 && !(tp > 1 && (seq / cp) % tp == 0))
                return reject(!space.sp.empty() && tp > 1, "--sp: needs tp to divide seq/cp");
              if (megatron && sp == 0 && tp > 1 && model.moe.enabled())
                return reject(!space.sp.empty() && space.sp.size() == 1,
                              "--sp off: " + describe(MegatronRule::MoeTpNeedsSequenceParallel));
              return true;
            });
            for (int sp : sps) {
              const auto mbss = choose(space.micro_batch, powers_of_two_up_to(kDefaultMaxMicroBatch), [&](int mbs) {
                if (problem.global_batch % (dp * mbs) != 0)
                  return reject(!space.micro_batch.empty(), "--mbs: --gbs " + std::to_string(problem.global_batch) +
                                                                " is not divisible by dp*mbs = " + std::to_string(dp * mbs));
                return true;
              });
              for (int mbs : mbss) {
                const int micro_batches = problem.global_batch / (dp * mbs);
                // With dp*cp = 1 every ZeRO stage is the same plan: one instance (stage 0) stands for them.
                std::vector<int> zeros;
                for (int z : space.zero_stage.empty() ? std::vector<int>{0, 1, 2, 3} : space.zero_stage) {
                  if (z > 3) continue;
                  if (dp * cp == 1) z = 0;
                  if (megatron && z >= 2 && pp > 1 && !space.allow_fsdp_with_pipeline) {
                    reject(!space.zero_stage.empty(), "--zero " + std::to_string(z) + ": " +
                                                          describe(MegatronRule::FsdpWithoutPipeline));
                    continue;
                  }
                  if (std::find(zeros.begin(), zeros.end(), z) == zeros.end()) zeros.push_back(z);
                }
                for (int zero : zeros) {
                  const auto vpps = choose(space.vpp, powers_of_two_up_to(kDefaultMaxVpp), [&](int v) {
                    if (v == 1) return true;
                    const std::string what = "--vpp " + std::to_string(v) + " at pp " + std::to_string(pp) + ": ";
                    if (pp == 1) return reject(!space.vpp.empty() && !space.pp.empty(), what + "interleaving needs pp > 1");
                    if (micro_batches % pp != 0 || micro_batches < pp)
                      return reject(!space.vpp.empty(), what + "interleaved 1F1B needs the micro-batch count " +
                                                            std::to_string(micro_batches) + " to be a multiple of pp (" +
                                                            std::string(megatron_rule(MegatronRule::InterleavedMicroBatches).source) + ")");
                    if (pp * v > model.num_layers + 2)
                      return reject(!space.vpp.empty(), what + std::to_string(pp * v) + " chunks but the chain has only " +
                                                            std::to_string(model.num_layers + 2) + " layers (blocks, embedding, head)");
                    return true;
                  });
                  for (int vpp : vpps) {
                    const std::array<int, kParallelDims> size = {tp, cp, megatron ? 1 : ep, pp, megatron ? dp : dp / ep};
                    // The cost model's own check is the last word (and names
                    // what is wrong when nothing is left).
                    DpInstance probe;
                    probe.tp = tp;
                    probe.cp = cp;
                    probe.ep = ep;
                    probe.expert_tp = expert_tp;
                    probe.pp = pp;
                    probe.dp = dp;
                    probe.sp = sp;
                    probe.micro_batch = mbs;
                    probe.zero_stage = zero;
                    probe.vpp = vpp;
                    probe.framework = problem.framework;
                    try {
                      validate_degrees(model, problem.cluster, execution_skeleton(problem, probe), gpus);
                    } catch (const std::invalid_argument& error) {
                      if (first_rejection.empty()) first_rejection = error.what();
                      continue;
                    }
                    // Recompute: per stage (one mask) under Nest; one setting
                    // per plan under MegatronCore, full also as block recompute
                    // of the first N blocks of every chunk.
                    // A selective stage checkpoints one of the module
                    // sets, each its own instance (the default set first, so
                    // a set that changes nothing ties and loses to it).
                    struct RecomputeChoice {
                      unsigned mask;
                      int layers;
                      RecomputeModules modules;
                    };
                    std::vector<RecomputeChoice> recomputes;
                    if (!megatron) {
                      if (!selective) recomputes.push_back({all_modes_mask, 0, kDefaultRecomputeModules});
                      else
                        for (RecomputeModules set : module_sets) recomputes.push_back({all_modes_mask, 0, set});
                    } else {
                      const int per_chunk = (model.num_layers + pp * vpp - 1) / (pp * vpp);
                      for (Recompute mode : modes) {
                        const unsigned bit = 1u << static_cast<unsigned>(mode);
                        if (mode == Recompute::Selective) {
                          for (RecomputeModules set : module_sets) recomputes.push_back({bit, 0, set});
                          continue;
                        }
                        if (mode != Recompute::Full) {
                          recomputes.push_back({bit, 0, kDefaultRecomputeModules});
                          continue;
                        }
                        std::vector<int> blocks = space.recompute_layers;
                        if (blocks.empty()) {
                          blocks = {0};
                          for (int n = 1; n < per_chunk; n *= 2) blocks.push_back(n);
                        }
                        for (int n : blocks)
                          if (n == 0 || n < per_chunk || !space.recompute_layers.empty())
                            recomputes.push_back({bit, n, kDefaultRecomputeModules});
                      }
                    }
                    const int expert_pp_stride = (expert_tp > 0 ? expert_tp : tp) * ep;
                    for (const auto& placement : placements_for(size, space, megatron, pp, expert_pp_stride, tp * cp)) {
                      for (const RecomputeChoice& recompute : recomputes) {
                        // The probe's degrees, with a placement and recompute.
                        DpInstance instance = probe;
                        instance.placement = placement;
                        instance.recompute_mask = recompute.mask;
                        instance.recompute_layers = recompute.layers;
                        instance.recompute_modules = recompute.modules;
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
    }
  }
  if (!megatron) {
    // Nest's space holds Megatron-Core's: its plans that Nest's own
    // instances do not already cover join as MegatronCore instances, so
    // Nest's best is never slower and, when it is one of these, runs as
    // emitted. Those are block recompute of N layers (Nest recomputes whole
    // stages), and at cp > 1 Megatron's expert grid, which takes ep from
    // cp*dp beside tp (at cp = 1 it is Nest's ep carved out of dp in
    // Megatron's order), whole experts beside tp (etp 1, ep x 1 from
    // tp*cp*dp), the fused attention Megatron runs there when unfused is
    // asked, and at ep > 1 Megatron's alltoall dispatcher where Nest's own
    // plans run FAST. The others are Nest's own instances with a recompute
    // mask that holds their one mode.
    SolveProblem as_megatron = problem;
    as_megatron.framework = Framework::MegatronCore;
    std::vector<DpInstance> megatron_instances;
    try {
      megatron_instances = enumerate_instances(as_megatron, space);
    } catch (const std::invalid_argument&) {
      // Megatron-Core runs none of them: Nest's own instances stand alone.
    }
    for (DpInstance& instance : megatron_instances) {
      const bool same_attention = plan_attention(Framework::MegatronCore, problem.attention, instance.cp) ==
                                  plan_attention(Framework::Nest, problem.attention, instance.cp);
      const bool same_all_to_all = instance.ep == 1 || plan_all_to_all(Framework::MegatronCore, problem.a2a) ==
                                                           plan_all_to_all(Framework::Nest, problem.a2a);
      const bool own_layout =
          instance.expert_tp == 0 && same_all_to_all && (instance.cp == 1 || (instance.ep == 1 && same_attention));
      if (instance.recompute_layers == 0 && own_layout) continue;
      instance.ordinal = instances.size();
      instances.push_back(instance);
    }
  }
  if (instances.empty()) {
    if (!first_rejection.empty()) throw std::invalid_argument(first_rejection);
    throw std::invalid_argument("no valid parallel configuration: no tp*cp*pp*dp = " + std::to_string(gpus) +
                                " satisfies the restrictions (check --tp/--cp/--pp/--dp/--ep/--mbs/--gbs)");
  }
  return instances;
}

Execution execution_skeleton(const SolveProblem& problem, const DpInstance& instance) {
  Execution execution;
  execution.tp = instance.tp;
  execution.cp = instance.cp;
  execution.ep = instance.ep;
  execution.expert_tp = instance.expert_tp;
  execution.pp = instance.pp;
  execution.dp = instance.dp;
  execution.sp = instance.sp != 0;
  execution.micro_batch = instance.micro_batch;
  execution.global_batch = problem.global_batch;
  execution.seq_len = problem.seq_len;
  execution.zero_stage = instance.zero_stage;
  execution.vpp = instance.vpp;
  execution.optimizer = problem.optimizer;
  execution.a2a = plan_all_to_all(instance.framework, problem.a2a);
  execution.expert_imbalance = problem.expert_imbalance;
  execution.attention = plan_attention(instance.framework, problem.attention, instance.cp);
  execution.overlap = problem.overlap;
  execution.grad_reduce = problem.grad_reduce;
  execution.recompute_modules = instance.recompute_modules;
  execution.placement.assign(instance.placement.begin(), instance.placement.end());
  execution.framework = instance.framework;
  return execution;
}

Attention plan_attention(Framework framework, Attention asked, int cp) {
  return framework == Framework::MegatronCore && cp > 1 ? Attention::Flash : asked;
}

AllToAllAlgorithm plan_all_to_all(Framework framework, AllToAllAlgorithm asked) {
  return framework == Framework::MegatronCore && asked == AllToAllAlgorithm::Fast ? AllToAllAlgorithm::Fanout : asked;
}

AllToAllAlgorithm resolve_all_to_all(const std::string& text, Framework framework, const std::string& what) {
  if (text == "auto") return plan_all_to_all(framework, AllToAllAlgorithm::Fast);
  if (text == "fast" && framework == Framework::MegatronCore)
    throw std::invalid_argument(what + ": fast is nestfast's own all-to-all, which Megatron-LM does not run; for "
                                       "megatron-core plans use fanout (its alltoall dispatcher) or deepep (its flex "
                                       "dispatcher), or plan for framework nest");
  try {
    return parse_all_to_all(text, what);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(what + ": '" + text + "' is not one of auto, fast, fanout, deepep");
  }
}

}  // namespace nestfast::search
