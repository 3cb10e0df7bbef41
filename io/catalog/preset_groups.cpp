#include "io/catalog/preset_groups.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/catalog_types.hpp"
#include "io/catalog/h5_attributes.hpp"
#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {
namespace {

// The attributes of /models/<name>, in one list for writing and reading.
template <class Model, class Visit>
void visit_model(Model& model, Visit&& visit) {
  visit("name", model.name);
  visit("source", model.source);
  visit("num_layers", model.num_layers);
  visit("hidden", model.hidden);
  visit("ffn_hidden", model.ffn_hidden);
  visit("heads", model.heads);
  visit("kv_heads", model.kv_heads);
  visit("head_dim", model.head_dim);
  visit("vocab", model.vocab);
  visit("seq_len", model.seq_len);
  visit("mlp", model.mlp);
  visit("tied_embeddings", model.tied_embeddings);
  visit("normalization", model.normalization);
  visit("position_embedding", model.position_embedding);
  visit("linear_bias", model.linear_bias);
  visit("causal", model.causal);
  visit("dropout", model.dropout);
  visit("dtype_bytes", model.dtype_bytes);
  visit("attention", model.attention);
  visit("mla_q_lora_rank", model.mla.q_lora_rank);
  visit("mla_kv_lora_rank", model.mla.kv_lora_rank);
  visit("mla_qk_nope_head_dim", model.mla.qk_head_dim);
  visit("mla_qk_rope_head_dim", model.mla.qk_rope_head_dim);
  visit("mla_v_head_dim", model.mla.v_head_dim);
  visit("moe_num_experts", model.moe.num_experts);
  visit("moe_top_k", model.moe.top_k);
  visit("moe_expert_ffn_hidden", model.moe.expert_ffn_hidden);
  visit("moe_shared_experts", model.moe.shared_experts);
  visit("moe_first_dense_layers", model.moe.first_dense_layers);
  visit("moe_layer_interval", model.moe.layer_interval);
  visit("moe_router_score", model.moe.router.score);
  visit("moe_router_expert_bias", model.moe.router.expert_bias);
  visit("moe_router_topk_scaling", model.moe.router.topk_scaling);
  visit("moe_router_groups", model.moe.router.groups);
  visit("moe_router_group_topk", model.moe.router.group_topk);
  visit("moe_router_balance", model.moe.router.balance);
  visit("moe_router_balance_coeff", model.moe.router.balance_coeff);
  visit("mtp_layers", model.mtp_layers);
}

// The attributes of /clusters/<name> (the GPU's scalars).
template <class Cluster, class Visit>
void visit_cluster(Cluster& cluster, Visit&& visit) {
  visit("name", cluster.name);
  visit("source", cluster.source);
  visit("gpu_name", cluster.gpu.name);
  visit("gpu_source", cluster.gpu.source);
  visit("gpu_hbm_bytes", cluster.gpu.hbm_bytes);
  visit("gpu_hbm_bandwidth_Bps", cluster.gpu.hbm_bandwidth_Bps);
  visit("gpu_peak_flops_bf16", cluster.gpu.peak_flops_bf16);
  visit("gpu_peak_flops_fp8", cluster.gpu.peak_flops_fp8);
  visit("gpu_peak_flops_fp32", cluster.gpu.peak_flops_fp32);
  visit("gpu_hbm_efficiency", cluster.gpu.hbm_efficiency);
  visit("gpu_fused_attention_efficiency_forward", cluster.gpu.fused_attention_efficiency_forward);
  visit("gpu_fused_attention_efficiency_backward", cluster.gpu.fused_attention_efficiency_backward);
  visit("gpu_kernel_overhead_s", cluster.gpu.kernel_overhead_s);
  visit("gpu_overlap_slowdown", cluster.gpu.overlap_slowdown);
  visit("deepep", cluster.deepep);
  visit("deepep_source", cluster.deepep_source);
}

constexpr const char* kClusterUnits =
    "gpu_*_bytes: bytes; *_Bps: bytes/s (per device and direction for the levels); gpu_peak_flops_*: FLOP/s; "
    "gpu_hbm_efficiency: reachable fraction of gpu_hbm_bandwidth_Bps; gpu_fused_attention_efficiency_*: fraction of "
    "peak bf16 the fused attention kernel reaches; gpu_kernel_overhead_s: s per kernel; gpu_overlap_slowdown: fraction "
    "of its speed a compute kernel loses beside a communication kernel; deepep: where DeepEP runs (none, intranode, "
    "internode); latency_s: s; levels innermost first "
    "(level 0 = inside a node), group_size = children per group (0 = unbounded); the matmul curve: a GEMM of "
    "gpu_matmul_flops FLOPs reaches gpu_matmul_efficiency x peak bf16, interpolated in log(flops)";

struct AttributeWriter {
  hid_t group;
  void operator()(const char* name, const std::string& value) const { write_attribute(group, name, value); }
  void operator()(const char* name, int value) const { write_attribute(group, name, value); }
  void operator()(const char* name, std::uint64_t value) const { write_attribute(group, name, value); }
  void operator()(const char* name, double value) const { write_attribute(group, name, value); }
  void operator()(const char* name, bool value) const { write_attribute(group, name, static_cast<int>(value)); }
  void operator()(const char* name, MlpKind value) const {
    write_attribute(group, name, value == MlpKind::Swiglu ? "swiglu" : "gelu");
  }
  void operator()(const char* name, Normalization value) const {
    write_attribute(group, name, value == Normalization::RmsNorm ? "rmsnorm" : "layernorm");
  }
  void operator()(const char* name, PositionEmbedding value) const {
    write_attribute(group, name, value == PositionEmbedding::Rope ? "rope" : "learned");
  }
  void operator()(const char* name, AttentionKind value) const {
    write_attribute(group, name, value == AttentionKind::MultiLatent ? "mla" : "standard");
  }
  void operator()(const char* name, RouterScore value) const {
    write_attribute(group, name, value == RouterScore::Sigmoid ? "sigmoid" : "softmax");
  }
  void operator()(const char* name, RouterBalance value) const {
    write_attribute(group, name, value == RouterBalance::SeqAuxLoss ? "seq_aux_loss" : "aux_loss");
  }
  void operator()(const char* name, DeepEpSupport value) const { write_attribute(group, name, to_string(value)); }
};

struct AttributeReader {
  hid_t group;
  const std::string& where;
  void require(const char* name) const {
    if (!has_attribute(group, name)) throw std::invalid_argument(where + ": attribute " + name + " is missing");
  }
  void operator()(const char* name, std::string& value) const {
    require(name);
    value = read_string_attribute(group, name);
  }
  void operator()(const char* name, int& value) const {
    require(name);
    value = static_cast<int>(read_i64_attribute(group, name));
  }
  void operator()(const char* name, std::uint64_t& value) const {
    require(name);
    value = read_u64_attribute(group, name);
  }
  void operator()(const char* name, double& value) const {
    require(name);
    value = read_double_attribute(group, name);
  }
  void operator()(const char* name, bool& value) const {
    require(name);
    value = read_i64_attribute(group, name) != 0;
  }
  void operator()(const char* name, MlpKind& value) const {
    value = choice(name, "swiglu", "gelu") ? MlpKind::Swiglu : MlpKind::Gelu;
  }
  void operator()(const char* name, Normalization& value) const {
    value = choice(name, "rmsnorm", "layernorm") ? Normalization::RmsNorm : Normalization::LayerNorm;
  }
  void operator()(const char* name, PositionEmbedding& value) const {
    value = choice(name, "rope", "learned") ? PositionEmbedding::Rope : PositionEmbedding::LearnedAbsolute;
  }
  void operator()(const char* name, AttentionKind& value) const {
    value = choice(name, "mla", "standard") ? AttentionKind::MultiLatent : AttentionKind::Standard;
  }
  void operator()(const char* name, RouterScore& value) const {
    value = choice(name, "sigmoid", "softmax") ? RouterScore::Sigmoid : RouterScore::Softmax;
  }
  void operator()(const char* name, RouterBalance& value) const {
    value = choice(name, "seq_aux_loss", "aux_loss") ? RouterBalance::SeqAuxLoss : RouterBalance::AuxLoss;
  }
  void operator()(const char* name, DeepEpSupport& value) const {
    require(name);
    value = parse_deepep_support(read_string_attribute(group, name), where + ": " + name);
  }
  // True for `first`, false for `second`, anything else is a damaged catalog.
  bool choice(const char* name, const char* first, const char* second) const {
    require(name);
    const std::string text = read_string_attribute(group, name);
    if (text != first && text != second) {
      throw std::invalid_argument(where + ": " + name + " '" + text + "' is not " + first + " or " + second);
    }
    return text == first;
  }
};

H5Handle collective_transfer() {
  H5Handle transfer = h5_plist(H5Pcreate(H5P_DATASET_XFER), "creating transfer properties");
  h5_check(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE), "selecting collective I/O");
  return transfer;
}

// A small 1-D dataset written by `root` (the others take part with empty
// selections), with its unit as an attribute.
void write_small_dataset(hid_t parent, const char* name, hid_t type, std::size_t count, const void* data, bool root,
                         const char* unit) {
  const hsize_t dims = std::max<std::size_t>(count, 1);
  const H5Handle space = h5_space(H5Screate_simple(1, &dims, nullptr), std::string("creating the space of ") + name);
  const H5Handle dataset = h5_dataset(H5Dcreate2(parent, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                      std::string("creating ") + name);
  write_attribute(dataset, "unit", unit);
  const H5Handle memory_space = h5_space(H5Screate_simple(1, &dims, nullptr), "creating a memory space");
  if (!root || count == 0) {
    H5Sselect_none(space);
    H5Sselect_none(memory_space);
  }
  const H5Handle transfer = collective_transfer();
  h5_check(H5Dwrite(dataset, type, memory_space, space, transfer, data), std::string("writing ") + name);
}

// `count` values of T (the buffer holds at least one element, as written).
template <class T>
std::vector<T> read_small_dataset(hid_t group, const char* name, hid_t type, std::size_t count, const std::string& where) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0) throw std::invalid_argument(where + ": dataset " + name + " is missing");
  const H5Handle dataset = h5_dataset(H5Dopen2(group, name, H5P_DEFAULT), where + ": opening " + name);
  // An empty dataset was stored with one element (of kNameChars chars for the names).
  std::vector<T> values(std::max<std::size_t>(count, sizeof(T) == 1 ? kNameChars : 1));
  h5_check(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), where + ": reading " + name);
  values.resize(count);
  return values;
}

}  // namespace

void write_model_group(hid_t parent, const ModelSpec& model) {
  const std::string name = preset_link_name(model.name);
  const H5Handle group = h5_group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating /models/" + name);
  visit_model(model, AttributeWriter{group});
}

ModelSpec read_model_group(hid_t group, const std::string& where) {
  ModelSpec model;
  visit_model(model, AttributeReader{group, where});
  return model;
}

void write_cluster_group(hid_t parent, const ClusterSpec& cluster, bool root) {
  const std::string name = preset_link_name(cluster.name);
  const H5Handle group = h5_group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating /clusters/" + name);
  visit_cluster(cluster, AttributeWriter{group});
  write_attribute(group, "units", kClusterUnits);
  const std::size_t levels = cluster.levels.size();
  write_attribute(group, "level_count", static_cast<std::uint64_t>(levels));
  std::vector<std::int32_t> group_size(levels);
  std::vector<double> bandwidth(levels), latency(levels), oversubscription(levels), level_efficiency(levels);
  std::vector<char> names(levels * kNameChars, '\0');
  for (std::size_t l = 0; l < levels; ++l) {
    const NetworkLevel& level = cluster.levels[l];
    group_size[l] = level.group_size;
    bandwidth[l] = level.bandwidth_Bps;
    latency[l] = level.latency_s;
    oversubscription[l] = level.oversubscription;
    level_efficiency[l] = level.efficiency;
    std::strncpy(&names[l * kNameChars], level.name.c_str(), kNameChars - 1);
  }
  const H5Handle name_type = fixed_string_type(kNameChars);
  write_small_dataset(group, "level_name", name_type, levels, names.data(), root, "");
  write_small_dataset(group, "group_size", H5T_NATIVE_INT32, levels, group_size.data(), root, "1");
  write_small_dataset(group, "bandwidth_Bps", H5T_NATIVE_DOUBLE, levels, bandwidth.data(), root,
                      "bytes/s per device and direction");
  write_small_dataset(group, "latency_s", H5T_NATIVE_DOUBLE, levels, latency.data(), root, "s");
  write_small_dataset(group, "oversubscription", H5T_NATIVE_DOUBLE, levels, oversubscription.data(), root, "1");
  write_small_dataset(group, "efficiency", H5T_NATIVE_DOUBLE, levels, level_efficiency.data(), root,
                      "reachable fraction of bandwidth_Bps (effective = bandwidth_Bps * efficiency / oversubscription)");

  const std::size_t points = cluster.gpu.matmul_efficiency.size();
  write_attribute(group, "gpu_matmul_points", static_cast<std::uint64_t>(points));
  std::vector<double> flops(points), efficiency(points);
  for (std::size_t i = 0; i < points; ++i) {
    flops[i] = cluster.gpu.matmul_efficiency[i].flops;
    efficiency[i] = cluster.gpu.matmul_efficiency[i].efficiency;
  }
  write_small_dataset(group, "gpu_matmul_flops", H5T_NATIVE_DOUBLE, points, flops.data(), root, "FLOP");
  write_small_dataset(group, "gpu_matmul_efficiency", H5T_NATIVE_DOUBLE, points, efficiency.data(), root,
                      "fraction of gpu_peak_flops_bf16");
}

ClusterSpec read_cluster_group(hid_t group, const std::string& where) {
  ClusterSpec cluster;
  const AttributeReader reader{group, where};
  visit_cluster(cluster, reader);
  std::uint64_t levels = 0;
  std::uint64_t points = 0;
  reader("level_count", levels);
  reader("gpu_matmul_points", points);
  const H5Handle name_type = fixed_string_type(kNameChars);
  // One element of level_name is a fixed string of kNameChars chars.
  const auto name_text = read_small_dataset<char>(group, "level_name", name_type, levels * kNameChars, where);
  const auto group_size = read_small_dataset<std::int32_t>(group, "group_size", H5T_NATIVE_INT32, levels, where);
  const auto bandwidth = read_small_dataset<double>(group, "bandwidth_Bps", H5T_NATIVE_DOUBLE, levels, where);
  const auto latency = read_small_dataset<double>(group, "latency_s", H5T_NATIVE_DOUBLE, levels, where);
  const auto oversubscription = read_small_dataset<double>(group, "oversubscription", H5T_NATIVE_DOUBLE, levels, where);
  const auto efficiency_of_level = read_small_dataset<double>(group, "efficiency", H5T_NATIVE_DOUBLE, levels, where);
  for (std::size_t l = 0; l < levels; ++l) {
    NetworkLevel level;
    level.name = std::string(&name_text[l * kNameChars], strnlen(&name_text[l * kNameChars], kNameChars));
    level.group_size = group_size[l];
    level.bandwidth_Bps = bandwidth[l];
    level.latency_s = latency[l];
    level.oversubscription = oversubscription[l];
    level.efficiency = efficiency_of_level[l];
    cluster.levels.push_back(level);
  }
  const auto flops = read_small_dataset<double>(group, "gpu_matmul_flops", H5T_NATIVE_DOUBLE, points, where);
  const auto efficiency = read_small_dataset<double>(group, "gpu_matmul_efficiency", H5T_NATIVE_DOUBLE, points, where);
  for (std::size_t i = 0; i < points; ++i) cluster.gpu.matmul_efficiency.push_back({flops[i], efficiency[i]});
  return cluster;
}

}  // namespace nestfast::io
