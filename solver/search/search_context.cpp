#include "solver/search/search_context.hpp"

#include <algorithm>

#include "solver/search/pipeline_time.hpp"

namespace nestfast::search {
namespace {

template <class... Values>
std::string join(const Values&... values) {
  std::string key;
  ((key += std::to_string(values), key += '/'), ...);
  return key;
}

std::string layout_key(const DpInstance& s) {
  std::string key = join(s.tp, s.cp, s.ep, s.expert_tp, s.pp, s.dp, static_cast<int>(s.framework));
  for (ParallelDim dim : s.placement) key += std::to_string(static_cast<int>(dim));
  return key;
}

std::string table_key(const LayerTableConfig& config) {
  std::string key = join(config.tp, config.cp, config.ep, config.etp, config.sp ? 1 : 0, config.micro_batch, config.seq_len,
                         static_cast<int>(config.a2a), config.expert_imbalance, static_cast<int>(config.attention), config.causal ? 1 : 0,
                         config.tp_comm_overlap ? 1 : 0, config.moe_a2a_overlap ? 1 : 0, config.moe_shared_overlap ? 1 : 0,
                         config.moe_dispatch_wgrad_overlap ? 1 : 0,
                         config.grad_reduce_bytes_per_param, config.recompute_modules);
  for (const GroupShape* group : {&config.tp_group, &config.cp_group, &config.ep_group, &config.dense_dp_group,
                                  &config.expert_dp_group}) {
    key += '|';
    for (int fanout : group->fanout) key += join(fanout);
  }
  return key;
}

}  // namespace

LayerTable compute_only_table(const SolveProblem& problem, const DpInstance& instance) {
  LayerTableConfig config;
  config.tp = instance.tp;
  config.cp = instance.cp;
  config.ep = instance.ep;
  config.etp = instance.expert_tp;
  config.sp = instance.sp != 0 && instance.tp > 1;
  config.micro_batch = instance.micro_batch;
  config.seq_len = problem.seq_len > 0 ? problem.seq_len : problem.model.seq_len;
  config.tp_group.fanout = {instance.tp};
  config.cp_group.fanout = {instance.cp};
  config.ep_group.fanout = {instance.ep};
  config.a2a = plan_all_to_all(instance.framework, problem.a2a);
  config.expert_imbalance = problem.expert_imbalance;
  config.attention = plan_attention(instance.framework, problem.attention, instance.cp);
  config.causal = problem.model.causal;
  config.grad_reduce_bytes_per_param = grad_bytes_per_param(problem.grad_reduce);
  return build_layer_table(problem.model, problem.cluster, config);
}

double sync_floor(const ReplicaContext& replicas, const LayerTable& table, int pp) {
  StageFootprint least;
  least.dense_params = table.sum(LayerColumn::DenseParams, 0, table.layers() - 1) / pp;
  // Every rank's first layer exposes its own bucket: at least the smallest one.
  least.grad_all_reduce_first_s = least.grad_reduce_scatter_first_s = least.param_gather_first_s = kDpInfinity;
  for (int layer = 0; layer < table.layers(); ++layer) {
    least.grad_all_reduce_first_s = std::min(least.grad_all_reduce_first_s, table.value(LayerColumn::GradAllReduce, layer));
    least.grad_reduce_scatter_first_s =
        std::min(least.grad_reduce_scatter_first_s, table.value(LayerColumn::GradReduceScatter, layer));
    least.param_gather_first_s = std::min(least.param_gather_first_s, table.value(LayerColumn::ParamAllGather, layer));
  }
  return sync_time(replicas, least).total_s() * (1 - 1e-9);
}

double pipeline_floor(const SolveProblem& problem, const DpInstance& instance, const LayerTable& table) {
  const int chain = table.layers();
  const double total = table.sum(LayerColumn::ForwardCompute, 0, chain - 1) +
                       table.sum(LayerColumn::BackwardCompute, 0, chain - 1);
  double largest = 0;
  for (int layer = 0; layer < chain; ++layer) {
    largest = std::max(largest, table.value(LayerColumn::ForwardCompute, layer) +
                                    table.value(LayerColumn::BackwardCompute, layer));
  }
  const double stage_floor = std::max(total / instance.pp, largest);
  const int micro_batches = problem.global_batch / (instance.dp * instance.micro_batch);
  return pipeline_time(micro_batches, instance.pp, instance.vpp, stage_floor).total_s() * (1 - 1e-9);
}

double memory_floor(const SolveProblem& problem, const DpInstance& instance, const LayerTable& table) {
  // ZeRO sharding needs only the group sizes, which the degrees fix.
  ReplicaContext replicas;
  replicas.dense_dp_size = instance.dp * instance.cp;
  replicas.expert_dp_size = execution_skeleton(problem, instance).expert_dp_size();
  replicas.zero_stage = instance.zero_stage;
  replicas.state_bytes_per_param = optimizer_state_bytes_per_param(problem.optimizer);
  replicas.grad_bytes_per_param = grad_bytes_per_param(problem.grad_reduce);
  replicas.step_grad_copy_bytes_per_param = step_grad_copy_bytes_per_param(problem.grad_reduce);
  const int last = table.layers() - 1;
  StageFootprint dense_share;
  dense_share.dense_params = table.sum(LayerColumn::DenseParams, 0, last) / instance.pp;
  StageFootprint expert_share;
  expert_share.expert_params = table.sum(LayerColumn::ExpertParams, 0, last) / instance.pp;
  double floor = std::max(stage_memory(replicas, dense_share, 0).total_bytes(),
                          stage_memory(replicas, expert_share, 0).total_bytes());
  for (int layer = 0; layer <= last; ++layer) {
    StageFootprint alone;
    alone.dense_params = table.value(LayerColumn::DenseParams, layer);
    alone.expert_params = table.value(LayerColumn::ExpertParams, layer);
    alone.working_bytes = table.max_working_bytes(layer, layer);
    floor = std::max(floor, stage_memory(replicas, alone, 0).total_bytes());
  }
  return floor * (1 - 1e-9);
}

SearchContext::SearchContext(const SolveProblem& problem, const std::vector<DpInstance>& instances)
    : problem_(problem), instances_(instances), lower_bound_(instances.size()), surely_infeasible_(instances.size()) {
  std::map<std::string, LayerTable> compute_tables;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const DpInstance& s = instances[i];
    const std::string key = join(s.tp, s.cp, s.ep, s.expert_tp, s.sp, s.micro_batch, static_cast<int>(s.framework));
    auto it = compute_tables.find(key);
    if (it == compute_tables.end()) it = compute_tables.emplace(key, compute_only_table(problem, s)).first;
    lower_bound_[i] = pipeline_floor(problem, s, it->second);
    surely_infeasible_[i] =
        memory_floor(problem, s, it->second) > static_cast<double>(problem.cluster.gpu.hbm_bytes) ? 1 : 0;
  }
}

PreparedInstance prepare_instance(const SolveProblem& problem, const DpInstance& instance) {
  const Execution skeleton = execution_skeleton(problem, instance);
  PreparedInstance prepared;
  prepared.layout = std::make_shared<const ExecutionLayout>(compute_layout(problem.cluster, skeleton));
  prepared.table = std::make_shared<const LayerTable>(build_layer_table(
      problem.model, problem.cluster, layer_table_config(problem.model, skeleton, *prepared.layout)));
  return prepared;
}

PreparedInstance SearchContext::prepare(std::size_t i) {
  const DpInstance& instance = instances_[i];
  const Execution skeleton = execution_skeleton(problem_, instance);
  PreparedInstance prepared;
  const std::string lkey = layout_key(instance);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = layouts_.find(lkey); it != layouts_.end()) prepared.layout = it->second;
  }
  if (!prepared.layout) {
    // Built outside the lock; if two threads race, both results are equal
    // and the first stored wins.
    auto built = std::make_shared<const ExecutionLayout>(compute_layout(problem_.cluster, skeleton));
    std::lock_guard<std::mutex> lock(mutex_);
    prepared.layout = layouts_.emplace(lkey, std::move(built)).first->second;
  }
  const LayerTableConfig config = layer_table_config(problem_.model, skeleton, *prepared.layout);
  const std::string tkey = table_key(config);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = tables_.find(tkey); it != tables_.end()) prepared.table = it->second;
  }
  if (!prepared.table) {
    auto built = std::make_shared<const LayerTable>(build_layer_table(problem_.model, problem_.cluster, config));
    std::lock_guard<std::mutex> lock(mutex_);
    prepared.table = tables_.emplace(tkey, std::move(built)).first->second;
  }
  return prepared;
}

}  // namespace nestfast::search
