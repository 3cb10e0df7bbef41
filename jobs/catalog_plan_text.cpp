#include "jobs/catalog_plan_text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace nestfast::jobs {
using io::get_fixed;

std::string summary_table(const std::vector<io::PlanEntry>& plans) {
  std::map<std::uint64_t, std::vector<const io::PlanRow*>> points;
  for (const auto& plan : plans) points[plan.row.point_id].push_back(&plan.row);
  std::string out = fmt::format("{:<16} {:<16} {:>5} {:>5} {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>3} {:>9} {:>9} {:>11} {:>6} {:>9}\n",
                                "model", "cluster", "gpus", "gbs", "tp", "pp", "dp", "ep", "etp", "cp", "mbs", "zero", "vpp",
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
                                   ? fmt::format("{:.2f}x", manual->iteration_time_s / best->iteration_time_s)
                                   : std::string("-");
    out += fmt::format("{:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>3} {:>9} {:>9.3f} {:>11.0f} {:>5.1f}% {:>9}\n",
                       best->tp, best->pp, best->dp, best->ep, best->etp, best->cp, best->micro_batch, best->zero_stage, best->vpp,
                       get_fixed(best->recompute), best->iteration_time_s, best->tokens_per_s, best->mfu_pct, versus);
  }
  return out;
}

std::string validation_table(const std::vector<io::ValidationRow>& rows) {
  std::string out = fmt::format("{:>8} {:<9} {:>10} {:>7} {:>12} {:>10} {:>10} {:>9} {:>6} {:>7} {:>13} {:>9}\n", "plan",
                                "algo", "bytes", "servers", "avg (us)", "algbw GB/s", "busbw GB/s", "lb (us)", "eff%",
                                "#wrong", "predicted us", "pred err%");
  bool violated = false;
  for (const auto& row : rows) {
    // No bound (lb 0) or one an iteration beat (eff NaN): no efficiency to show.
    const bool bounded = row.lower_bound_us > 0;
    const std::string lb = bounded ? fmt::format("{:.1f}", row.lower_bound_us) : "-";
    const std::string eff = bounded && std::isfinite(row.efficiency_pct) ? fmt::format("{:.1f}", row.efficiency_pct) : "-";
    violated = violated || (bounded && !std::isfinite(row.efficiency_pct));
    // How far the solver's all-to-all time is from the measured one (measured - predicted) / predicted.
    const std::string error = row.predicted_us > 0
                                  ? fmt::format("{:+.1f}", 100.0 * (row.time_avg_us - row.predicted_us) / row.predicted_us)
                                  : "-";
    out += fmt::format("{:>8} {:<9} {:>10} {:>7} {:>12.1f} {:>10.2f} {:>10.2f} {:>9} {:>6} {:>7} {:>13.1f} {:>9}\n",
                       row.plan_row, get_fixed(row.algo), row.bytes_per_rank,
                       fmt::format("{}x{}", row.servers, row.gpus_per_server), row.time_avg_us, row.algbw_GBps,
                       row.busbw_GBps, lb, eff, row.wrong_bytes, row.predicted_us, error);
  }
  if (violated) {
    out += "eff% -: an iteration ran faster than the lower bound at the declared link rates, so those rates are below "
           "what this machine's links carry (set validate.nic_GBps to the real NIC rate)\n";
  }
  return out;
}

}  // namespace nestfast::jobs
