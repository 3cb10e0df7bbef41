#include "jobs/plan_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "io/record_json/plan_json.hpp"
#include "jobs/megatron_text.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::jobs {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Transformer blocks of a stage: the chain is embedding 0, blocks 1..L, head L+1.
int blocks_in(const search::StageRecord& stage, int blocks) {
  return std::max(0, std::min(stage.last_layer, blocks) - std::max(stage.first_layer, 1) + 1);
}

int total_blocks(const search::PlanRecord& record) {
  return record.stages.empty() ? 0 : std::max(0, record.stages.back().last_layer - 1);
}

double speedup(const search::PlanRecord& plan, const search::PlanRecord& best) {
  return best.iteration_time_s > 0 ? plan.iteration_time_s / best.iteration_time_s : 0.0;
}

}  // namespace

std::string recompute_text(const search::StageRecord& stage) {
  const std::string mode = to_string(stage.recompute);
  return stage.recompute_layers > 0 ? mode + "/" + std::to_string(stage.recompute_layers) : mode;
}

std::string layers_text(int first_layer, int last_layer) { return fmt::format("{}-{}", first_layer, last_layer); }

std::string boundary_text(const search::StageRecord& stage) {
  if (stage.boundary_level < 0) return "none";
  return fmt::format("{} ({})", stage.boundary_level, stage.boundary_level_name);
}

std::string degrees_text(const search::PlanRecord& r) {
  return fmt::format(
      "tp={} cp={} ep={}{} pp={} dp={} sp={} micro_batch={} zero_stage={} vpp={} recompute={} placement={} attention={} "
      "overlap={} grad_reduce={} framework={}",
      r.tp, r.cp, r.ep, r.etp > 0 && r.etp != r.tp ? fmt::format(" etp={}", r.etp) : std::string(), r.pp, r.dp, r.sp ? "on" : "off", r.micro_batch, r.zero_stage, r.vpp,
      r.recompute + (r.recompute_modules != kDefaultRecomputeModules && r.recompute != "none" && r.recompute.rfind("full", 0) != 0
                         ? "(" + to_string_modules(r.recompute_modules) + ")"
                         : std::string()),
      search::placement_to_string(r.placement), to_string(r.attention),
      r.overlap_priced.empty() ? to_string(r.overlap) : r.overlap_priced, to_string(r.grad_reduce),
      to_string(r.framework));
}

std::string price_text(const search::PlanRecord& r) {
  return fmt::format("iteration {:.4f} s, {:.0f} tokens/s, MFU {:.1f}%, {} micro-batches, peak memory {:.2f} of {:.2f} GiB HBM",
                     r.iteration_time_s, r.tokens_per_s, r.mfu_pct, r.micro_batches, r.memory_peak_bytes / kGiB,
                     r.hbm_bytes / kGiB);
}

std::string breakdown_text(const search::PlanRecord& r) {
  const TimeBreakdown& b = r.breakdown;
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute_s},   {"recompute", b.recompute_s}, {"TP comm", b.tp_comm_s},
      {"CP comm", b.cp_comm_s},   {"EP comm", b.ep_comm_s},     {"ZeRO-3 gather", b.zero3_gather_s},
      {"p2p", b.p2p_s},           {"bubble", b.bubble_s},       {"DP sync", b.dp_sync_s},
      {"optimizer", b.optimizer_s}};
  std::string out = "  time split of the iteration (bottleneck rank):\n";
  for (const auto& [name, seconds] : parts) {
    out += fmt::format("    {:<14} {:10.4f} s  {:5.1f}%\n", name, seconds,
                       r.iteration_time_s > 0 ? 100 * seconds / r.iteration_time_s : 0.0);
  }
  return out;
}

std::string stage_table(const search::PlanRecord& r, bool memory_split) {
  const int blocks = total_blocks(r);
  std::string out = fmt::format("  {:>5} {:>4} {:>9} {:>6} {:>7} {:>9} {:<14} {:<9} {:>9} {:>9} {:>9} {:>10}", "stage",
                                "rank", "layers", "blocks", "devices", "1st dev", "boundary in", "recompute",
                                "fw ms/mb", "bw ms/mb", "p2p ms/mb", "memory GiB");
  if (memory_split) out += fmt::format(" {:>8} {:>8} {:>8} {:>8} {:>8}", "weights", "grads", "optim", "activ", "working");
  out += "\n";
  for (const search::StageRecord& s : r.stages) {
    out += fmt::format("  {:>5} {:>4} {:>9} {:>6} {:>7} {:>9} {:<14} {:<9} {:>9.3f} {:>9.3f} {:>9.3f} {:>10.2f}", s.stage,
                       s.pipeline_rank, layers_text(s.first_layer, s.last_layer), blocks_in(s, blocks), s.devices,
                       s.first_device, boundary_text(s), recompute_text(s), 1e3 * s.forward_per_microbatch_s,
                       1e3 * s.backward_per_microbatch_s, 1e3 * s.p2p_per_microbatch_s, s.memory_bytes / kGiB);
    if (memory_split) {
      out += fmt::format(" {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}", s.weights_bytes / kGiB,
                         s.gradients_bytes / kGiB, s.optimizer_bytes / kGiB, s.activations_bytes / kGiB,
                         s.working_bytes / kGiB);
    }
    out += "\n";
  }
  out += "  (layers: 0 = embedding, 1..L = transformer blocks, L+1 = head; memory: one device of the stage's pipeline rank)\n";
  return out;
}

const search::PlanRecord* best_plan(const std::vector<search::PlanRecord>& plans) {
  for (const search::PlanRecord& plan : plans) {
    if (plan.kind == "nest" && plan.rank_k == 0) return &plan;
  }
  return nullptr;
}

std::string point_text(const std::vector<search::PlanRecord>& plans) {
  std::string out;
  const search::PlanRecord* best = best_plan(plans);
  const bool priced = best != nullptr && best->feasible;
  if (!priced) {
    out += "  no feasible plan: no strategy in the search space fits in memory\n";
  } else {
    out += "  best plan: " + degrees_text(*best) + "\n";
    out += "  " + price_text(*best) + "\n";
    out += breakdown_text(*best);
    out += stage_table(*best, false);
  }
  for (const search::PlanRecord& plan : plans) {
    if (plan.kind != "nest" || plan.rank_k == 0) continue;
    out += fmt::format("  alternative #{}: {:.4f} s ({:.3f}x the best)  {}\n", plan.rank_k, plan.iteration_time_s,
                       priced ? speedup(plan, *best) : 0.0, degrees_text(plan));
  }
  for (const search::PlanRecord& plan : plans) {
    if (plan.kind == "nest") continue;
    if (!plan.feasible) {
      out += fmt::format("  baseline {:<10} no feasible plan\n", plan.kind);
    } else {
      out += fmt::format("  baseline {:<10} {:.4f} s{}  {}\n", plan.kind, plan.iteration_time_s,
                         priced ? fmt::format(" (NEST is {:.3f}x faster)", speedup(plan, *best)) : std::string(),
                         degrees_text(plan));
    }
  }
  if (priced) out += "  " + megatron_text(megatron_launch(*best));
  return out;
}

nlohmann::json point_json(const std::vector<search::PlanRecord>& plans) {
  const search::PlanRecord* best = best_plan(plans);
  nlohmann::json list = nlohmann::json::array();
  for (const search::PlanRecord& plan : plans) {
    nlohmann::json entry = io::to_json(plan);
    if (&plan != best && best != nullptr && best->feasible && plan.feasible) entry["nest_speedup_x"] = speedup(plan, *best);
    list.push_back(std::move(entry));
  }
  return {{"plans", list}};
}

}  // namespace nestfast::jobs
