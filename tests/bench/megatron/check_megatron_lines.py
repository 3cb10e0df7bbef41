#!/usr/bin/env python3
"""Feed nestfast's emitted Megatron-LM lines to Megatron-LM's own argument code.

usage: check_megatron_lines.py MEGATRON_LM LINES [--vocab V] [--controls N]

LINES is the output of `nestfast solve --json` or `evaluate --json` (every
plan's megatron_args with its megatron_environment), or JSON lines as
tests/bench/search/framework_sweep.py writes them: one object a line with
`args` (the emitted argument line), `environment` (what the line needs set,
as printed: "NAME=VALUE" or "unset NAME;"), `gpus` (the world size) and, for
the report, `model` and `what`. Each line, with the
launch file's default data and training arguments, goes through Megatron-LM's
parse_args(), validate_args(), core_transformer_config_from_args() (the
TransformerConfig / MLATransformerConfig checks in __post_init__) and
parallel_state.initialize_model_parallel() (the dense and expert rank grids),
as pretrain_gpt.py runs them before it builds the model. Where the record
carries the priced plan (`stages`, as solve/evaluate --json print them and
framework_sweep.py keeps them), it then asks Megatron-LM what it would build
on every pipeline rank and virtual stage (which decoder layers, the
embedding, the loss, the MTP block, which layers it recomputes) and how many
micro-batches and data-parallel replicas it runs, and compares each with the
plan nestfast priced: a line that Megatron accepts but builds differently
from its price fails. It prints PASS or FAIL per line, with the upstream
file:line of the first refusal or the first difference from the price, and
exits 1 when any line fails. As controls, the priced plans of the first few
lines are changed one thing at a time (a layer moved between chunks, the
micro-batch, a stage's recompute, an overlap, the gradient dtype) and each
change must be reported; one that is not fails the run.

No GPU and no TransformerEngine are needed: the modules a GPU node has and
this machine may not (TransformerEngine, Triton, Apex, DeepEP, newer torch
submodules) are stand-ins whose attributes exist and do nothing, and the GPU
is reported as one H100 (compute capability 9.0), torch as 2.13 and
TransformerEngine as 2.17.1. So the check is of the arguments and the
configuration rules only, not of whether the kernels exist at launch. Run it
with an interpreter that has torch (Debian's python3-torch 1.13 works:
/usr/bin/python3), never as part of the product.
"""
import argparse
import contextlib
import copy
import importlib
import importlib.abc
import importlib.machinery
import io
import json
import os
import shlex
import sys
import traceback
import types
from unittest import mock

# Modules stood in for whether or not they exist here (the GPU stack, and the
# torch parts whose 1.13 versions break Megatron's imports).
FORCED = ("transformer_engine", "triton", "apex", "flash_attn", "grouped_gemm", "deep_ep", "mamba_ssm",
          "causal_conv1d", "nvidia_resiliency_ext", "torch.distributed._shard", "torch.distributed.fsdp",
          "megatron.core.dist_checkpointing.strategies.torch",
          "megatron.core.dist_checkpointing.strategies.filesystem_async",
          "megatron.core.dist_checkpointing.strategies.state_dict_saver")
# Modules stood in only where this interpreter lacks them.
MISSING_OK = ("torch.distributed.checkpoint", "torch.distributed._tensor", "torch.distributed.tensor",
              "torch.distributed.device_mesh", "torch.distributed._composable", "torch._dynamo",
              "torch.distributed._symmetric_memory", "torch.nn.attention", "torch.distributed.elastic",
              "torch.utils._pytree", "torch._subclasses", "torch.distributed._functional_collectives",
              "einops", "tensorstore", "zarr", "nvtx", "numpy.dtypes")
# Existing modules whose missing attributes resolve to stand-ins.
LENIENT = ("torch", "torch.distributed", "torch.cuda", "torch.cuda.memory", "torch.nn.functional",
           "torch.utils.checkpoint", "torch.optim.optimizer", "torch.serialization", "typing")


def stand_in(owner, name):
    """A class for capitalised names (something may subclass it), else a mock."""
    if name[:1].isupper():
        return type(name, (object,), {"__init__": lambda self, *args, **kwargs: None})
    return mock.MagicMock(name=f"{owner}.{name}")


class StandInModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []
        self.__version__ = "2.17.1" if name.startswith("transformer_engine") else "3.3.0"

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        value = stand_in(self.__name__, item)
        setattr(self, item, value)
        return value


class StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        def under(prefixes):
            return any(name == p or name.startswith(p + ".") for p in prefixes)
        if under(FORCED):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        if under(MISSING_OK):
            for finder in sys.meta_path:
                if finder is not self and getattr(finder, "find_spec", None) and finder.find_spec(name, path, target):
                    return None
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return StandInModule(spec.name)

    def exec_module(self, module):
        pass


def lenient(module):
    def getattr_(item):
        if item.startswith("__"):
            raise AttributeError(item)
        value = stand_in(module.__name__, item)
        setattr(module, item, value)
        return value
    module.__getattr__ = getattr_


def install_stand_ins():
    sys.meta_path.insert(0, StandInFinder())
    import torch
    for dtype in ("float8_e8m0fnu", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn_x2", "uint16", "uint32", "uint64"):
        if not hasattr(torch, dtype):
            setattr(torch, dtype, torch.bfloat16)
    torch.__version__ = "2.13.0"
    torch.jit.script = lambda fn=None, *args, **kwargs: fn
    torch.compile = lambda fn=None, *args, **kwargs: fn if fn is not None else (lambda g: g)
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 8
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_capability = lambda *args, **kwargs: (9, 0)
    torch.cuda.get_device_name = lambda *args, **kwargs: "NVIDIA H100 80GB HBM3"
    torch.cuda.get_device_properties = lambda *args, **kwargs: types.SimpleNamespace(
        major=9, minor=0, name="NVIDIA H100 80GB HBM3", total_memory=80 << 30, multi_processor_count=132)
    for name in LENIENT:
        importlib.import_module(name)
        lenient(sys.modules[name])


def environment_of(text):
    """{"NAME": "VALUE"} from "NAME=VALUE" settings; "unset NAME" leaves NAME out."""
    settings = {}
    for token in (text or "").replace(";", " ").split():
        name, equals, value = token.partition("=")
        if equals and value:
            settings[name] = value
    return settings


def check(record, vocab):
    from megatron.training.arguments import parse_args, validate_args
    from megatron.training.argument_utils import core_transformer_config_from_args
    os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    os.environ.update(WORLD_SIZE=str(record["gpus"]), RANK="0", LOCAL_RANK="0")
    os.environ.update(environment_of(record.get("environment")))
    # The launch file's defaults (jobs/launch_file.cpp: DATA_ARGS, TRAIN_ARGS).
    defaults = (f"--mock-data --tokenizer-type NullTokenizer --vocab-size {record.get('vocab', vocab)} "
                "--train-iters 20 --lr 1.0e-4 --min-lr 1.0e-5 --lr-decay-style cosine --log-interval 1 --eval-iters 0")
    sys.argv = ["pretrain_gpt.py"] + shlex.split(record["args"]) + shlex.split(defaults)
    args = parse_args()
    validate_args(args, {"tokenizer_type": "GPT2BPETokenizer"})  # pretrain_gpt.py's args_defaults
    config = core_transformer_config_from_args(args)
    # The rank groups, as megatron/training/initialize.py builds them (a stand-in
    # torch.distributed of the line's world size, this process rank 0).
    import torch.distributed
    from megatron.core import parallel_state
    torch.distributed.is_initialized = lambda: True
    torch.distributed.get_world_size = lambda *args_, **kwargs: int(record["gpus"])
    torch.distributed.get_rank = lambda *args_, **kwargs: 0
    torch.distributed.new_group = lambda *args_, **kwargs: mock.MagicMock(name="group")
    parallel_state.destroy_model_parallel()
    parallel_state.initialize_model_parallel(
        args.tensor_model_parallel_size, args.pipeline_model_parallel_size, args.virtual_pipeline_model_parallel_size,
        context_parallel_size=args.context_parallel_size, expert_model_parallel_size=args.expert_model_parallel_size,
        expert_tensor_parallel_size=args.expert_tensor_parallel_size,
        num_distributed_optimizer_instances=args.num_distributed_optimizer_instances,
        order="tp-cp-ep-dp-pp" if not args.use_tp_pp_dp_mapping else "tp-cp-ep-pp-dp",
        create_gloo_process_groups=False)
    return args, config


def priced_overlaps(plan):
    """The overlaps the plan was priced with, from its `overlap_priced` list."""
    return [name for name in plan["overlap_priced"].split(",") if name and name != "none"]


class NotAsPriced(Exception):
    """Megatron-LM accepts the line but would run something other than the priced plan."""


def built_chunks(args, config):
    """{(pp rank, chunk): (first decoder layer, decoder layers, embedding, loss,
    MTP)} as Megatron-LM builds the model: get_num_layers_to_build
    (transformer_block.py:76) and get_transformer_layer_offset
    (transformer_layer.py:65) for the decoder layers, the chunk's
    pre_process / post_process as training.py:2391-2394 sets them, and
    mtp_on_this_rank as gpt_model.py:166 asks it (multi_token_prediction.py:788)."""
    from megatron.core import parallel_state
    from megatron.core.pipeline_parallel.utils import is_vp_first_stage, is_vp_last_stage
    from megatron.core.transformer.multi_token_prediction import mtp_on_this_rank
    from megatron.core.transformer.transformer_block import get_num_layers_to_build
    from megatron.core.transformer.transformer_layer import get_transformer_layer_offset
    pp = args.pipeline_model_parallel_size
    vp = args.virtual_pipeline_model_parallel_size
    # The stand-in process groups know no size: the pipeline group's is pp,
    # as initialize_model_parallel builds it (is_pipeline_last_stage reads it).
    parallel_state.set_pipeline_model_parallel_world_size(pp)
    chunks = {}
    for rank in range(pp):
        parallel_state.set_pipeline_model_parallel_rank(rank)
        for chunk in range(vp or 1):
            vp_stage = chunk if vp else None
            if vp:
                parallel_state.set_virtual_pipeline_model_parallel_rank(chunk)
            layers = get_num_layers_to_build(config, vp_stage=vp_stage, pp_rank=rank)
            offset = get_transformer_layer_offset(config, vp_stage=vp_stage, pp_rank=rank)
            embedding = rank == 0 and is_vp_first_stage(vp_stage=chunk, vp_size=vp)
            loss = rank == pp - 1 and is_vp_last_stage(vp_stage=chunk, vp_size=vp)
            mtp = bool(config.mtp_num_layers) and mtp_on_this_rank(
                layout=config.pipeline_model_parallel_layout, mtp_num_layers=config.mtp_num_layers,
                ignore_virtual=False, vp_stage=vp_stage)
            chunks[(rank, chunk)] = (offset, layers, embedding, loss, mtp)
    return chunks


def recomputed_layers(config, layers):
    """How many of a chunk's `layers` decoder layers Megatron-LM recomputes in
    full: every one under the uniform method, the first recompute_num_layers
    under the block method (megatron/core/recompute.py:158-181, per chunk:
    num_layers_per_pipeline_rank is the chunk's layer count)."""
    if config.recompute_granularity != "full":
        return 0
    if config.recompute_method == "block":
        return min(config.recompute_num_layers, layers)
    return layers


def check_built(record, args, config):
    """Compare what Megatron-LM builds and runs with the plan nestfast priced."""
    plan = record.get("plan") or {}
    stages = plan.get("stages")
    if not stages:
        return False
    differences = []

    def differ(what, megatron, priced):
        if megatron != priced:
            differences.append(f"{what}: Megatron {megatron}, priced {priced}")

    # The settings the price depends on, as Megatron-LM holds them after
    # validate_args() and __post_init__ (where it may change what was asked:
    # sequence parallelism off at tp 1, p2p overlap off without a virtual
    # pipeline, arguments.py:1001-1016, fp32 gradient accumulation with bf16,
    # arguments.py:1209-1216).
    differ("tensor-parallel size", config.tensor_model_parallel_size, plan["tp"])
    differ("pipeline size", config.pipeline_model_parallel_size, plan["pp"])
    differ("virtual stages per rank", config.virtual_pipeline_model_parallel_size or 1, plan["vpp"])
    differ("context-parallel size", config.context_parallel_size, plan["cp"])
    differ("expert-parallel size", config.expert_model_parallel_size, plan["ep"])
    differ("expert tensor-parallel size", config.expert_tensor_parallel_size, plan["etp"])
    differ("sequence parallelism", config.sequence_parallel, bool(plan["sp"]) and plan["tp"] > 1)
    differ("micro-batch size", args.micro_batch_size, plan["micro_batch"])
    differ("global batch", args.global_batch_size, plan["global_batch"])
    differ("sequence length", args.seq_length, plan["seq_len"])
    sharded = plan["dp"] * plan["cp"] > 1  # below that every ZeRO stage runs as 0 and is priced so
    zero = plan["zero_stage"] if sharded else 0
    differ("distributed optimizer (ZeRO-1)", bool(args.use_distributed_optimizer) and not args.use_megatron_fsdp,
           zero == 1)
    differ("Megatron-FSDP sharding",
           args.data_parallel_sharding_strategy if args.use_megatron_fsdp else None,
           {2: "optim_grads", 3: "optim_grads_params"}.get(zero))
    differ("gradients reduced in fp32", bool(args.accumulate_allreduce_grads_in_fp32), plan["grad_reduce"] == "fp32")
    differ("fused attention", str(config.attention_backend).split(".")[-1] not in ("unfused", "local"),
           plan["attention"] == "flash")
    overlaps = {"grad": args.overlap_grad_reduce, "param": args.overlap_param_gather,
                "tp": config.tp_comm_overlap, "p2p": bool(config.overlap_p2p_comm) and bool(config.virtual_pipeline_model_parallel_size),
                "a2a": config.overlap_moe_expert_parallel_comm, "shared": config.moe_shared_expert_overlap,
                "wgrad": config.overlap_dispatch_backward_with_experts_wgrad}
    differ("overlaps", sorted(name for name, on in overlaps.items() if on),
           sorted(priced_overlaps(plan)))
    if config.num_moe_experts and plan["ep"] > 1:  # at ep 1 there is no all-to-all to price
        dispatcher = config.moe_token_dispatcher_type
        if dispatcher == "flex":
            dispatcher += "/" + config.moe_flex_dispatcher_backend
        differ("MoE dispatcher", dispatcher, {"fanout": "alltoall", "deepep": "flex/deepep"}.get(plan["a2a"]))
    differ("data-parallel size", args.data_parallel_size, plan["dp"])
    differ("micro-batches per step",
           args.global_batch_size // (args.micro_batch_size * args.data_parallel_size), plan["micro_batches"])
    blocks = args.num_layers
    chunk_of_rank = {}
    priced = {}
    for stage in stages:  # a rank's chunks in the order the plan lists them
        rank = stage["pipeline_rank"]
        chunk = chunk_of_rank.get(rank, 0)
        chunk_of_rank[rank] = chunk + 1
        first, last = stage["first_layer"], stage["last_layer"]  # 0 = embedding, blocks 1..L, L + 1 = head
        first_block, last_block = max(first, 1), min(last, blocks)
        layers = max(0, last_block - first_block + 1)
        if stage["recompute"] == "full":
            recompute = layers if stage["recompute_layers"] == 0 else min(stage["recompute_layers"], layers)
        else:
            recompute = 0
        priced[(rank, chunk)] = ((first_block - 1, layers, first == 0, last == blocks + 1,
                                  last == blocks + 1 and bool(config.mtp_num_layers)),
                                 recompute, stage["recompute"])
    built = built_chunks(args, config)
    differ("pipeline chunks", sorted(built), sorted(priced))
    names = ("first decoder layer", "decoder layers", "embedding", "loss", "MTP block")
    selective = config.recompute_granularity == "selective"
    for key in sorted(set(built) & set(priced)):
        (megatron, (price, recompute, mode)) = built[key], priced[key]
        where = f"pipeline rank {key[0]} chunk {key[1]}"
        for name, a, b in zip(names, megatron, price):
            if name != "first decoder layer" or megatron[1] > 0:
                differ(f"{where} {name}", a, b)
        differ(f"{where} layers recomputed in full", recomputed_layers(config, megatron[1]), recompute)
        differ(f"{where} selective recompute", selective, mode == "selective")
    if selective:
        differ("recompute modules", sorted(config.recompute_modules or []),
               sorted(m for m in plan.get("recompute_modules", "").split(",") if m))
    if differences:
        raise NotAsPriced("; ".join(differences[:4]) + (f" (and {len(differences) - 4} more)" if len(differences) > 4 else ""))
    return True


def controls(record):
    """(what, record) pairs: the record's priced plan with one thing changed
    that Megatron-LM would not run as emitted, so that each must fail the
    comparison (a check that cannot fail proves nothing)."""
    plan = record["plan"]

    def changed(what, change):
        mutated = copy.deepcopy(plan)
        change(mutated)
        return what, dict(record, plan=mutated)

    def move_layer(p):
        p["stages"][0]["last_layer"] += 1
        p["stages"][1]["first_layer"] += 1

    def flip_recompute(p):  # on the first stage with a block (an embedding-only one recomputes nothing)
        stage = next(s for s in p["stages"] if s["last_layer"] >= max(s["first_layer"], 1))
        stage["recompute"] = "none" if stage["recompute"] == "full" else "full"
        stage["recompute_layers"] = 0

    def flip_overlap(p):
        priced = priced_overlaps(p)
        p["overlap_priced"] = ",".join(priced[1:] if priced else ["grad"])

    out = [changed("micro-batch size doubled", lambda p: p.update(micro_batch=2 * p["micro_batch"])),
           changed("a stage's recompute flipped", flip_recompute),
           changed("one overlap more or less", flip_overlap),
           changed("gradient dtype flipped", lambda p: p.update(grad_reduce="bf16" if p["grad_reduce"] == "fp32" else "fp32"))]
    if len(plan["stages"]) > 1 and plan["stages"][1]["last_layer"] > plan["stages"][1]["first_layer"]:
        out.append(changed("a layer moved to the first chunk", move_layer))
    return out


def records_of(path):
    """JSON lines as framework_sweep.py writes them, or one `solve --json` /
    `evaluate --json` document (its plans' megatron_args and environment)."""
    text = open(path).read()
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(raw) for raw in text.splitlines() if raw.strip()]
    if "args" in document:  # JSON lines holding one line
        return [document]
    plans = document.get("plans", [document])
    return [{"model": plan.get("model"), "gpus": plan["gpus"], "what": plan.get("kind", ""),
             "args": plan["megatron_args"], "environment": plan.get("megatron_environment", ""), "plan": plan}
            for plan in plans if plan.get("megatron_args")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("megatron_lm", help="a Megatron-LM checkout (the directory holding megatron/)")
    parser.add_argument("lines", help="solve/evaluate --json output, or JSON lines with args, environment, gpus")
    parser.add_argument("--vocab", type=int, default=131072, help="--vocab-size where a record has no vocab")
    parser.add_argument("--controls", type=int, default=3, metavar="N",
                        help="also change the priced plan of the first N lines that carry one, one thing at a time, "
                             "and require each change to be reported (default 3; 0: none)")
    options = parser.parse_args()
    sys.path.insert(0, options.megatron_lm)
    install_stand_ins()
    records = records_of(options.lines)
    if not records:
        sys.exit(f"{options.lines}: no emitted line to check (no 'args' records, no plan with megatron_args)")
    passed = built = 0
    for record in records:
        label = f"{record.get('model', '?')} {record['gpus']} {record.get('what', '')}"
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # Megatron's own argument printout
                args, config = check(record, options.vocab)
                compared = check_built(record, args, config)
            passed += 1
            built += compared
            print(f"PASS {label}" + (" (builds as priced)" if compared else ""))
        except NotAsPriced as error:
            print(f"FAIL {label}: accepted, but not as priced: {error}")
        except BaseException as error:  # argparse exits, asserts and ValueErrors alike
            root = os.path.abspath(options.megatron_lm) + os.sep
            frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(root)]
            where = f"{frames[-1].filename[len(root):]}:{frames[-1].lineno}" if frames else "?"
            print(f"FAIL {label}: {type(error).__name__} at {where}: {str(error)[:300]}")
    print(f"{passed} of {len(records)} pass; {built} of them compared with their priced plan and built as priced")
    uncaught = []
    changed = 0
    if options.controls:
        priced = [record for record in records if (record.get("plan") or {}).get("stages")][:options.controls]
        for record in priced:
            for what, mutated in controls(record):
                changed += 1
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        check_built(mutated, *check(mutated, options.vocab))
                    uncaught.append(f"{record.get('model', '?')} {record['gpus']}: {what}")
                except NotAsPriced:
                    pass
        print(f"controls: {changed} changed plans of {len(priced)} lines, "
              f"{len(uncaught)} not caught" + "".join(f"\n  NOT CAUGHT {u}" for u in uncaught))
    sys.exit(0 if passed == len(records) and not uncaught else 1)


if __name__ == "__main__":
    main()
