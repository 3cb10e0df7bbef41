#pragma once
// What Megatron-LM / Megatron-Core accepts, written down as data: the flags
// nestfast emits (spelling, value kind, choices) and the rules a plan must
// satisfy, each with the upstream file:line it comes from. Read at
//   NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553 (2026-08-22).
// A Megatron release that moves or changes a rule is one edit here: the
// search (instance_enumeration via megatron_violations), the emitter
// (megatron_args) and the test-only validator (tests/unit/megatron) all read
// these tables.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::search {

inline constexpr std::string_view kMegatronCommit = "d98e8a64ddf34856e74b24714e3bedb2f5a39553";

// One command-line flag of pretrain_gpt.py.
//   kind Switch: takes no value; Int: one integer; Real: one decimal number;
//   Choice: one of `choices` ('|'-separated); Text: one free string (a layout);
//   List: one or more of `choices` (a List[str] field: nargs '+',
//   megatron/training/argument_utils.py:57).
enum class FlagKind { Switch, Int, Real, Choice, Text, List };

struct MegatronFlag {
  std::string_view name;  // with the leading "--"
  FlagKind kind;
  std::string_view choices;  // Choice and List only
  std::string_view source;   // where upstream defines it
};

inline constexpr MegatronFlag kMegatronFlags[] = {
    // Parallelism (ModelParallelConfig fields become flags through
    // ArgumentGroupFactory: megatron/training/argument_utils.py:106, '_' -> '-').
    {"--tensor-model-parallel-size", FlagKind::Int, "", "megatron/core/model_parallel_config.py:55"},
    {"--pipeline-model-parallel-size", FlagKind::Int, "", "megatron/core/model_parallel_config.py:83"},
    {"--context-parallel-size", FlagKind::Int, "", "megatron/core/model_parallel_config.py:100"},
    {"--expert-model-parallel-size", FlagKind::Int, "", "megatron/core/model_parallel_config.py:127"},
    {"--expert-tensor-parallel-size", FlagKind::Int, "", "megatron/core/model_parallel_config.py:130"},
    {"--sequence-parallel", FlagKind::Switch, "", "megatron/core/model_parallel_config.py:94"},
    {"--use-tp-pp-dp-mapping", FlagKind::Switch, "", "megatron/training/config/common_config.py:105"},
    {"--pipeline-model-parallel-layout", FlagKind::Text, "", "megatron/training/arguments.py:3103"},
    {"--num-layers-per-virtual-pipeline-stage", FlagKind::Int, "", "megatron/training/arguments.py:3114"},
    // Batch and sequence.
    {"--micro-batch-size", FlagKind::Int, "", "megatron/training/config/training_config.py:11"},
    {"--global-batch-size", FlagKind::Int, "", "megatron/training/config/training_config.py:15"},
    {"--seq-length", FlagKind::Int, "", "megatron/training/arguments.py:3305"},
    {"--max-position-embeddings", FlagKind::Int, "", "megatron/training/arguments.py:2394"},
    // Architecture.
    {"--num-layers", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:65"},
    {"--hidden-size", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:145"},
    {"--ffn-hidden-size", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:180"},
    {"--num-attention-heads", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:148"},
    {"--kv-channels", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:184"},
    {"--group-query-attention", FlagKind::Switch, "", "megatron/training/arguments.py:2382"},
    {"--num-query-groups", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:175"},
    {"--normalization", FlagKind::Choice, "LayerNorm|RMSNorm", "megatron/core/transformer/transformer_config.py:256"},
    {"--swiglu", FlagKind::Switch, "", "megatron/training/arguments.py:2450"},
    {"--position-embedding-type", FlagKind::Choice, "learned_absolute|rope|mrope|relative|none",
     "megatron/training/arguments.py:2397"},
    {"--untie-embeddings-and-output-weights", FlagKind::Switch, "", "megatron/training/arguments.py:2460"},
    {"--disable-bias-linear", FlagKind::Switch, "", "megatron/core/transformer/transformer_config.py:212"},
    {"--make-vocab-size-divisible-by", FlagKind::Int, "", "megatron/training/arguments.py:2441"},
    // Multi-head latent attention (MLATransformerConfig, transformer_config.py:3278).
    {"--multi-latent-attention", FlagKind::Switch, "", "megatron/core/transformer/transformer_config.py:288"},
    {"--q-lora-rank", FlagKind::Int, "", "megatron/training/arguments.py:3548"},
    {"--kv-lora-rank", FlagKind::Int, "", "megatron/training/arguments.py:3550"},
    {"--qk-head-dim", FlagKind::Int, "", "megatron/training/arguments.py:3552"},
    {"--qk-pos-emb-head-dim", FlagKind::Int, "", "megatron/training/arguments.py:3554"},
    {"--v-head-dim", FlagKind::Int, "", "megatron/training/arguments.py:3556"},
    // The latent norms: without it the TE spec builds MLA's q/kv norms as
    // IdentityOp (megatron/core/models/gpt/gpt_layer_specs.py:246-255).
    {"--qk-layernorm", FlagKind::Switch, "", "megatron/core/transformer/transformer_config.py:259"},
    {"--rope-type", FlagKind::Choice, "rope|yarn", "megatron/training/arguments.py:2906"},
    {"--no-rope-fusion", FlagKind::Switch, "", "megatron/training/arguments.py:2902"},
    {"--attention-backend", FlagKind::Choice, "flash|fused|unfused|local|auto",
     "megatron/core/transformer/transformer_config.py:151 (choices: megatron/core/transformer/enums.py:51)"},
    {"--bf16", FlagKind::Switch, "", "megatron/core/model_parallel_config.py:180"},
    // With --bf16: accumulate_allreduce_grads_in_fp32 False (arguments.py:1213), so the
    // gradient buffer and its reduce are bf16 (param_and_grad_buffer.py:924).
    {"--grad-reduce-in-bf16", FlagKind::Switch, "", "megatron/training/arguments.py:3053"},
    // MoE.
    {"--num-experts", FlagKind::Int, "", "megatron/training/arguments.py:3518"},
    {"--mtp-num-layers", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:68"},
    {"--moe-ffn-hidden-size", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:740"},
    {"--moe-router-topk", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:760"},
    {"--moe-shared-expert-intermediate-size", FlagKind::Int, "",
     "megatron/core/transformer/transformer_config.py:701"},
    {"--moe-layer-freq", FlagKind::Text, "", "megatron/training/arguments.py:3520"},
    // The local experts' GEMMs run grouped (TransformerEngine's GroupedLinear;
    // without it SequentialMLP loops over them), as priced: two GEMM kernels
    // per expert MLP whatever the local experts (layer_work.cpp add_mlp).
    {"--moe-grouped-gemm", FlagKind::Switch, "", "megatron/core/transformer/transformer_config.py:850"},
    {"--moe-router-score-function", FlagKind::Choice, "softmax|sigmoid|sqrtsoftplus",
     "megatron/core/transformer/transformer_config.py:808"},
    {"--moe-router-enable-expert-bias", FlagKind::Switch, "", "megatron/core/transformer/transformer_config.py:816"},
    {"--moe-router-topk-scaling-factor", FlagKind::Real, "", "megatron/core/transformer/transformer_config.py:804"},
    {"--moe-router-num-groups", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:780"},
    {"--moe-router-group-topk", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:796"},
    {"--moe-router-load-balancing-type", FlagKind::Choice,
     "aux_loss|seq_aux_loss|global_aux_loss|sinkhorn|quantile_balancing|none", "megatron/training/arguments.py:3532"},
    {"--moe-aux-loss-coeff", FlagKind::Real, "", "megatron/training/arguments.py:3536"},
    {"--moe-token-dispatcher-type", FlagKind::Choice, "allgather|alltoall|flex",
     "megatron/core/transformer/transformer_config.py:891"},
    {"--moe-flex-dispatcher-backend", FlagKind::Choice, "deepep|hybridep|ncclep",
     "megatron/core/transformer/transformer_config.py:898"},
    // DeepEP takes fp32 routing probabilities; with bf16 ones the dispatcher
    // warns and casts them (moe/token_dispatcher.py:1312-1318).
    {"--moe-router-dtype", FlagKind::Choice, "fp32|fp64", "megatron/core/transformer/transformer_config.py:811"},
    // Communication overlapped with compute.
    {"--overlap-grad-reduce", FlagKind::Switch, "", "megatron/training/arguments.py:3121"},
    {"--overlap-param-gather", FlagKind::Switch, "", "megatron/training/arguments.py:3148"},
    {"--tp-comm-overlap", FlagKind::Switch, "", "megatron/core/model_parallel_config.py:265"},
    {"--no-overlap-p2p-communication", FlagKind::Switch, "", "megatron/training/arguments.py:3118"},
    {"--overlap-moe-expert-parallel-comm", FlagKind::Switch, "", "megatron/core/model_parallel_config.py:343"},
    {"--delay-wgrad-compute", FlagKind::Switch, "", "megatron/core/model_parallel_config.py:348"},
    {"--overlap-dispatch-backward-with-experts-wgrad", FlagKind::Switch, "",
     "megatron/core/model_parallel_config.py:351"},
    {"--moe-shared-expert-overlap", FlagKind::Switch, "", "megatron/core/transformer/transformer_config.py:717"},
    // Recompute.
    {"--recompute-granularity", FlagKind::Choice, "full|selective",
     "megatron/core/transformer/transformer_config.py:532"},
    {"--recompute-method", FlagKind::Choice, "uniform|block", "megatron/core/transformer/transformer_config.py:543"},
    {"--recompute-num-layers", FlagKind::Int, "", "megatron/core/transformer/transformer_config.py:551"},
    {"--recompute-modules", FlagKind::List, "core_attn|moe_act|layernorm|mla_up_proj|mlp|moe|shared_experts",
     "megatron/core/transformer/transformer_config.py:560"},
    // Optimizer and data-parallel sharding.
    {"--optimizer", FlagKind::Choice, "adam|sgd", "megatron/training/arguments.py:2913"},
    {"--use-distributed-optimizer", FlagKind::Switch, "", "megatron/training/arguments.py:3156"},
    {"--use-megatron-fsdp", FlagKind::Switch, "", "megatron/training/config/common_config.py:92"},
    {"--data-parallel-sharding-strategy", FlagKind::Choice, "no_shard|optim|optim_grads|optim_grads_params",
     "megatron/training/arguments.py:3190"},
    {"--ckpt-format", FlagKind::Choice, "torch|torch_dist|torch_dcp|fsdp_dtensor",
     "megatron/training/config/training_config.py:486"},
};

// The rules. Each is checked by megatron_violations() (the search and
// evaluate) and, independently, by the test-only validator on the emitted line.
enum class MegatronRule {
  ModelSizeDividesWorld,     // tp*pp*cp divides the world
  ExpertGridDividesWorld,    // etp*ep*pp divides the world (etp = tp or 1)
  ExpertsDivisibleByEp,      // num_experts % ep == 0
  EpNeedsExperts,            // ep > 1 only for MoE models
  HeadsDivisibleByTp,        // heads and query groups split over tp
  FfnDivisibleByTp,          // column/row-parallel linears split their width
  RankOrder,                 // tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with --use-tp-pp-dp-mapping
  TpPpDpMappingGroups,       // that mapping with pp > 1: the expert grid's pp groups equal the dense ones
  SequenceParallelNeedsTp,   // sp only with tp > 1
  MoeTpNeedsSequenceParallel,// MoE with tp > 1 trains only with sp
  CpSeqMultiple,             // seq % (2 cp) == 0
  CpNeedsFusedAttention,     // cp > 1 only with TransformerEngine's flash/fused attention
  GlobalBatchDivisible,      // gbs % (mbs * dp) == 0
  MaxPositions,              // max_position_embeddings >= seq_length
  InterleavedNeedsPp,        // virtual stages need pp > 1
  InterleavedMicroBatches,   // interleaving: pp <= m and m % pp == 0
  LayersDivisibleByPp,       // without a layout: num_layers % pp == 0
  LayoutStagesMultipleOfPp,  // layout: stage count % pp == 0
  LayoutChain,               // layout: E first, L last, each once, num_layers t's
  RecomputeUniform,          // one recompute setting for every stage
  FullRecomputeNeedsMethod,  // full: method and num-layers; selective: neither
  FsdpCheckpointFormat,      // Megatron-FSDP: --ckpt-format fsdp_dtensor
  FsdpOptimizer,             // Megatron-FSDP: adam or sgd
  FsdpConnections,           // Megatron-FSDP: CUDA_DEVICE_MAX_CONNECTIONS != 1
  FsdpWithoutPipeline,       // Megatron-FSDP with pp > 1: no upstream test runs it (policy)
  TpCpConnections,           // tp or cp > 1 (Hopper and before, no FSDP): CUDA_DEVICE_MAX_CONNECTIONS=1
  MoeA2aConnections,         // --overlap-moe-expert-parallel-comm: CUDA_DEVICE_MAX_CONNECTIONS unset or > 1
  ParamGatherOverlap,        // --overlap-param-gather: distributed optimizer or FSDP, and --overlap-grad-reduce
  TpCommOverlap,             // --tp-comm-overlap: sequence parallelism
  MoeA2aOverlap,             // --overlap-moe-expert-parallel-comm: ep > 1, interleaving when pp > 1, the
                             // all-to-all dispatcher, no full recompute, bf16
  MoeSharedExpertOverlap,    // --moe-shared-expert-overlap: the alltoall or flex dispatcher, not beside
                             // --overlap-moe-expert-parallel-comm or the shared_experts recompute module
  DelayWgradCompute,         // --delay-wgrad-compute: only beside --overlap-moe-expert-parallel-comm
  DispatchWgradOverlap,      // --overlap-dispatch-backward-with-experts-wgrad: neither the A2A overlap nor
                             // --delay-wgrad-compute beside it
  MlaWithoutQueryGroups,     // multi-latent attention: no --group-query-attention
  MlaRopeFusion,             // multi-latent attention with --rope-type rope: --no-rope-fusion
  MlaAttentionBackend,       // multi-latent attention: TransformerEngine's flash backend refuses it
  MlaContextParallel,        // multi-latent attention: cp = 1 (no TransformerEngine backend runs it under cp)
  RouterExpertBias,          // --moe-router-enable-expert-bias: sigmoid (or sqrtsoftplus) scores
  RouterGroups,              // group-limited routing: groups given, dividing the experts, group-topk <= groups
  MoeDispatcher,             // ep > 1 dispatches through one of Megatron's dispatchers (not nestfast's FAST)
  RecomputeModulesApply,     // --recompute-modules: moe_act with grouped-GEMM experts, mla_up_proj with MLA
  DeepEpGroupSize,           // the flex dispatcher with DeepEP: etp*ep is one of DeepEP's configured group sizes
};

struct MegatronRuleText {
  MegatronRule rule;
  std::string_view source;  // upstream file:line
  std::string_view text;
};

inline constexpr MegatronRuleText kMegatronRules[] = {
    {MegatronRule::ModelSizeDividesWorld, "megatron/training/arguments.py:432",
     "world size must be divisible by tp*pp*cp"},
    {MegatronRule::ExpertGridDividesWorld, "megatron/core/parallel_state.py:880",
     "world size must be divisible by expert-tp*ep*pp (expert-tp = tp unless --expert-tensor-parallel-size), i.e. etp*ep must divide tp*cp*dp"},
    {MegatronRule::ExpertsDivisibleByEp, "megatron/training/arguments.py:1658",
     "the number of experts must be a multiple of ep"},
    {MegatronRule::EpNeedsExperts, "megatron/training/arguments.py:1656", "ep > 1 needs a model with experts"},
    {MegatronRule::HeadsDivisibleByTp, "megatron/core/transformer/attention.py:364",
     "tp must divide the attention heads and the query groups"},
    {MegatronRule::FfnDivisibleByTp, "megatron/core/tensor_parallel/layers.py:1038",
     "tp must divide the FFN width (and expert-tp the expert FFN width)"},
    {MegatronRule::RankOrder, "megatron/training/initialize.py:395",
     "ranks are ordered tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with --use-tp-pp-dp-mapping; no other order"},
    {MegatronRule::TpPpDpMappingGroups, "megatron/core/parallel_state.py:898",
     "with --use-tp-pp-dp-mapping and pp > 1 the expert grid's pipeline groups must equal the dense grid's "
     "(expert-tp*ep == tp*cp; a dense model needs cp = 1)"},
    {MegatronRule::SequenceParallelNeedsTp, "megatron/core/model_parallel_config.py:502",
     "sequence parallelism needs tp > 1 (validate_args turns it off at tp = 1, arguments.py:1433)"},
    {MegatronRule::MoeTpNeedsSequenceParallel, "megatron/core/transformer/moe/moe_layer.py:636",
     "MoE layers with tp > 1 train only with sequence parallelism"},
    {MegatronRule::CpSeqMultiple, "megatron/training/arguments.py:1335",
     "seq-length must be a multiple of 2*cp when cp > 1"},
    {MegatronRule::CpNeedsFusedAttention, "megatron/core/transformer/dot_product_attention.py:57",
     "context parallelism runs only in TransformerEngine's flash/fused attention (the local attention "
     "asserts cp = 1; TransformerEngine has no unfused CP path)"},
    {MegatronRule::GlobalBatchDivisible, "megatron/core/num_microbatches_calculator.py:381",
     "global batch must be divisible by micro-batch * dp"},
    {MegatronRule::MaxPositions, "megatron/training/arguments.py:1354",
     "max-position-embeddings must be >= seq-length"},
    {MegatronRule::InterleavedNeedsPp, "megatron/core/parallel_state.py:828",
     "an interleaved schedule needs pp > 1 (and pp > 2 with --no-overlap-p2p-communication, arguments.py:1008)"},
    {MegatronRule::InterleavedMicroBatches, "megatron/core/pipeline_parallel/schedules.py:1160",
     "interleaving needs pp <= micro-batches and micro-batches % pp == 0 (group size defaults to pp, "
     "model_parallel_config.py:568)"},
    {MegatronRule::LayersDivisibleByPp, "megatron/training/arguments.py:998",
     "without --pipeline-model-parallel-layout the layers must divide evenly over pp (and vpp)"},
    {MegatronRule::LayoutStagesMultipleOfPp, "megatron/training/arguments.py:946",
     "the layout's stage count must be a multiple of pp"},
    {MegatronRule::LayoutChain, "megatron/core/transformer/pipeline_parallel_layer_layout.py:95",
     "the layout starts with E, ends with L, has each once, num-layers t's, and the --mtp-num-layers m's after "
     "every t, all in the last chunk of a rank (:111-131)"},
    {MegatronRule::RecomputeUniform, "megatron/core/recompute.py:157",
     "recompute granularity, method and num-layers are one setting applied to every pipeline stage"},
    {MegatronRule::FullRecomputeNeedsMethod, "megatron/core/transformer/transformer_config.py:1901",
     "full recompute needs --recompute-method and --recompute-num-layers; selective takes neither"},
    {MegatronRule::FsdpCheckpointFormat, "megatron/training/arguments.py:1169",
     "Megatron-FSDP needs --ckpt-format fsdp_dtensor"},
    {MegatronRule::FsdpOptimizer, "megatron/training/arguments.py:1150", "Megatron-FSDP supports adam and sgd only"},
    {MegatronRule::FsdpConnections, "megatron/training/arguments.py:1166",
     "Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or > 1"},
    {MegatronRule::FsdpWithoutPipeline, "megatron/training/arguments.py:1118",
     "Megatron-FSDP with pp > 1 is not asserted against but no upstream test runs it: ZeRO-2/3 plans keep "
     "pp = 1 unless --allow-fsdp-pp"},
    {MegatronRule::TpCpConnections, "megatron/training/arguments.py:1477",
     "tp or cp > 1 on Hopper and earlier (without FSDP or --overlap-moe-expert-parallel-comm) needs "
     "CUDA_DEVICE_MAX_CONNECTIONS=1"},
    {MegatronRule::MoeA2aConnections, "megatron/core/transformer/moe/README.md:437",
     "--overlap-moe-expert-parallel-comm runs its two streams with CUDA_DEVICE_MAX_CONNECTIONS unset or > 1 "
     "(beside tp or cp, arguments.py:1466 warns instead of asserting 1)"},
    {MegatronRule::ParamGatherOverlap, "megatron/training/arguments.py:1024",
     "--overlap-param-gather needs the distributed optimizer or Megatron-FSDP, and --overlap-grad-reduce"},
    {MegatronRule::TpCommOverlap, "megatron/training/arguments.py:1441",
     "--tp-comm-overlap needs sequence parallelism"},
    {MegatronRule::MoeA2aOverlap, "megatron/core/transformer/transformer_config.py:3002",
     "--overlap-moe-expert-parallel-comm needs ep > 1, a virtual pipeline when pp > 1, the alltoall (or flex) "
     "token dispatcher, bf16 or fp16, and no full recompute"},
    {MegatronRule::MoeSharedExpertOverlap, "megatron/core/transformer/transformer_config.py:1820",
     "--moe-shared-expert-overlap needs the alltoall or flex token dispatcher, and neither "
     "--overlap-moe-expert-parallel-comm (:3040) nor shared_experts in --recompute-modules (:1991)"},
    {MegatronRule::DelayWgradCompute, "megatron/core/transformer/transformer_config.py:3074",
     "--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm (and TransformerEngine >= 2.8.0 beside "
     "--overlap-grad-reduce, arguments.py:1903)"},
    {MegatronRule::DispatchWgradOverlap, "megatron/core/transformer/transformer_config.py:3084",
     "--overlap-dispatch-backward-with-experts-wgrad excludes --overlap-moe-expert-parallel-comm and "
     "--delay-wgrad-compute (and needs TransformerEngine >= 2.3.0, :3089)"},
    {MegatronRule::MlaWithoutQueryGroups, "megatron/training/arguments.py:1974",
     "multi-latent attention excludes --group-query-attention"},
    {MegatronRule::MlaRopeFusion, "megatron/core/transformer/transformer_config.py:3345",
     "multi-latent attention fuses RoPE only for --rope-type yarn: plain rope needs --no-rope-fusion"},
    // TransformerEngine's get_attention_backend (NVIDIA/TransformerEngine a0b36d0c,
    // transformer_engine/pytorch/attention/dot_product_attention/utils.py, "Filter: Head dimension"):
    // FlashAttention is disabled when the query/key and value head widths differ.
    {MegatronRule::MlaAttentionBackend,
     "transformer_engine/pytorch/attention/dot_product_attention/utils.py (TransformerEngine a0b36d0c)",
     "multi-latent attention (query/key heads wider than value heads) runs in TransformerEngine's fused (cuDNN) "
     "attention, not its flash backend: the priced fused attention is --attention-backend fused"},
    // Same function, "Filter: Context parallelism": unfused attention has no CP path, and
    // FusedAttention is disabled for CP when the head widths differ.
    {MegatronRule::MlaContextParallel,
     "transformer_engine/pytorch/attention/dot_product_attention/utils.py (TransformerEngine a0b36d0c)",
     "multi-latent attention has no TransformerEngine attention backend under context parallelism: cp = 1"},
    {MegatronRule::RouterExpertBias, "megatron/core/transformer/transformer_config.py:2617",
     "--moe-router-enable-expert-bias needs --moe-router-score-function sigmoid or sqrtsoftplus"},
    {MegatronRule::RouterGroups, "megatron/core/transformer/transformer_config.py:2671",
     "--moe-router-group-topk needs --moe-router-num-groups dividing the experts and no smaller than the group "
     "top-k"},
    {MegatronRule::RecomputeModulesApply, "megatron/core/transformer/transformer_config.py:1964-1973",
     "selective recompute's moe_act needs --moe-grouped-gemm (an MoE model) and mla_up_proj multi-latent attention"},
    {MegatronRule::MoeDispatcher, "megatron/core/transformer/transformer_config.py:891",
     "expert parallelism dispatches through Megatron-Core's own dispatchers (allgather, alltoall: NCCL's "
     "all-to-all, priced as --a2a fanout; flex with DeepEP: --a2a deepep), not nestfast's FAST all-to-all"},
    // DeepEP's Buffer.get_dispatch_config / get_combine_config, which Megatron
    // calls for every group (moe/fused_a2a.py:48-51), know only these sizes
    // (deepseek-ai/DeepEP 567632dd deep_ep/buffer.py:245-259, 275-289).
    {MegatronRule::DeepEpGroupSize, "deepseek-ai/DeepEP 567632dd deep_ep/buffer.py:245-259",
     "the flex dispatcher with DeepEP runs over expert-tp x ep ranks, which must be 2, 4, 8, 16, 24, 32, 48, 64, "
     "96, 128, 144 or 160 (DeepEP's configured group sizes)"},
};

// DeepEP's configured group sizes (MegatronRule::DeepEpGroupSize).
inline constexpr int kDeepEpGroupSizes[] = {2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 144, 160};

const MegatronRuleText& megatron_rule(MegatronRule rule);
const MegatronFlag* megatron_flag(std::string_view name);  // nullptr when upstream has no such flag
// Whether `value` is one of `flag`'s choices (a Choice's value, or one of a List's).
bool is_choice(const MegatronFlag& flag, std::string_view value);

// What may vary with the caller's policy (not upstream's).
struct MegatronPolicy {
  bool allow_fsdp_with_pipeline = false;
};

// Whether Megatron-Core refuses `modules` for `model` under selective
// recompute (RecomputeModulesApply).
bool recompute_modules_refused(const ModelSpec& model, RecomputeModules modules);

// The rules an execution breaks, from its degrees, schedule and stages
// (stages only when given): RankOrder from the placement, RecomputeUniform
// from the stages' modes. Empty = Megatron-Core runs it as priced.
std::vector<MegatronRule> megatron_violations(const ModelSpec& model, const Execution& execution,
                                              const MegatronPolicy& policy = {});

// "rule text (upstream file:line)".
std::string describe(MegatronRule rule);

}  // namespace nestfast::search
