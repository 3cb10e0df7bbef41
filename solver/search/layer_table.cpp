#include "solver/search/layer_table.hpp"

#include <algorithm>

#include "solver/cluster/gpu_throughput.hpp"
#include "solver/model/layer_work.hpp"

namespace nestfast {

LayerTableConfig layer_table_config(const ModelSpec& model, const Execution& execution, const ExecutionLayout& layout) {
  LayerTableConfig config;
  config.tp = execution.tp;
  config.cp = execution.cp;
  config.ep = execution.ep;
  config.sp = execution.sp && execution.tp > 1;
  config.micro_batch = execution.micro_batch;
  config.seq_len = execution.seq_len > 0 ? execution.seq_len : model.seq_len;
  config.tp_group = layout.tp_group;
  config.cp_group = layout.cp_group;
  config.ep_group = layout.ep_group;
  config.a2a = execution.a2a;
  config.expert_imbalance = execution.expert_imbalance;
  config.flash_attention = execution.flash_attention;
  return config;
}

Sharding layer_sharding(const LayerTableConfig& config) {
  Sharding sharding;
  sharding.tp = config.tp;
  sharding.cp = config.cp;
  sharding.ep = config.ep;
  sharding.sp = config.sp;
  sharding.micro_batch = config.micro_batch;
  sharding.seq_len = config.seq_len;
  sharding.expert_imbalance = config.expert_imbalance;
  sharding.flash_attention = config.flash_attention;
  return sharding;
}

LayerTable::LayerTable(const std::array<std::vector<double>, kLayerColumns>& values, std::vector<double> output_bytes,
                       std::vector<double> working_bytes, std::vector<NetworkLevel> levels, double tied_head_params)
    : layers_(static_cast<int>(output_bytes.size())),
      output_bytes_(std::move(output_bytes)),
      tied_head_params_(tied_head_params) {
  const std::size_t n = static_cast<std::size_t>(layers_);
  prefix_.assign(static_cast<std::size_t>(kLayerColumns) * (n + 1), 0.0);
  for (std::size_t c = 0; c < static_cast<std::size_t>(kLayerColumns); ++c)
    for (std::size_t i = 0; i < n; ++i) prefix_[c * (n + 1) + i + 1] = prefix_[c * (n + 1) + i] + values[c][i];
  // Row k holds n - 2^k + 1 maxima; rows are n apart so a row is found by k * n.
  const auto rows = static_cast<std::size_t>(working_table_rows(layers_));
  working_max_.assign(rows * n, 0.0);
  std::copy(working_bytes.begin(), working_bytes.end(), working_max_.begin());
  for (std::size_t row = 1; row < rows; ++row) {
    const std::size_t half = std::size_t{1} << (row - 1);
    for (std::size_t i = 0; i + 2 * half <= n; ++i)
      working_max_[row * n + i] = std::max(working_max_[(row - 1) * n + i], working_max_[(row - 1) * n + i + half]);
  }
  for (const NetworkLevel& level : levels) {
    level_latency_s_.push_back(level.latency_s);
    level_bandwidth_Bps_.push_back(effective_bandwidth(level));
  }
}

LayerTableView LayerTable::view() const {
  LayerTableView view;
  view.layers = layers_;
  view.prefix = prefix_.data();
  view.working = working_max_.data();
  view.output_bytes = output_bytes_.data();
  view.levels = static_cast<int>(level_latency_s_.size());
  view.level_latency_s = level_latency_s_.data();
  view.level_bandwidth_Bps = level_bandwidth_Bps_.data();
  view.tied_head_params = tied_head_params_;
  return view;
}

namespace {

double gemms_time(const GpuSpec& gpu, const std::vector<LayerWork::Gemm>& gemms) {
  double time = 0;
  for (const LayerWork::Gemm& gemm : gemms) time += gemm.count * matmul_time(gpu, gemm.flops);
  return time;
}

void set(std::array<std::vector<double>, kLayerColumns>& values, LayerColumn column, std::size_t layer, double value) {
  values[static_cast<std::size_t>(column)][layer] = value;
}

}  // namespace

LayerTable build_layer_table(const ModelSpec& model, const ClusterSpec& cluster, const LayerTableConfig& config) {
  const std::size_t layers = static_cast<std::size_t>(model.num_layers) + 2;
  std::array<std::vector<double>, kLayerColumns> values;
  for (auto& column : values) column.assign(layers, 0.0);
  std::vector<double> output_bytes(layers, 0.0);
  std::vector<double> working_bytes(layers, 0.0);

  const Sharding sharding = layer_sharding(config);

  const GpuSpec& gpu = cluster.gpu;
  // One TP "all-reduce unit": an all-reduce, or with sp an all-gather plus a reduce-scatter.
  auto tp_unit = [&](double bytes) {
    if (config.sp) return all_gather_time(cluster, config.tp_group, bytes) + reduce_scatter_time(cluster, config.tp_group, bytes);
    return all_reduce_time(cluster, config.tp_group, bytes);
  };
  auto all_to_all = [&](double bytes) {
    if (config.a2a == AllToAllAlgorithm::Fast)
      return all_to_all_fast_time(cluster, config.ep_group, bytes, config.expert_imbalance);
    return all_to_all_fanout_time(cluster, config.ep_group, bytes, config.expert_imbalance);
  };

  for (std::size_t i = 0; i < layers; ++i) {
    const LayerWork work = layer_work(model, static_cast<int>(i), sharding);
    const bool block = layer_kind(model, static_cast<int>(i)) == LayerKind::DenseBlock ||
                       layer_kind(model, static_cast<int>(i)) == LayerKind::MoeBlock;
    const double attention_fw = gemms_time(gpu, work.attention_gemms) + hbm_time(gpu, work.attention_hbm_bytes);
    const double other_fw = gemms_time(gpu, work.gemms) + hbm_time(gpu, work.hbm_bytes);
    const double forward = attention_fw + other_fw;
    // Data and weight gradients: two GEMMs per forward GEMM and twice the
    // traffic; a fused attention core also recomputes its scores.
    const double backward = 2 * other_fw + work.attention_backward_factor * attention_fw;

    const double tp_one = tp_unit(work.tp_bytes);
    const double tp_fw = work.tp_collectives_forward * tp_one;
    const double tp_bw = work.tp_collectives_backward * tp_one;
    // Ring attention: cp-1 steps pass K and V (backward: also dK and dV),
    // hidden behind the attention core as far as it lasts.
    double cp_fw = 0, cp_bw = 0;
    if (config.cp > 1 && block) {
      const double step = nestfast::p2p_time(cluster, config.cp_group.level(), work.cp_kv_bytes);
      cp_fw = std::max(0.0, (config.cp - 1) * step - attention_fw);
      cp_bw = std::max(0.0, 2 * (config.cp - 1) * step - 2 * attention_fw);
    }
    const double ep_one = work.ep_all_to_alls_forward > 0 ? all_to_all(work.ep_bytes) : 0.0;
    const double ep_fw = work.ep_all_to_alls_forward * ep_one;
    const double ep_bw = ep_fw;

    set(values, LayerColumn::ForwardCompute, i, forward);
    set(values, LayerColumn::ForwardTp, i, tp_fw);
    set(values, LayerColumn::ForwardCp, i, cp_fw);
    set(values, LayerColumn::ForwardEp, i, ep_fw);
    set(values, LayerColumn::BackwardCompute, i, backward);
    set(values, LayerColumn::BackwardTp, i, tp_bw);
    set(values, LayerColumn::BackwardCp, i, cp_bw);
    set(values, LayerColumn::BackwardEp, i, ep_bw);
    set(values, LayerColumn::RecomputeSelective, i, block && !config.flash_attention ? attention_fw : 0.0);
    set(values, LayerColumn::RecomputeFull, i, block ? forward + tp_fw + cp_fw + ep_fw : 0.0);
    set(values, LayerColumn::DenseParams, i, work.dense_params);
    set(values, LayerColumn::ExpertParams, i, work.expert_params);
    set(values, LayerColumn::StashNone, i, work.stash_bytes[0]);
    set(values, LayerColumn::StashSelective, i, work.stash_bytes[1]);
    set(values, LayerColumn::StashFull, i, work.stash_bytes[2]);
    set(values, LayerColumn::ModelFlops, i, work.model_flops);
    set(values, LayerColumn::RecomputeSelectiveFlops, i, work.selective_recompute_flops);
    set(values, LayerColumn::RecomputeFullFlops, i, work.full_recompute_flops);
    output_bytes[i] = work.output_bytes;
    working_bytes[i] = work.working_bytes;
  }
  const double tied_head_params =
      model.tied_embeddings ? static_cast<double>(model.vocab) * model.hidden / config.tp : 0.0;
  return LayerTable(values, std::move(output_bytes), std::move(working_bytes), cluster.levels, tied_head_params);
}

}  // namespace nestfast
