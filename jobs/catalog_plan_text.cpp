#include "jobs/catalog_plan_text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "io/catalog/plan_rows.hpp"
#include "jobs/megatron_text.hpp"
#include "solver/search/megatron_args.hpp"

namespace nestfast::jobs {
namespace {

using io::get_fixed;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string plan_degrees(const io::PlanRow& row) {
  return fmt::format("tp={} pp={} dp={} ep={} cp={} sp={} mbs={} zero={} vpp={} recompute={} attention={} framework={}",
                     row.tp, row.pp, row.dp, row.ep, row.cp, row.sp != 0 ? "on" : "off", row.mbs, row.zero, row.vpp,
                     get_fixed(row.recompute), get_fixed(row.attention), get_fixed(row.framework));
}

const io::PlanRow* find_row(const std::vector<io::PlanRow>& rows, const std::string& kind, int rank_k) {
  for (const auto& row : rows) {
    if (get_fixed(row.kind) == kind && row.rank_k == rank_k) return &row;
  }
  return nullptr;
}

}  // namespace

MegatronLaunchText stored_launch(const StoredPoint& point, const io::PlanRow& plan) {
  MegatronLaunchText launch;
  launch.framework = get_fixed(plan.framework);
  // The line and environment exactly as stored (what solve printed); the
  // notes are the emitter's for the stored plan.
  launch.arguments = get_fixed(plan.megatron_args);
  launch.environment = get_fixed(plan.megatron_env);
  launch.notes = search::megatron_arguments(point.model, io::stored_plan(plan, point.best_stages).plan).notes;
  return launch;
}

std::string point_text(const StoredPoint& point) {
  std::string out;
  const io::PlanRow& head = point.rows.front();
  out += fmt::format("{} on {} ({} GPUs, global batch {}, seq {}), sweep point {}\n", get_fixed(head.model),
                     get_fixed(head.cluster), head.gpus, head.global_batch, head.seq_len, head.point_id);
  const io::PlanRow* best = find_row(point.rows, "nest", 0);
  if (best == nullptr || best->feasible == 0) {
    out += "  no feasible plan: no strategy in the job's search space fits in memory\n";
  } else {
    out += fmt::format("  best plan: {}  placement {}\n", plan_degrees(*best), get_fixed(best->placement_order));
    out += fmt::format("  iteration {:.4f} s, {:.0f} tokens/s, MFU {:.1f}%, peak memory {:.1f} GiB{}\n",
                       best->iter_time_s, best->tokens_per_s, 100.0 * best->mfu,
                       static_cast<double>(best->mem_peak_bytes) / kGiB,
                       point.hbm_bytes > 0 ? fmt::format(" of {:.1f} GiB HBM", static_cast<double>(point.hbm_bytes) / kGiB)
                                           : std::string());
    out += fmt::format("  {:>5} {:>9} {:>7} {:>8} {:>8} {:>10} {:>9} {:>9} {:>9} {:>10}\n", "stage", "layers", "devices",
                       "1st dev", "boundary", "recompute", "fw (ms)", "bw (ms)", "p2p (ms)", "mem (GiB)");
    for (const io::StageRow& stage : point.best_stages) {
      const std::string recompute = get_fixed(stage.recompute) +
                                    (stage.recompute_layers > 0 ? "/" + std::to_string(stage.recompute_layers) : "");
      out += fmt::format("  {:>5} {:>9} {:>7} {:>8} {:>8} {:>10} {:>9.3f} {:>9.3f} {:>9.3f} {:>10.2f}\n", stage.stage,
                         fmt::format("{}-{}", stage.first_layer, stage.last_layer), stage.devices, stage.first_device,
                         stage.boundary_level < 0 ? std::string("-") : fmt::format("L{}", stage.boundary_level),
                         recompute,
                         1e3 * stage.fw_s, 1e3 * stage.bw_s, 1e3 * stage.p2p_s,
                         static_cast<double>(stage.mem_bytes) / kGiB);
    }
  }
  for (const io::PlanRow& row : point.rows) {
    if (get_fixed(row.kind) == "nest" && row.rank_k > 0) {
      out += fmt::format("  alternative #{}: {}  placement {}  {:.4f} s\n", row.rank_k, plan_degrees(row),
                         get_fixed(row.placement_order), row.iter_time_s);
    }
  }
  for (const io::PlanRow& row : point.rows) {
    if (get_fixed(row.kind) == "nest") continue;
    if (row.feasible == 0) {
      out += fmt::format("  baseline {:<7} no feasible plan\n", get_fixed(row.kind));
    } else {
      const std::string speedup = best != nullptr && best->feasible != 0
                                      ? fmt::format("  NEST is {:.2f}x faster", row.iter_time_s / best->iter_time_s)
                                      : std::string();
      out += fmt::format("  baseline {:<7} {:.4f} s  ({}){}\n", get_fixed(row.kind), row.iter_time_s, plan_degrees(row),
                         speedup);
    }
  }
  if (best != nullptr && best->feasible != 0) {
    out += "  " + megatron_text(stored_launch(point, *best));
  }
  return out;
}

nlohmann::json point_json(const StoredPoint& point) {
  auto plan_json = [](const io::PlanRow& row) {
    return nlohmann::json{{"kind", get_fixed(row.kind)},
                          {"rank_k", row.rank_k},
                          {"feasible", row.feasible != 0},
                          {"tp", row.tp},
                          {"pp", row.pp},
                          {"dp", row.dp},
                          {"ep", row.ep},
                          {"cp", row.cp},
                          {"sp", row.sp != 0},
                          {"mbs", row.mbs},
                          {"zero", row.zero},
                          {"vpp", row.vpp},
                          {"recompute", get_fixed(row.recompute)},
                          {"placement_order", get_fixed(row.placement_order)},
                          {"framework", get_fixed(row.framework)},
                          {"attention", get_fixed(row.attention)},
                          {"iter_time_s", row.iter_time_s},
                          {"tokens_per_s", row.tokens_per_s},
                          {"mfu", row.mfu},
                          {"mem_peak_bytes", row.mem_peak_bytes}};
  };
  const io::PlanRow& head = point.rows.front();
  nlohmann::json out{{"point_id", head.point_id},   {"model", get_fixed(head.model)},
                     {"cluster", get_fixed(head.cluster)}, {"gpus", head.gpus},
                     {"global_batch", head.global_batch},  {"seq_len", head.seq_len},
                     {"hbm_bytes", point.hbm_bytes}};
  nlohmann::json plans = nlohmann::json::array();
  nlohmann::json baselines = nlohmann::json::array();
  for (const auto& row : point.rows) {
    (get_fixed(row.kind) == "nest" ? plans : baselines).push_back(plan_json(row));
  }
  const io::PlanRow* best = find_row(point.rows, "nest", 0);
  if (best != nullptr && best->feasible != 0) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& stage : point.best_stages) {
      stages.push_back({{"stage", stage.stage},
                        {"first_layer", stage.first_layer},
                        {"last_layer", stage.last_layer},
                        {"devices", stage.devices},
                        {"first_device", stage.first_device},
                        {"boundary_level", stage.boundary_level},
                        {"pipeline_rank", stage.pipeline_rank},
                        {"recompute", get_fixed(stage.recompute)},
                        {"recompute_layers", stage.recompute_layers},
                        {"fw_s", stage.fw_s},
                        {"bw_s", stage.bw_s},
                        {"p2p_s", stage.p2p_s},
                        {"mem_bytes", stage.mem_bytes}});
    }
    plans.front()["stages"] = stages;
    out.update(megatron_json(stored_launch(point, *best)));
  }
  out["plans"] = plans;
  out["baselines"] = baselines;
  return out;
}

std::string summary_table(const std::vector<io::PlanEntry>& plans) {
  std::map<std::uint64_t, std::vector<const io::PlanRow*>> points;
  for (const auto& plan : plans) points[plan.row.point_id].push_back(&plan.row);
  std::string out = fmt::format("{:<16} {:<16} {:>5} {:>5} {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>4} {:>3} {:>9} {:>9} {:>11} {:>6} {:>9}\n",
                                "model", "cluster", "gpus", "gbs", "tp", "pp", "dp", "ep", "cp", "mbs", "zero", "vpp",
                                "recompute", "iter (s)", "tokens/s", "MFU", "vs manual");
  for (const auto& [id, rows] : points) {
    const io::PlanRow* best = nullptr;
    const io::PlanRow* manual = nullptr;
    for (const io::PlanRow* row : rows) {
      if (get_fixed(row->kind) == "nest" && row->rank_k == 0) best = row;
      if (get_fixed(row->kind) == "manual") manual = row;
    }
    if (best == nullptr) continue;
    out += fmt::format("{:<16} {:<16} {:>5} {:>5} ", get_fixed(best->model), get_fixed(best->cluster), best->gpus,
                       best->global_batch);
    if (best->feasible == 0) {
      out += "no feasible plan\n";
      continue;
    }
    const std::string versus = manual != nullptr && manual->feasible != 0
                                   ? fmt::format("{:.2f}x", manual->iter_time_s / best->iter_time_s)
                                   : std::string("-");
    out += fmt::format("{:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>4} {:>3} {:>9} {:>9.3f} {:>11.0f} {:>5.1f}% {:>9}\n",
                       best->tp, best->pp, best->dp, best->ep, best->cp, best->mbs, best->zero, best->vpp,
                       get_fixed(best->recompute), best->iter_time_s, best->tokens_per_s, 100.0 * best->mfu, versus);
  }
  return out;
}

std::string validation_table(const std::vector<io::ValidationRow>& rows) {
  std::string out = fmt::format("{:>8} {:<9} {:>10} {:>7} {:>12} {:>10} {:>10} {:>9} {:>6} {:>7} {:>13} {:>9}\n", "plan",
                                "algo", "bytes", "servers", "avg (us)", "algbw", "busbw", "lb (us)", "eff%", "#wrong",
                                "predicted us", "pred err%");
  bool violated = false;
  for (const auto& row : rows) {
    // No bound (lb 0) or one an iteration beat (eff NaN): no efficiency to show.
    const std::string lb = row.lb_us > 0 ? fmt::format("{:.1f}", row.lb_us) : "-";
    const std::string eff = std::isfinite(row.eff) && row.lb_us > 0 ? fmt::format("{:.1f}", 100.0 * row.eff) : "-";
    violated = violated || (row.lb_us > 0 && !std::isfinite(row.eff));
    // How far the solver's all-to-all time is from the measured one (measured - predicted) / predicted.
    const std::string error = row.predicted_us > 0
                                  ? fmt::format("{:+.1f}", 100.0 * (row.time_us_avg - row.predicted_us) / row.predicted_us)
                                  : "-";
    out += fmt::format("{:>8} {:<9} {:>10} {:>7} {:>12.1f} {:>10.2f} {:>10.2f} {:>9} {:>6} {:>7} {:>13.1f} {:>9}\n",
                       row.plan_row, get_fixed(row.algo), row.bytes_per_rank,
                       fmt::format("{}x{}", row.servers, row.gpus_per_server), row.time_us_avg, row.algbw, row.busbw,
                       lb, eff, row.wrong, row.predicted_us, error);
  }
  if (violated) {
    out += "eff% -: an iteration ran faster than the lower bound at the declared link rates, so those rates are below "
           "what this machine's links carry (set validate.nic_GBps to the real NIC rate)\n";
  }
  return out;
}

}  // namespace nestfast::jobs
