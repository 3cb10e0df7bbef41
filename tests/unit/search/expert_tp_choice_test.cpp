// The search chooses Megatron-Core's expert tensor parallelism: etp = tp or
// whole experts (etp 1) at ep > 1 and tp > 1, on Megatron's expert grid
// (parallel_state.py:871-900: ep x etp divides tp*cp*dp).
#include <gtest/gtest.h>

#include "solver/search/megatron_rules.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/strategy_space.hpp"
#include "tests/unit/cost_model/test_specs.hpp"

namespace nestfast::search {
namespace {

// test-moe (8 layers, h 2048, 8 SwiGLU experts of width 4096) on 16 test
// A100s (two 8-GPU nodes), Megatron-Core, tp 2 with sp, dp 8, ep 8, pp 1,
// 8 micro-batches of one 2048-token sequence, no recompute, no ZeRO: the
// only choice left is etp.
SolveProblem problem() {
  SolveProblem p;
  p.model = test::moe_model();
  p.cluster = test::a100_cluster();
  p.gpus = 16;
  p.global_batch = 64;
  p.framework = Framework::MegatronCore;
  return p;
}

StrategySpace only_etp_left() {
  StrategySpace space;
  space.tp = {2};
  space.cp = {1};
  space.pp = {1};
  space.ep = {8};
  space.sp = {1};
  space.micro_batch = {1};
  space.zero_stage = {0};
  space.vpp = {1};
  space.recompute = {Recompute::None};
  return space;
}

SolveResult solve_top(const SolveProblem& p, int top_k) {
  SolveOptions options;
  options.top_k = top_k;
  options.threads = 1;
  options.baselines = false;
  return solve(p, only_etp_left(), options);
}

// Top-8 routing: at etp = tp = 2 every MoE layer all-gathers and
// reduce-scatters the k t = 8 x 1024 routed copies (32 MiB in bf16) over tp
// in the forward and again in the backward, 8 layers x 8 micro-batches of it
// (token_dispatcher.py:741-751, :824-832), and ep 8 x etp 2 spreads the
// all-to-all over both nodes. Whole experts run the same expert FLOPs with
// none of those gathers and an ep group inside one node; what they pay
// instead is one expert-dp (2 ranks) gradient reduce of one 25 M-parameter
// expert per layer per iteration. With 80 GiB of HBM both fit, and etp 1
// is faster.
TEST(ExpertTpChoice, WholeExpertsWinWhenTheRoutedGatherDominates) {
  SolveProblem p = problem();
  p.model.moe.top_k = 8;
  const SolveResult result = solve_top(p, 2);
  ASSERT_TRUE(result.feasible) << result.infeasible_reason;
  ASSERT_EQ(result.top.size(), 2u) << "both etp choices are instances";
  const InstanceResult& best = result.top[0];
  const InstanceResult& other = result.top[1];
  EXPECT_EQ(best.plan.etp(), 1);
  EXPECT_EQ(other.plan.etp(), 2);
  EXPECT_LT(best.iteration_time_s, other.iteration_time_s);
  // The emitted plan prices as evaluate prices it.
  EXPECT_DOUBLE_EQ(evaluate_plan(p.model, p.cluster, best.plan).iteration_time_s, best.iteration_time_s);
}

// Whole experts hold etp x fewer ranks per expert: 8 layers x one expert of
// 3 x 2048 x 4096 parameters each, 18 bytes a parameter with Adam (3.6 GB)
// instead of half of it at etp 2 (1.8 GB), against 8 MiB a layer less of
// routed-copy stash (layer_table_test WholeExpertsBesideTensorParallelism).
// With HBM between the two peaks only etp = tp fits, and the search takes it.
TEST(ExpertTpChoice, ExpertTensorParallelismWinsWhenWholeExpertsDoNotFit) {
  SolveProblem p = problem();
  const SolveResult ample = solve_top(p, 2);
  ASSERT_EQ(ample.top.size(), 2u);
  double whole = 0, split = 0;
  for (const InstanceResult& r : ample.top) {
    const double peak = evaluate_plan(p.model, p.cluster, r.plan).memory_peak_bytes;
    (r.plan.etp() == 1 ? whole : split) = peak;
  }
  ASSERT_GT(whole, split + 1.5e9) << "whole experts hold about 1.8 GB more";
  p.cluster.gpu.hbm_bytes = static_cast<std::uint64_t>((whole + split) / 2);
  const SolveResult tight = solve_top(p, 2);
  ASSERT_TRUE(tight.feasible) << tight.infeasible_reason;
  ASSERT_EQ(tight.top.size(), 1u) << "whole experts do not fit";
  EXPECT_EQ(tight.top[0].plan.etp(), 2);
  EXPECT_EQ(tight.top[0].plan.expert_tp, 0);
  EXPECT_LT(evaluate_plan(p.model, p.cluster, tight.top[0].plan).memory_peak_bytes, p.cluster.gpu.hbm_bytes);
}

// Megatron's tp-pp-dp rank order (--use-tp-pp-dp-mapping) needs the expert
// grid's pipeline groups to be the dense grid's: etp * ep == tp * cp at pp > 1
// (parallel_state.py:898). With whole experts that is ep == tp * cp, not
// ep == cp: at tp 2, ep 2 the order runs with etp 1 and cp 1, not with etp 2,
// nor with etp 1 beside cp 2. Every instance the megatron-core space holds
// passes Megatron's rules, and the one valid tp-pp-dp case is among them.
TEST(ExpertTpChoice, TpPpDpOrderFollowsTheExpertGridWithWholeExperts) {
  SolveProblem p = problem();
  StrategySpace space = only_etp_left();
  space.pp = {2};
  space.cp = {1, 2};
  space.ep = {2};
  const std::vector<ParallelDim> pp_dp = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp,
                                          ParallelDim::Dp};
  int tp_pp_dp = 0;
  for (const DpInstance& instance : enumerate_instances(p, space)) {
    const Execution e = execution_skeleton(p, instance);
    EXPECT_TRUE(megatron_violations(p.model, e).empty())
        << "etp " << e.etp() << " cp " << e.cp << " placement " << placement_to_string(e.placement);
    if (e.placement == pp_dp) {
      ++tp_pp_dp;
      EXPECT_EQ(e.etp() * e.ep, e.tp * e.cp);
    }
  }
  EXPECT_GT(tp_pp_dp, 0) << "etp 1, ep 2 at tp 2, cp 1 runs tp-pp-dp";
}

}  // namespace
}  // namespace nestfast::search
