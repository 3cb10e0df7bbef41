#include "io/catalog/catalog_types.hpp"

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <stdexcept>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/h5_attributes.hpp"

namespace nestfast::io {
namespace {

constexpr int kDeflateLevel = 4;
constexpr hsize_t kRowsPerChunk = 1024;

#define NESTFAST_FIELD(row, field, type, rule, unit, meaning) \
  RowField{#field, offsetof(row, field), FieldType::type, ValueRule::rule, unit, meaning}

const std::vector<RowField>& plan_fields() {
  static const std::vector<RowField> fields = {
      NESTFAST_FIELD(PlanRow, point_id, U64, Any, "1",
                     "sweep point (model, cluster, gpus, global_batch, seq_len) of the job"),
      NESTFAST_FIELD(PlanRow, model, Name, Name, "",
                     "model name; its hyperparameters are the attributes of /models/<model>"),
      NESTFAST_FIELD(PlanRow, cluster, Name, Name, "",
                     "cluster name; its GPU and network levels are in /clusters/<cluster>"),
      NESTFAST_FIELD(PlanRow, gpus, I32, Positive, "1", "devices the plan uses"),
      NESTFAST_FIELD(PlanRow, global_batch, I32, Positive, "1", "sequences per iteration"),
      NESTFAST_FIELD(PlanRow, seq_len, I32, Positive, "1", "tokens per sequence"),
      NESTFAST_FIELD(PlanRow, kind, Short, PlanKind, "",
                     "who chose the plan: nest (the level-wise DP; rank_k 0 = best), manual (Megatron-style), phaze "
                     "(level-blind DP), mcmc (seeded random walk at the DP's budget), exhaustive (every plan)"),
      NESTFAST_FIELD(PlanRow, rank_k, I32, Index, "1",
                     "nest: 0 = best plan, k = k-th alternative; 0 for the baselines"),
      NESTFAST_FIELD(PlanRow, feasible, I32, Flag, "",
                     "1: the plan fits in HBM and is priced; 0: no plan (times are 0)"),
      NESTFAST_FIELD(PlanRow, tp, I32, PositiveWhenFeasible, "1", "tensor-parallel degree"),
      NESTFAST_FIELD(PlanRow, cp, I32, PositiveWhenFeasible, "1", "context-parallel degree"),
      NESTFAST_FIELD(PlanRow, ep, I32, PositiveWhenFeasible, "1", "expert-parallel degree (a factor of dp)"),
      NESTFAST_FIELD(PlanRow, etp, I32, PositiveWhenFeasible, "1",
                     "expert tensor-parallel degree: tp, or 1 (whole experts; Megatron's --expert-tensor-parallel-size)"),
      NESTFAST_FIELD(PlanRow, pp, I32, PositiveWhenFeasible, "1", "pipeline-parallel degree (pipeline ranks)"),
      NESTFAST_FIELD(PlanRow, dp, I32, PositiveWhenFeasible, "1", "data-parallel degree; gpus = tp * cp * pp * dp"),
      NESTFAST_FIELD(PlanRow, sp, I32, Flag, "", "1: sequence parallelism on"),
      NESTFAST_FIELD(PlanRow, micro_batch, I32, PositiveWhenFeasible, "1", "sequences per micro-batch"),
      NESTFAST_FIELD(PlanRow, micro_batches, I32, PositiveWhenFeasible, "1",
                     "micro-batches per iteration and data-parallel replica"),
      NESTFAST_FIELD(PlanRow, zero_stage, I32, ZeroStage, "1", "ZeRO stage 0-3 over the data-parallel group"),
      NESTFAST_FIELD(PlanRow, vpp, I32, PositiveWhenFeasible, "1",
                     "model chunks per pipeline rank (1 = 1F1B, > 1 = interleaved 1F1B)"),
      NESTFAST_FIELD(PlanRow, recompute, Short, RecomputeSummary, "",
                     "activation recompute: none, selective, full, or mixed (per stage, see /stages)"),
      NESTFAST_FIELD(PlanRow, recompute_modules, Name, RecomputeModules, "",
                     "what selectively recomputed stages checkpoint (Megatron's --recompute-modules): core_attn, "
                     "layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts"),
      NESTFAST_FIELD(PlanRow, placement, Order, Placement, "",
                     "parallel dimensions onto the network levels, innermost first (ep = the ep factor of dp, "
                     "dp = the rest)"),
      NESTFAST_FIELD(PlanRow, optimizer, Short, Optimizer, "", "adam or sgd"),
      NESTFAST_FIELD(PlanRow, a2a, Short, AllToAll, "", "how MoE all-to-alls run and are priced: fast, fanout (NCCL, Megatron's alltoall dispatcher) or deepep (Megatron's flex dispatcher)"),
      NESTFAST_FIELD(PlanRow, framework, Short, Framework, "",
                     "megatron-core: Megatron-LM runs the plan as priced from megatron_args; nest: the NEST space "
                     "(any placement, ep out of dp, per-stage recompute), not runnable as priced"),
      NESTFAST_FIELD(PlanRow, attention, Short, Attention, "",
                     "attention priced: flash (fused) or unfused (Megatron's softmax)"),
      NESTFAST_FIELD(PlanRow, overlap, Order, Overlap, "",
                     "communication overlaps asked: all, none or some of grad,param,tp,p2p,a2a,shared,wgrad; those the plan can "
                     "run are priced and emitted (effective_overlap, query and solve --json: overlap_priced)"),
      NESTFAST_FIELD(PlanRow, grad_reduce, Short, GradReduce, "",
                     "gradients kept and reduced in fp32 or bf16 (Megatron-LM's --grad-reduce-in-bf16)"),
      NESTFAST_FIELD(PlanRow, megatron_args, Arguments, Text, "",
                     "the Megatron-LM argument line for the plan, as emitted"),
      NESTFAST_FIELD(PlanRow, megatron_environment, Environment, Text, "",
                     "the environment megatron_args needs (\"\" = none)"),
      NESTFAST_FIELD(PlanRow, moe_imbalance, F64, NonNegative, "1",
                     "tokens of the hottest expert device / the mean (1 = uniform)"),
      NESTFAST_FIELD(PlanRow, iteration_time_s, F64, PriceWhenFeasible, "s",
                     "predicted time of one training iteration"),
      NESTFAST_FIELD(PlanRow, tokens_per_s, F64, PriceWhenFeasible, "1/s", "tokens per second, all devices"),
      NESTFAST_FIELD(PlanRow, mfu_pct, F64, Percent, "%", "model FLOPs utilisation (no recompute) of peak bf16"),
      NESTFAST_FIELD(PlanRow, compute_s, F64, NonNegative, "s",
                     "of iteration_time_s on the bottleneck rank: forward + backward"),
      NESTFAST_FIELD(PlanRow, recompute_s, F64, NonNegative, "s", "of iteration_time_s: activation recompute"),
      NESTFAST_FIELD(PlanRow, tp_comm_s, F64, NonNegative, "s", "of iteration_time_s: tensor-parallel communication"),
      NESTFAST_FIELD(PlanRow, cp_comm_s, F64, NonNegative, "s", "of iteration_time_s: context-parallel communication"),
      NESTFAST_FIELD(PlanRow, ep_comm_s, F64, NonNegative, "s", "of iteration_time_s: MoE all-to-alls"),
      NESTFAST_FIELD(PlanRow, zero3_gather_s, F64, NonNegative, "s", "of iteration_time_s: ZeRO-3 weight gathers"),
      NESTFAST_FIELD(PlanRow, p2p_s, F64, NonNegative, "s", "of iteration_time_s: pipeline sends"),
      NESTFAST_FIELD(PlanRow, bubble_s, F64, NonNegative, "s", "of iteration_time_s: pipeline bubble"),
      NESTFAST_FIELD(PlanRow, dp_sync_s, F64, NonNegative, "s", "of iteration_time_s: gradient sync not overlapped"),
      NESTFAST_FIELD(PlanRow, optimizer_s, F64, NonNegative, "s", "of iteration_time_s: optimizer step"),
      NESTFAST_FIELD(PlanRow, memory_peak_bytes, U64, PositiveWhenFeasible, "bytes",
                     "largest memory of one device over the pipeline ranks"),
      NESTFAST_FIELD(PlanRow, hbm_bytes, U64, Any, "bytes", "HBM of one device"),
      // Within /stages: checked where the stages are read (CatalogReader::plan_records).
      NESTFAST_FIELD(PlanRow, stage_offset, U64, Any, "1", "first row of this plan's stages in /stages"),
      NESTFAST_FIELD(PlanRow, stage_count, U64, PositiveWhenFeasible, "1",
                     "rows of this plan in /stages (pp * vpp; 0 when infeasible)"),
  };
  return fields;
}

const std::vector<RowField>& stage_fields() {
  static const std::vector<RowField> fields = {
      NESTFAST_FIELD(StageRow, plan_row, U64, Any, "1", "row of the plan in /plans"),
      NESTFAST_FIELD(StageRow, stage, I32, Index, "1", "stage index in pipeline order"),
      NESTFAST_FIELD(StageRow, pipeline_rank, I32, Index, "1", "pipeline rank running the stage (stage % pp)"),
      NESTFAST_FIELD(StageRow, first_layer, I32, Index, "1",
                     "first layer, inclusive, in the chain 0 = embedding, 1..L = transformer blocks, L+1 = head"),
      NESTFAST_FIELD(StageRow, last_layer, I32, Index, "1", "last layer, inclusive (same chain)"),
      NESTFAST_FIELD(StageRow, devices, I32, Positive, "1", "devices running the stage (gpus / pp)"),
      NESTFAST_FIELD(StageRow, first_device, I32, Index, "1", "lowest device index of the stage"),
      NESTFAST_FIELD(StageRow, boundary_level, I32, Level, "1",
                     "network level (0 = innermost, index into /clusters/<cluster>/level_name) of the pipeline send "
                     "into this stage; -1 = none (the first stage, or both stages on one rank)"),
      NESTFAST_FIELD(StageRow, recompute_layers, I32, Index, "1",
                     "full recompute: 0 = every block of the stage, N > 0 = its first N blocks (block method)"),
      NESTFAST_FIELD(StageRow, recompute, Short, StageRecompute, "",
                     "activation recompute of the stage: none, selective or full"),
      NESTFAST_FIELD(StageRow, boundary_level_name, Name, Text, "", "name of boundary_level; empty when it is -1"),
      NESTFAST_FIELD(StageRow, forward_per_microbatch_s, F64, NonNegative, "s",
                     "forward compute + TP/CP/EP communication, per micro-batch on one device of the stage"),
      NESTFAST_FIELD(StageRow, backward_per_microbatch_s, F64, NonNegative, "s",
                     "backward + recompute + ZeRO-3 gathers, per micro-batch on one device of the stage"),
      NESTFAST_FIELD(StageRow, p2p_per_microbatch_s, F64, NonNegative, "s",
                     "pipeline send into the stage (activation in, its gradient back), per micro-batch"),
      NESTFAST_FIELD(StageRow, memory_bytes, U64, Any, "bytes",
                     "memory of one device of the stage's pipeline rank (all its chunks)"),
      NESTFAST_FIELD(StageRow, weights_bytes, U64, Any, "bytes", "of memory_bytes: weights"),
      NESTFAST_FIELD(StageRow, gradients_bytes, U64, Any, "bytes", "of memory_bytes: gradients"),
      NESTFAST_FIELD(StageRow, optimizer_bytes, U64, Any, "bytes", "of memory_bytes: optimizer state"),
      NESTFAST_FIELD(StageRow, activations_bytes, U64, Any, "bytes", "of memory_bytes: stashed activations"),
      NESTFAST_FIELD(StageRow, working_bytes, U64, Any, "bytes", "of memory_bytes: transient working set"),
  };
  return fields;
}

const std::vector<RowField>& validation_fields() {
  static const std::vector<RowField> fields = {
      NESTFAST_FIELD(ValidationRow, plan_row, U64, Any, "1", "row of the plan in /plans whose all-to-all ran"),
      NESTFAST_FIELD(ValidationRow, algo, Short, Name, "", "algorithm asked for: fast, mpi, pairwise, fanout or auto"),
      NESTFAST_FIELD(ValidationRow, picked, Short, Name, "", "algorithm that ran (auto: its choice)"),
      NESTFAST_FIELD(ValidationRow, bytes_per_rank, U64, Positive, "bytes", "bytes each rank sends"),
      NESTFAST_FIELD(ValidationRow, servers, I32, Positive, "1", "servers the ranks were grouped into"),
      NESTFAST_FIELD(ValidationRow, gpus_per_server, I32, Positive, "1", "ranks of the largest server"),
      NESTFAST_FIELD(ValidationRow, iterations, I32, Positive, "1", "timed iterations"),
      NESTFAST_FIELD(ValidationRow, stages, I32, Index, "1", "communication rounds of one exchange"),
      NESTFAST_FIELD(ValidationRow, time_min_us, F64, NonNegative, "us",
                     "fastest iteration (each iteration: the slowest rank)"),
      NESTFAST_FIELD(ValidationRow, time_avg_us, F64, NonNegative, "us", "mean iteration"),
      NESTFAST_FIELD(ValidationRow, time_max_us, F64, NonNegative, "us", "slowest iteration"),
      NESTFAST_FIELD(ValidationRow, algbw_GBps, F64, NonNegative, "GB/s",
                     "bytes_per_rank / time_avg_us (1 GB = 1e9 bytes)"),
      NESTFAST_FIELD(ValidationRow, busbw_GBps, F64, NonNegative, "GB/s",
                     "algbw_GBps * (ranks - 1) / ranks (nccl-tests' alltoall)"),
      NESTFAST_FIELD(ValidationRow, lower_bound_us, F64, NonNegative, "us",
                     "lower bound on the exchange time at the link rates the cluster declares (0: none declared)"),
      NESTFAST_FIELD(ValidationRow, efficiency_pct, F64, Efficiency, "%",
                     "100 * lower_bound_us / time_avg_us, at most 100; NaN: no bound, or an iteration beat it (the "
                     "declared rates are below what the links carry)"),
      NESTFAST_FIELD(ValidationRow, predicted_us, F64, NonNegative, "us",
                     "the solver's price of this all-to-all on the plan's cluster (0: none)"),
      NESTFAST_FIELD(ValidationRow, wrong_bytes, U64, Any, "bytes",
                     "bytes that arrived wrong (0 = every byte checked)"),
  };
  return fields;
}

#undef NESTFAST_FIELD

const char* table_meaning(RowTable table) {
  switch (table) {
    case RowTable::Plans: return "one row per plan of a sweep point: NEST's best and alternatives, then the baselines";
    case RowTable::Stages:
      return "one row per pipeline stage of every plan in /plans (see its stage_offset, stage_count)";
    case RowTable::Validation: return "one row per (plan, algorithm, size) of the all-to-alls run on the job's ranks";
  }
  throw std::logic_error("unknown row table");
}

}  // namespace

const std::vector<RowField>& row_fields(RowTable table) {
  switch (table) {
    case RowTable::Plans: return plan_fields();
    case RowTable::Stages: return stage_fields();
    case RowTable::Validation: return validation_fields();
  }
  throw std::logic_error("unknown row table");
}

std::size_t row_size(RowTable table) {
  switch (table) {
    case RowTable::Plans: return sizeof(PlanRow);
    case RowTable::Stages: return sizeof(StageRow);
    case RowTable::Validation: return sizeof(ValidationRow);
  }
  throw std::logic_error("unknown row table");
}

H5Handle fixed_string_type(std::size_t chars) {
  H5Handle type = h5_type(H5Tcopy(H5T_C_S1), "copying the string type");
  h5_check(H5Tset_size(type, chars), "sizing a fixed string");
  h5_check(H5Tset_strpad(type, H5T_STR_NULLTERM), "terminating a fixed string");
  return type;
}

std::size_t field_bytes(FieldType type) {
  switch (type) {
    case FieldType::U64: return sizeof(std::uint64_t);
    case FieldType::I32: return sizeof(std::int32_t);
    case FieldType::F64: return sizeof(double);
    case FieldType::Name: return kNameChars;
    case FieldType::Short: return kShortChars;
    case FieldType::Order: return kOrderChars;
    case FieldType::Arguments: return kArgumentChars;
    case FieldType::Environment: return kEnvironmentChars;
  }
  throw std::logic_error("unknown field type");
}

H5Handle row_type(RowTable table) {
  H5Handle compound = h5_type(H5Tcreate(H5T_COMPOUND, row_size(table)), "creating a row type");
  for (const RowField& field : row_fields(table)) {
    const std::string adding = std::string("adding member ") + field.name;
    switch (field.type) {
      case FieldType::U64: h5_check(H5Tinsert(compound, field.name, field.offset, H5T_NATIVE_UINT64), adding); break;
      case FieldType::I32: h5_check(H5Tinsert(compound, field.name, field.offset, H5T_NATIVE_INT32), adding); break;
      case FieldType::F64: h5_check(H5Tinsert(compound, field.name, field.offset, H5T_NATIVE_DOUBLE), adding); break;
      default: {
        const H5Handle text = fixed_string_type(field_bytes(field.type));  // H5Tinsert copies it
        h5_check(H5Tinsert(compound, field.name, field.offset, text), adding);
      }
    }
  }
  return compound;
}

std::vector<std::string> row_member_names(RowTable table) {
  std::vector<std::string> names;
  for (const RowField& field : row_fields(table)) names.emplace_back(field.name);
  return names;
}

H5Handle create_row_table(hid_t parent, const char* name, RowTable table, std::uint64_t rows) {
  const H5Handle type = row_type(table);
  const hsize_t dims = rows;
  const hsize_t max_dims = H5S_UNLIMITED;
  const H5Handle space = h5_space(H5Screate_simple(1, &dims, &max_dims), std::string("creating the space of ") + name);
  const H5Handle create = h5_plist(H5Pcreate(H5P_DATASET_CREATE), "creating dataset properties");
  const hsize_t chunk = std::clamp<hsize_t>(rows, 1, kRowsPerChunk);
  h5_check(H5Pset_chunk(create, 1, &chunk), "setting the chunk size");
  h5_check(H5Pset_shuffle(create), "enabling shuffle");
  h5_check(H5Pset_deflate(create, kDeflateLevel), "enabling deflate");
  // A checksum of each stored chunk: a flipped byte makes its read fail instead of giving another value.
  h5_check(H5Pset_fletcher32(create), "enabling the Fletcher32 checksum");
  H5Handle dataset = h5_dataset(H5Dcreate2(parent, name, type, space, H5P_DEFAULT, create, H5P_DEFAULT),
                                std::string("creating ") + name);
  write_attribute(dataset, "meaning", table_meaning(table));
  for (const RowField& field : row_fields(table)) {
    write_attribute(dataset, (std::string(field.name) + ".unit").c_str(), field.unit);
    write_attribute(dataset, (std::string(field.name) + ".meaning").c_str(), field.meaning);
  }
  return dataset;
}

std::string preset_link_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '/') c = '_';
  }
  return out == "." || out.empty() ? "_" : out;
}

std::string created_utc_now() {
  char text[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

H5Handle catalog_creation_properties() {
  H5Handle creation = h5_plist(H5Pcreate(H5P_FILE_CREATE), "creating file creation properties");
  h5_check(H5Pset_attr_phase_change(creation, 0, 0), "choosing dense attribute storage");
  return creation;
}

}  // namespace nestfast::io
