#pragma once
// Non-intrusive Boost.Serialization of the job and of the specs it names
// (models, clusters: other components' plain structs), and of catalog plans.
// Every field is listed: a field added to one of these structs must be added here.
#include <boost/serialization/binary_object.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include "comm/exec/validation.hpp"
#include "io/catalog/catalog_rows.hpp"
#include "io/job/job_spec.hpp"
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace boost::serialization {

template <class Archive>
void serialize(Archive& ar, nestfast::io::SweepSpec& s, unsigned) {
  ar& s.models& s.clusters& s.gpus& s.global_batch& s.seq_len& s.line& s.models_line& s.clusters_line& s.gpus_line&
      s.global_batch_line& s.seq_len_line;
}

template <class Archive>
void serialize(Archive& ar, nestfast::Overlap& s, unsigned) {
  ar& s.grad_reduce& s.param_gather& s.tp_comm& s.p2p& s.moe_a2a& s.moe_shared& s.moe_dispatch_wgrad;
}

template <class Archive>
void serialize(Archive& ar, nestfast::io::SearchLimits& s, unsigned) {
  ar& s.tp& s.pp& s.ep& s.cp& s.mbs& s.zero& s.vpp& s.sp& s.recompute& s.recompute_layers& s.recompute_modules& s.framework& s.allow_fsdp_pp&
      s.attention& s.overlap& s.grad_reduce& s.a2a& s.top_k& s.baselines;
}

template <class Archive>
void serialize(Archive& ar, nestfast::comm::ValidationSettings& s, unsigned) {
  ar& s.enabled& s.all_plans& s.sizes& s.algos& s.skew& s.virtual_servers& s.nics_per_server& s.nic_GBps& s.fast_chunk_bytes&
      s.iterations& s.warmup& s.seed;
}

template <class Archive>
void serialize(Archive& ar, nestfast::comm::ValidationRequest& s, unsigned) {
  ar& s.plan_row& s.ep& s.experts& s.top_k& s.cluster& s.gpu_nic_Bps& s.gpu_scaleup_Bps;
}

template <class Archive>
void serialize(Archive& ar, nestfast::comm::ValidationResult& s, unsigned) {
  ar& s.plan_row& s.algo& s.picked& s.bytes_per_rank& s.servers& s.gpus_per_server& s.iterations& s.stages&
      s.time_min_us& s.time_avg_us& s.time_max_us& s.algbw_GBps& s.busbw_GBps& s.lower_bound_us& s.efficiency_pct&
      s.bound_violated& s.predicted_us& s.wrong_bytes& s.validated& s.first_bad;
}

template <class Archive>
void serialize(Archive& ar, nestfast::io::JobSpec& s, unsigned) {
  ar& s.name& s.out& s.sweeps& s.search& s.validate& s.source& s.text;
}

template <class Archive>
void serialize(Archive& ar, nestfast::RouterSpec& s, unsigned) {
  ar& s.score& s.expert_bias& s.topk_scaling& s.groups& s.group_topk& s.balance& s.balance_coeff;
}

template <class Archive>
void serialize(Archive& ar, nestfast::MoeSpec& s, unsigned) {
  ar& s.num_experts& s.top_k& s.expert_ffn_hidden& s.shared_experts& s.first_dense_layers& s.layer_interval& s.router;
}

template <class Archive>
void serialize(Archive& ar, nestfast::MlaSpec& s, unsigned) {
  ar& s.q_lora_rank& s.kv_lora_rank& s.qk_head_dim& s.qk_rope_head_dim& s.v_head_dim;
}

template <class Archive>
void serialize(Archive& ar, nestfast::ModelSpec& s, unsigned) {
  ar& s.name& s.source& s.num_layers& s.hidden& s.ffn_hidden& s.heads& s.kv_heads& s.head_dim& s.vocab& s.seq_len& s.mlp&
      s.tied_embeddings& s.normalization& s.position_embedding& s.linear_bias& s.causal& s.dropout& s.dtype_bytes&
      s.attention& s.mla& s.moe& s.mtp_layers;
}

template <class Archive>
void serialize(Archive& ar, nestfast::EfficiencyPoint& s, unsigned) {
  ar& s.flops& s.efficiency;
}

template <class Archive>
void serialize(Archive& ar, nestfast::GpuSpec& s, unsigned) {
  ar& s.name& s.source& s.hbm_bytes& s.hbm_bandwidth_Bps& s.peak_flops_bf16& s.peak_flops_fp8& s.peak_flops_fp32&
      s.hbm_efficiency& s.matmul_efficiency& s.fused_attention_efficiency_forward& s.fused_attention_efficiency_backward&
      s.kernel_overhead_s& s.overlap_slowdown;
}

template <class Archive>
void serialize(Archive& ar, nestfast::NetworkLevel& s, unsigned) {
  ar& s.name& s.group_size& s.bandwidth_Bps& s.latency_s& s.oversubscription& s.efficiency& s.efficiency_source;
}

template <class Archive>
void serialize(Archive& ar, nestfast::ClusterSpec& s, unsigned) {
  ar& s.name& s.source& s.gpu& s.levels& s.deepep& s.deepep_source;
}

// Rows are fixed-size records without pointers: stored as their bytes.
template <class Archive>
void serialize(Archive& ar, nestfast::io::PlanRow& row, unsigned) {
  ar& make_binary_object(&row, sizeof row);
}

template <class Archive>
void serialize(Archive& ar, nestfast::io::StageRow& row, unsigned) {
  ar& make_binary_object(&row, sizeof row);
}

template <class Archive>
void serialize(Archive& ar, nestfast::io::ValidationRow& row, unsigned) {
  ar& make_binary_object(&row, sizeof row);
}

template <class Archive>
void serialize(Archive& ar, nestfast::io::PlanEntry& plan, unsigned) {
  ar& plan.row& plan.stages;
}

}  // namespace boost::serialization
