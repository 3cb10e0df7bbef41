#!/usr/bin/env python3
"""Feed nestfast's emitted Megatron-LM lines to Megatron-LM's own argument code.

usage: check_megatron_lines.py MEGATRON_LM LINES [--vocab V]

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
as pretrain_gpt.py runs them before it builds the model. It prints PASS or FAIL
per line, with the upstream file:line of the first refusal, and exits 1 when
any line fails.

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
    return config


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
             "args": plan["megatron_args"], "environment": plan.get("megatron_environment", "")}
            for plan in plans if plan.get("megatron_args")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("megatron_lm", help="a Megatron-LM checkout (the directory holding megatron/)")
    parser.add_argument("lines", help="solve/evaluate --json output, or JSON lines with args, environment, gpus")
    parser.add_argument("--vocab", type=int, default=131072, help="--vocab-size where a record has no vocab")
    options = parser.parse_args()
    sys.path.insert(0, options.megatron_lm)
    install_stand_ins()
    records = records_of(options.lines)
    if not records:
        sys.exit(f"{options.lines}: no emitted line to check (no 'args' records, no plan with megatron_args)")
    passed = 0
    for record in records:
        label = f"{record.get('model', '?')} {record['gpus']} {record.get('what', '')}"
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # Megatron's own argument printout
                check(record, options.vocab)
            passed += 1
            print(f"PASS {label}")
        except BaseException as error:  # argparse exits, asserts and ValueErrors alike
            root = os.path.abspath(options.megatron_lm) + os.sep
            frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(root)]
            where = f"{frames[-1].filename[len(root):]}:{frames[-1].lineno}" if frames else "?"
            print(f"FAIL {label}: {type(error).__name__} at {where}: {str(error)[:300]}")
    print(f"{passed} of {len(records)} pass")
    sys.exit(0 if passed == len(records) else 1)


if __name__ == "__main__":
    main()
