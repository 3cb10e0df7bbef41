#include "solver/search/layer_table.hpp"

#include <algorithm>

#include "solver/cluster/gpu_throughput.hpp"
#include "solver/model/expert_routing.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/combined_1f1b.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/overlap.hpp"

namespace nestfast {

LayerTableConfig layer_table_config(const ModelSpec& model, const Execution& execution, const ExecutionLayout& layout) {
  LayerTableConfig config;
  config.tp = execution.tp;
  config.cp = execution.cp;
  config.ep = execution.ep;
  config.etp = execution.etp() == execution.tp ? 0 : execution.etp();
  config.sp = execution.sp && execution.tp > 1;
  config.micro_batch = execution.micro_batch;
  config.seq_len = execution.seq_len > 0 ? execution.seq_len : model.seq_len;
  config.tp_group = layout.tp_group;
  config.cp_group = layout.cp_group;
  config.ep_group = layout.ep_group;
  config.dense_dp_group = layout.dense_dp_group;
  config.expert_dp_group = layout.expert_dp_group;
  config.a2a = execution.a2a;
  config.expert_imbalance = execution.expert_imbalance;
  config.attention = execution.attention;
  config.causal = model.causal;
  config.recompute_modules = execution.recompute_modules;
  config.grad_reduce_bytes_per_param = grad_bytes_per_param(execution.grad_reduce);
  const Overlap overlap = effective_overlap(execution, model);
  config.tp_comm_overlap = overlap.tp_comm;
  config.moe_a2a_overlap = overlap.moe_a2a;
  config.moe_shared_overlap = overlap.moe_shared;
  config.moe_dispatch_wgrad_overlap = overlap.moe_dispatch_wgrad;
  return config;
}

Sharding layer_sharding(const LayerTableConfig& config) {
  Sharding sharding;
  sharding.tp = config.tp;
  sharding.cp = config.cp;
  sharding.ep = config.ep;
  sharding.etp = config.etp;
  sharding.sp = config.sp;
  sharding.micro_batch = config.micro_batch;
  sharding.seq_len = config.seq_len;
  sharding.expert_imbalance = config.expert_imbalance;
  sharding.flash_attention = config.attention == Attention::Flash;
  sharding.causal = config.causal;
  sharding.recompute_modules = config.recompute_modules;
  return sharding;
}

LayerTable::LayerTable(const std::array<std::vector<double>, kLayerColumns>& values, std::vector<double> output_bytes,
                       std::vector<double> working_bytes, std::vector<NetworkLevel> levels, double tied_head_params,
                       double overlap_slowdown, bool moe_a2a_overlap)
    : layers_(static_cast<int>(output_bytes.size())),
      output_bytes_(std::move(output_bytes)),
      tied_head_params_(tied_head_params),
      overlap_slowdown_(overlap_slowdown),
      moe_a2a_overlap_(moe_a2a_overlap) {
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
  view.overlap_slowdown = overlap_slowdown_;
  view.moe_a2a_overlap = moe_a2a_overlap_;
  return view;
}

namespace {

double gemms_time(const GpuSpec& gpu, const std::vector<LayerWork::Gemm>& gemms) {
  double time = 0;
  for (const LayerWork::Gemm& gemm : gemms) time += gemm.count * matmul_time(gpu, gemm.flops);
  return time;
}

// Where DeepEP sends a token inside the ep group: the experts of one member
// (ep rank r holds [r E / ep, (r + 1) E / ep)) and of one node (fanout[0]
// consecutive members).
DeepEpRouting deepep_routing(const MoeSpec& moe, const GroupShape& ep_group) {
  DeepEpRouting routing;
  const int ep = ep_group.size();
  const int per_member = moe.num_experts / ep;
  const int per_node = ep_group.fanout.empty() ? 1 : ep_group.fanout[0];
  for (int j = 0; j < ep / per_node; ++j)
    routing.node_hit.push_back(expert_range_hit_probability(moe, j * per_node * per_member, per_node * per_member));
  for (int r = 0; r < ep; ++r) routing.member_hit += expert_range_hit_probability(moe, r * per_member, per_member);
  routing.member_hit /= ep;
  return routing;
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
  const double slowdown = gpu.overlap_slowdown;
  // One TP "all-reduce unit": an all-reduce, or with sp an all-gather plus a reduce-scatter.
  auto tp_unit = [&](double bytes) {
    if (config.sp) return all_gather_time(cluster, config.tp_group, bytes) + reduce_scatter_time(cluster, config.tp_group, bytes);
    return all_reduce_time(cluster, config.tp_group, bytes);
  };
  const bool deepep = config.a2a == AllToAllAlgorithm::DeepEp && model.moe.enabled() && config.ep > 1;
  const DeepEpRouting routing = deepep ? deepep_routing(model.moe, config.ep_group) : DeepEpRouting{};
  // `bytes`: every (token, expert) copy a device sends (layer_work's ep_bytes);
  // DeepEP sends each token once per destination node and member instead.
  auto all_to_all = [&](double bytes) {
    switch (config.a2a) {
      case AllToAllAlgorithm::Fast: return all_to_all_fast_time(cluster, config.ep_group, bytes, config.expert_imbalance);
      case AllToAllAlgorithm::Fanout:
        return all_to_all_fanout_time(cluster, config.ep_group, bytes, config.expert_imbalance);
      case AllToAllAlgorithm::DeepEp:
        return all_to_all_deepep_time(cluster, config.ep_group, bytes / model.moe.top_k, routing, config.expert_imbalance);
    }
    return 0.0;
  };
  const FlatGroup dense_dp = flat_group(cluster, config.dense_dp_group);
  const FlatGroup expert_dp = flat_group(cluster, config.expert_dp_group);
  // A layer's DP collective: its dense and its expert parameters, each over its own group.
  auto dp_collective = [&](const LayerWork& work, double bytes_per_param, bool all_reduce) {
    auto on = [&](const FlatGroup& group, double params) {
      const double bytes = params * bytes_per_param;
      return all_reduce ? group_all_reduce_seconds(group, bytes) : group_half_seconds(group, bytes);
    };
    return on(dense_dp, work.dense_params) + on(expert_dp, work.expert_params);
  };

  // One row's seconds: `work` as priced, `block` when it holds transformer
  // blocks (the ring attention, selective and full recompute apply).
  struct RowPrice {
    double forward, backward, tp_fw, tp_bw, cp_fw, cp_bw, ep_fw, ep_bw, ep_overlapped, selective, full;
  };
  auto price = [&](const LayerWork& work, bool block) {
    const double gemms_fw = gemms_time(gpu, work.gemms);
    const double other_fw = gemms_fw + hbm_time(gpu, work.hbm_bytes);
    const double attention_hbm = hbm_time(gpu, work.attention_hbm_bytes);
    // Unfused: the attention GEMMs batched per (sequence, head), data and
    // weight gradients 2x; fused: one kernel at the fused-attention rate,
    // whose backward executes 2.5x the forward FLOPs (layer_work.hpp).
    const bool fused = work.fused_attention_flops > 0;
    const double attention_fw =
        fused ? fused_attention_time(gpu, work.fused_attention_flops, false) + attention_hbm
              : gemms_time(gpu, work.attention_gemms) + attention_hbm;
    const double attention_bw =
        fused ? fused_attention_time(gpu, 2.5 * work.fused_attention_flops, true) + 2 * attention_hbm
              : 2 * attention_fw;
    // Every kernel pays the fixed launch gap; the backward runs about two
    // kernels (data and weight gradients, or an op and its gradient) per
    // forward kernel.
    const double launches_fw = work.kernels * gpu.kernel_overhead_s;
    const double forward = attention_fw + other_fw + launches_fw;
    const double backward = 2 * other_fw + attention_bw + 2 * launches_fw;

    // One collective of each kind's unit (MLA's latents, the routed experts'
    // tokens over expert-tp), where the row has any.
    const double tp_one = tp_unit(work.tp_bytes);
    const bool latent = work.tp_latent_collectives_forward + work.tp_latent_collectives_backward > 0;
    const double latent_one = latent ? tp_unit(work.tp_latent_bytes) : 0.0;
    const bool expert = work.tp_expert_collectives_forward + work.tp_expert_collectives_backward > 0;
    const double expert_one = expert ? tp_unit(work.tp_expert_bytes) : 0.0;
    // --moe-shared-expert-overlap takes the shared experts' TP unit out of
    // TransformerEngine's linears (no userbuffer overlap, shared_experts.py
    // :163-175) onto their side stream: serial there, beside the all-to-alls.
    // One unit per MoE layer of the row (the head's row: one per MTP layer).
    const bool shared_side = config.moe_shared_overlap && work.ep_all_to_alls_forward > 0 && !work.shared_fc2.gemms.empty();
    const double moe_layers = work.ep_all_to_alls_forward / 2.0;  // each a dispatch and a combine
    const double shared_unit = shared_side ? moe_layers * tp_one : 0.0;
    double tp_fw = work.tp_collectives_forward * tp_one - shared_unit;
    double tp_bw = work.tp_collectives_backward * tp_one - shared_unit;
    if (latent) {
      tp_fw += work.tp_latent_collectives_forward * latent_one;
      tp_bw += work.tp_latent_collectives_backward * latent_one;
    }
    if (config.tp_comm_overlap) {
      // TransformerEngine's userbuffer overlap pipelines each all-gather /
      // reduce-scatter with the GEMM beside it in tp chunks (the backward
      // with the data- and weight-gradient GEMMs); the reduce-scatters'
      // last chunk has nothing after it to hide behind. Whole also where the
      // launch has more than one hardware queue (Megatron-FSDP, the A2A
      // overlap's 32): on Hopper with CUDA >= 12.3 TransformerEngine orders
      // the userbuffer kernel's launch before the GEMM's with an event
      // (CommOverlapCore's constructor, _comm_launch_event, and bulk_overlap's
      // wait on it, common/comm_gemm_overlap/comm_gemm_overlap.cpp at
      // TransformerEngine 015939ab), what one queue did. Megatron's warning
      // there (arguments.py:1456-1475) concerns the collectives outside
      // userbuffers, priced serial here.
      const double last_chunks_fw = 0.5 * tp_fw / config.tp;
      const double last_chunks_bw = 0.5 * tp_bw / config.tp;
      tp_fw = last_chunks_fw + exposed_seconds(tp_fw - last_chunks_fw, gemms_fw, slowdown);
      tp_bw = last_chunks_bw + exposed_seconds(tp_bw - last_chunks_bw, 2 * gemms_fw, slowdown);
    }
    tp_fw += shared_unit;
    tp_bw += shared_unit;
    const double tp_dense_fw = tp_fw;  // the TP units of tp_bytes and latents, as exposed
    const double tp_dense_bw = tp_bw;
    // The routed experts' all-gather and reduce-scatter over expert-tp run
    // in the token dispatcher, not in a TransformerEngine linear: never
    // userbuffer-overlapped (layer_work.cpp's moe_block_work).
    if (expert) {
      tp_fw += work.tp_expert_collectives_forward * expert_one;
      tp_bw += work.tp_expert_collectives_backward * expert_one;
    }
    // Ring attention: cp-1 steps pass K and V (backward: also dK and dV),
    // hidden behind the attention core as far as it lasts.
    double cp_fw = 0, cp_bw = 0;
    if (config.cp > 1 && block) {
      const double step = nestfast::p2p_time(cluster, config.cp_group.level(), work.cp_kv_bytes);
      cp_fw = exposed_seconds((config.cp - 1) * step, attention_fw, slowdown);
      cp_bw = exposed_seconds(2 * (config.cp - 1) * step, attention_bw, slowdown);
    }
    const double ep_one = work.ep_all_to_alls_forward > 0 ? all_to_all(work.ep_bytes) : 0.0;
    double ep_fw = work.ep_all_to_alls_forward * ep_one;
    double ep_bw = ep_fw;
    auto part_time = [&](const LayerWork::SidePart& part) {
      return gemms_time(gpu, part.gemms) + hbm_time(gpu, part.hbm_bytes) + part.kernels * gpu.kernel_overhead_s;
    };
    // Megatron's combined 1F1B runs each MoE layer's forward beside another
    // micro-batch's backward, node by node (combined_layer_pair_exposed):
    // the compute stream holds the layer's computation with its TP and CP
    // collectives, the routed experts' part between the dispatch and the
    // combine, the rest before. A backward (2x the forward, as `backward`
    // prices it) splits into weight gradients, a GEMM of each forward GEMM's
    // FLOPs, and data gradients, the rest.
    const double experts_wgrad = work.ep_all_to_alls_forward > 0 ? gemms_time(gpu, work.routed.gemms) : 0.0;
    double ep_overlapped = 0;
    if (work.ep_all_to_alls_forward > 0) {
      const double experts_fw = part_time(work.routed);
      const double pre_wgrad = gemms_fw - experts_wgrad;
      CombinedLayerPair pair;
      pair.pre_forward_s = (forward + tp_dense_fw + cp_fw - experts_fw) / moe_layers;
      pair.pre_wgrad_s = pre_wgrad / moe_layers;
      pair.pre_dgrad_s = (backward + tp_dense_bw + cp_bw - 2 * experts_fw - pre_wgrad) / moe_layers;
      pair.experts_forward_s = experts_fw / moe_layers;
      pair.experts_wgrad_s = experts_wgrad / moe_layers;
      pair.experts_dgrad_s = (2 * experts_fw - experts_wgrad) / moe_layers;
      pair.all_to_all_s = ep_one;
      const double exposed = moe_layers * combined_layer_pair_exposed(pair);
      ep_overlapped = exposed + slowdown * (ep_fw + ep_bw - exposed);
    }
    // --overlap-dispatch-backward-with-experts-wgrad: the routed experts'
    // weight gradients, delayed past their data gradients, run on their own
    // stream while the dispatch's backward all-to-all runs, and the layer's
    // backward waits for both (moe_layer.py:776-814 at Megatron-LM d98e8a64).
    // Per MoE layer: the row's experts_wgrad over its MoE layers.
    const double experts_wgrad_window =
        config.moe_dispatch_wgrad_overlap && work.ep_all_to_alls_forward > 0 ? experts_wgrad / moe_layers : 0.0;
    if (experts_wgrad_window > 0)
      ep_bw = moe_layers * (ep_one + exposed_seconds(ep_one, experts_wgrad_window, slowdown));
    if (shared_side) {
      // The side stream: the gather and fc1 with the activation beside the
      // dispatch, fc2 and the reduce-scatter beside the combine (without sp
      // no gather, an all-reduce after fc2); the backward mirrors it, each
      // all-to-all's gradient beside the gradients of the same part
      // (token_dispatcher.py:658-717, :858-873). The shared experts' compute
      // stays in `forward` / `backward`; the all-to-alls hide behind it.
      const double gather = config.sp ? all_gather_time(cluster, config.tp_group, work.tp_bytes) : 0.0;
      const double reduce = config.sp ? reduce_scatter_time(cluster, config.tp_group, work.tp_bytes)
                                      : all_reduce_time(cluster, config.tp_group, work.tp_bytes);
      const double fc1 = part_time(work.shared_fc1) / moe_layers, fc2 = part_time(work.shared_fc2) / moe_layers;
      ep_fw = moe_layers *
              (exposed_seconds(ep_one, gather + fc1, slowdown) + exposed_seconds(ep_one, fc2 + reduce, slowdown));
      // Each collective's gradient is its mirror: the gather's a reduce-scatter
      // (without sp the copy's an all-reduce), the reduce's a gather (or nothing).
      // The dispatch's gradient has the experts' weight gradients beside it
      // too where they are delayed (experts_wgrad_window).
      ep_bw = moe_layers * (exposed_seconds(ep_one, 2 * fc2 + gather, slowdown) +
                            exposed_seconds(ep_one, 2 * fc1 + reduce + experts_wgrad_window, slowdown));
    }
    // Selective: what the checkpointed modules run again before their
    // backward (layer_work's `selective`): the core attention's forward
    // (attention.py:1555 at Megatron-LM d98e8a64), a fused kernel's as well,
    // and under cp the ring with it; the other modules' GEMMs, memory-bound
    // ops and launches, and their collectives at the forward's price (the TP
    // ones and the all-to-alls as overlapped as the forward's).
    double selective = 0;
    if (block) {
      if (work.selective.attention_core) selective += attention_fw + cp_fw;
      selective += gemms_time(gpu, work.selective.gemms) + hbm_time(gpu, work.selective.hbm_bytes) +
                   work.selective.kernels * gpu.kernel_overhead_s;
      if (work.selective.tp_units + work.selective.tp_latent_units > 0) {
        // The shared experts' unit, on their side stream, runs again as
        // serial as in the forward (shared_side); the other units at the
        // mean exposure of the forward's others.
        const double shared_again = shared_side ? work.selective.tp_shared_units * tp_one : 0.0;
        const double units_fw =
            work.tp_collectives_forward * tp_one + work.tp_latent_collectives_forward * latent_one - shared_unit;
        const double again =
            work.selective.tp_units * tp_one + work.selective.tp_latent_units * latent_one - shared_again;
        selective += shared_again + (units_fw > 0 ? again * (tp_dense_fw - shared_unit) / units_fw : again);
      }
      if (work.selective.tp_expert_units > 0) selective += work.selective.tp_expert_units * expert_one;
      if (work.ep_all_to_alls_forward > 0) selective += work.selective.ep_all_to_alls * ep_fw / work.ep_all_to_alls_forward;
    }
    return RowPrice{forward, backward, tp_fw, tp_bw, cp_fw, cp_bw, ep_fw, ep_bw, ep_overlapped, selective,
                    block ? forward + tp_fw + cp_fw + ep_fw : 0.0};
  };

  for (std::size_t i = 0; i < layers; ++i) {
    const LayerWork work = layer_work(model, static_cast<int>(i), sharding);
    const LayerKind kind = layer_kind(model, static_cast<int>(i));
    // The head's row with MTP layers holds blocks too; full recompute runs
    // them again (multi_token_prediction.py:1705-1710, uniform method), not
    // the output layer.
    const bool mtp_head = kind == LayerKind::Head && model.mtp_layers > 0;
    RowPrice row = price(work, kind == LayerKind::DenseBlock || kind == LayerKind::MoeBlock || mtp_head);
    if (mtp_head) row.full = price(mtp_work(model, sharding), true).full;
    const auto& [forward, backward, tp_fw, tp_bw, cp_fw, cp_bw, ep_fw, ep_bw, ep_overlapped, selective, full] = row;

    set(values, LayerColumn::ForwardCompute, i, forward);
    set(values, LayerColumn::ForwardTp, i, tp_fw);
    set(values, LayerColumn::ForwardCp, i, cp_fw);
    set(values, LayerColumn::ForwardEp, i, ep_fw);
    set(values, LayerColumn::BackwardCompute, i, backward);
    set(values, LayerColumn::BackwardTp, i, tp_bw);
    set(values, LayerColumn::BackwardCp, i, cp_bw);
    set(values, LayerColumn::BackwardEp, i, ep_bw);
    set(values, LayerColumn::EpOverlapped, i, ep_overlapped);
    set(values, LayerColumn::GradAllReduce, i, dp_collective(work, config.grad_reduce_bytes_per_param, true));
    set(values, LayerColumn::GradReduceScatter, i, dp_collective(work, config.grad_reduce_bytes_per_param, false));
    set(values, LayerColumn::ParamAllGather, i, dp_collective(work, kWeightBytesPerParam, false));
    set(values, LayerColumn::RecomputeSelective, i, selective);
    set(values, LayerColumn::RecomputeFull, i, full);
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
  // Bucket by bucket: the backward frees layer i's gradients, and their
  // collective runs while layer i-1's backward computes; the forward needs
  // layer i's weights, gathered while layer i-1's forward computes; ZeRO-3's
  // backward gathers layer i's weights while layer i+1's backward computes.
  const auto& column = [&](LayerColumn c) -> std::vector<double>& { return values[static_cast<std::size_t>(c)]; };
  for (std::size_t i = 1; i < layers; ++i) {
    const double previous_backward = column(LayerColumn::BackwardCompute)[i - 1];
    const double previous_forward = column(LayerColumn::ForwardCompute)[i - 1];
    column(LayerColumn::GradAllReduceExposed)[i] =
        exposed_seconds(column(LayerColumn::GradAllReduce)[i], previous_backward, slowdown);
    column(LayerColumn::GradReduceScatterExposed)[i] =
        exposed_seconds(column(LayerColumn::GradReduceScatter)[i], previous_backward, slowdown);
    column(LayerColumn::ParamAllGatherExposed)[i] =
        exposed_seconds(column(LayerColumn::ParamAllGather)[i], previous_forward, slowdown);
  }
  for (std::size_t i = 0; i + 1 < layers; ++i) {
    column(LayerColumn::ParamAllGatherExposedBackward)[i] = exposed_seconds(
        column(LayerColumn::ParamAllGather)[i], column(LayerColumn::BackwardCompute)[i + 1], slowdown);
  }
  // One stage holding the whole chain keeps one embedding: the head's tied
  // output weights and the MTP layers' embedding copy are that one then.
  const double tied_head_params = ((model.tied_embeddings ? 1 : 0) + (model.mtp_layers > 0 ? 1 : 0)) *
                                  static_cast<double>(model.vocab) * model.hidden / config.tp;
  return LayerTable(values, std::move(output_bytes), std::move(working_bytes), cluster.levels, tied_head_params,
                    slowdown, config.moe_a2a_overlap);
}

}  // namespace nestfast
