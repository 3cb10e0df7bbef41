#!/usr/bin/env bash
# nestfast evaluate end to end: the table, the JSON keys, an infeasible plan
# reported as such, and one-line bad-input errors with exit 2.
set -euo pipefail
: "${NESTFAST:?}" "${TEST_TMPDIR:?}" "${NESTFAST_SOURCE_DIR:?}"
mkdir -p "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$NESTFAST_SOURCE_DIR/tests/e2e/one_line_error.sh"  # expect_one_line_error
# Bad input: one line on stderr naming the flag (or saying what is wrong), exit 2.
expect_bad() {  # expect_bad PATTERN ARGS...: `nestfast evaluate ARGS` exits 2 with one stderr line holding PATTERN
  local pattern=$1
  shift
  (cd "$TEST_TMPDIR" && expect_one_line_error 2 "$pattern" "$NESTFAST" evaluate "$@")
}

gpt3=(--model gpt3-175b --cluster selene-a100 --gpus 1024 --tp 8 --pp 16 --gbs 1536 --mbs 1)

# 1. The text table names every part of the breakdown and the memory per rank.
"$NESTFAST" evaluate "${gpt3[@]}" --recompute full > "$TEST_TMPDIR/table.txt"
for word in "iteration " compute recompute "TP comm" p2p bubble "DP sync" tokens/s MFU "feasible: yes" "Megatron-LM (pretrain_gpt.py, framework megatron-core): --tensor-model-parallel-size"; do
  grep -q "$word" "$TEST_TMPDIR/table.txt" || fail "table lacks '$word'"
done
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+-[0-9]+ ' "$TEST_TMPDIR/table.txt")" -eq 16 ] || fail "expected 16 pipeline stages in the table"

# 2. --json carries the documented keys with sane values; dp defaults to gpus/(tp*pp) = 8.
"$NESTFAST" evaluate "${gpt3[@]}" --recompute full --json > "$TEST_TMPDIR/plan.json"
python3 - "$TEST_TMPDIR/plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("iteration_time_s", "tokens_per_s", "mfu_pct", "feasible", "memory_peak_bytes", "stages", "breakdown"):
    assert key in d, key
assert d["dp"] == 8, d["dp"]
assert d["attention"] == "flash" and d["overlap"] == "all", d  # Megatron-Core's defaults
assert d["feasible"] is True and d["kind"] == "given"
assert 20 < d["mfu_pct"] < 70, d["mfu_pct"]
assert len(d["stages"]) == 16 and all(s["memory_bytes"] > 0 for s in d["stages"])
assert d["memory_peak_bytes"] == max(s["memory_bytes"] for s in d["stages"])
assert abs(d["tokens_per_s"] - 1536 * 2048 / d["iteration_time_s"]) < 1e-6 * d["tokens_per_s"]
parts = sum(d["breakdown"].values())
assert abs(parts - d["iteration_time_s"]) < 1e-9 * parts, (parts, d["iteration_time_s"])
PY

# 3. A plan that does not fit says so (exit 0: the evaluation itself worked).
"$NESTFAST" evaluate --model gpt3-175b --cluster selene-a100 --gpus 8 --tp 8 --pp 1 --gbs 8 --mbs 1 > "$TEST_TMPDIR/oom.txt"
grep -q "feasible: NO" "$TEST_TMPDIR/oom.txt" || fail "an 8-GPU GPT-3 plan should not fit"
"$NESTFAST" evaluate --model gpt3-175b --cluster selene-a100 --gpus 8 --tp 8 --gbs 8 --json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["feasible"] is False and "HBM" in d["infeasible_reason"]'

# 4. MoE with expert parallelism: EP comm is priced; nestfast's FAST (nest plans) no slower than
#    NCCL's fan-out. A megatron-core plan runs one of Megatron's dispatchers: alltoall by default
#    (priced as the fan-out), flex with DeepEP where the cluster runs it (whole experts), never FAST.
moe=(--model mixtral-8x7b --cluster selene-a100 --gpus 64 --tp 2 --pp 4 --ep 8 --sp on --gbs 256 --mbs 1 --recompute selective --moe-imbalance 1.5 --json)
ep_comm() { python3 -c 'import json,sys; print(json.load(sys.stdin)["breakdown"]["ep_comm_s"])'; }
fast=$("$NESTFAST" evaluate "${moe[@]}" --framework nest --a2a fast | ep_comm)
fanout=$("$NESTFAST" evaluate "${moe[@]}" --framework nest --a2a fanout | ep_comm)
python3 -c "import sys; f, g = $fast, $fanout; assert 0 < f <= g, (f, g)"
"$NESTFAST" evaluate "${moe[@]}" > "$TEST_TMPDIR/moe-auto.json"
"$NESTFAST" evaluate "${moe[@]}" --a2a fanout > "$TEST_TMPDIR/moe-fanout.json"
python3 - "$TEST_TMPDIR/moe-auto.json" "$TEST_TMPDIR/moe-fanout.json" <<'PY'
import json, sys
auto, fanout = (json.load(open(p)) for p in sys.argv[1:])
assert auto["a2a"] == "fanout" and auto["iteration_time_s"] == fanout["iteration_time_s"], (auto["a2a"], auto["iteration_time_s"])
assert "--moe-token-dispatcher-type alltoall" in auto["megatron_args"], auto["megatron_args"]
PY
expect_bad "Megatron-LM does not run" "${moe[@]}" --a2a fast
deepep=$("$NESTFAST" evaluate "${moe[@]}" --etp 1 --a2a deepep)
python3 -c 'import json,sys; d = json.loads(sys.argv[1]); a = d["megatron_args"]
assert d["a2a"] == "deepep" and d["breakdown"]["ep_comm_s"] > 0, d["a2a"]
assert "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --moe-router-dtype fp32" in a, a' "$deepep"
moe_on() { echo "--model mixtral-8x7b --cluster $1 --gpus $2 --tp 2 --pp 4 --ep $3 --etp $4 --sp on --gbs 512 --mbs 1 --a2a deepep"; }
for bad in "$(moe_on mi300x-roce 64 8 1):DeepEP does not run there" "$(moe_on selene-a100 64 8 2):whole experts" \
           "--model deepseek-v3 --cluster selene-a100 --gpus 128 --pp 8 --ep 16 --gbs 512 --a2a deepep:runs only inside a node"; do
  # shellcheck disable=SC2086
  expect_bad "${bad#*:}" ${bad%%:*}
done

# 4b. Selective recompute of more modules (Megatron's --recompute-modules): the norms and the experts'
#     activation drop stash (less memory) and cost recompute time; the line lists them; Megatron's
#     refusals (moe_act without experts) and unknown names are one-line errors.
"$NESTFAST" evaluate "${moe[@]}" --etp 1 > "$TEST_TMPDIR/core.json"
"$NESTFAST" evaluate "${moe[@]}" --etp 1 --recompute-modules core_attn,layernorm,moe_act > "$TEST_TMPDIR/act.json"
python3 - "$TEST_TMPDIR/core.json" "$TEST_TMPDIR/act.json" <<'PY'
import json, sys
core, act = (json.load(open(p)) for p in sys.argv[1:])
assert act["memory_peak_bytes"] < core["memory_peak_bytes"], (act["memory_peak_bytes"], core["memory_peak_bytes"])
assert act["breakdown"]["recompute_s"] > core["breakdown"]["recompute_s"]
assert act["recompute_modules"] == "core_attn,layernorm,moe_act" and core["recompute_modules"] == "core_attn"
assert "--recompute-modules core_attn layernorm moe_act" in act["megatron_args"], act["megatron_args"]
assert "--recompute-modules" not in core["megatron_args"]
PY
"$NESTFAST" evaluate --plan "$TEST_TMPDIR/act.json" --json | python3 -c '
import json, sys; d = json.load(sys.stdin); a = json.load(open(sys.argv[1]))
assert d["recompute_modules"] == a["recompute_modules"] and d["iteration_time_s"] == a["iteration_time_s"]' "$TEST_TMPDIR/act.json"
for bad in "--model llama2-7b --recompute-modules core_attn,moe_act:moe_act needs --moe-grouped-gemm" \
           "--model mixtral-8x7b --recompute-modules core_attn,attention:'attention' is not one of"; do
  # shellcheck disable=SC2086
  expect_bad "${bad#*:}" ${bad%%:*} --cluster selene-a100 --gpus 64 --tp 2 --pp 4 --sp on --gbs 256 --recompute selective
done

# 5. Uneven stages with their own recompute modes (what `solve --framework nest` may choose;
#    Megatron-LM has one recompute setting for all stages, so megatron-core refuses it).
"$NESTFAST" evaluate --model megatron-22b --cluster selene-a100 --gpus 16 --tp 8 --pp 2 --gbs 8 \
  --stages 0-20,21-49:full --framework nest --json > "$TEST_TMPDIR/uneven.json"
expect_bad "one setting applied to every pipeline stage" --model megatron-22b --cluster selene-a100 --gpus 16 --tp 8 \
  --pp 2 --gbs 8 --stages 0-20,21-49:full
python3 - "$TEST_TMPDIR/uneven.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stages = d["stages"]
assert [(c["first_layer"], c["last_layer"], c["recompute"]) for c in stages] == [(0, 20, "none"), (21, 49, "full")], stages
assert d["recompute"] == "mixed"
assert d["stages"][0]["activations_bytes"] > d["stages"][1]["activations_bytes"]
PY

# 6. More chunks than blocks: Llama 3 405B as its paper ran it in Meta's own framework (nest here: ZeRO-2
#    with pp, which Megatron-Core does not test; pp 16 x 8 chunks over 126
#    blocks, the first chunk the embedding alone, the last the head alone) fits an 80 GB H100.
"$NESTFAST" evaluate --model llama3-405b --cluster h100-roce-llama3 --gpus 8192 --tp 8 --pp 16 --vpp 8 --sp on \
  --zero 2 --gbs 2048 --mbs 1 --framework nest --json > "$TEST_TMPDIR/llama3.json"
python3 - "$TEST_TMPDIR/llama3.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["feasible"] is True, d["infeasible_reason"]
first, last = d["stages"][0], d["stages"][-1]  # stages in pipeline order: pp x vpp of them
assert len(d["stages"]) == 16 * 8, len(d["stages"])
assert (first["first_layer"], first["last_layer"]) == (0, 0), first
assert (last["first_layer"], last["last_layer"]) == (127, 127), last
assert "--attention-backend flash" in d["megatron_args"] and "--overlap-grad-reduce" in d["megatron_args"], d["megatron_args"]
PY
# ... and unfused attention with no overlap is slower and prints what it was priced with.
slower=$("$NESTFAST" evaluate "${gpt3[@]}" --recompute full --attention unfused --overlap none --json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["overlap"] == "none"; print(d["iteration_time_s"])')
python3 -c "import json; d = json.load(open('$TEST_TMPDIR/plan.json')); assert d['iteration_time_s'] < $slower, ($slower, d['iteration_time_s'])"

# ... bf16 gradients (--grad-reduce-in-bf16): half the gradient bytes, a faster DP sync, the
#     flag in the line, and the plan file prices the same again.
"$NESTFAST" evaluate "${gpt3[@]}" --recompute full --grad-reduce bf16 --json > "$TEST_TMPDIR/bf16.json"
python3 - "$TEST_TMPDIR/plan.json" "$TEST_TMPDIR/bf16.json" <<'PY'
import json, sys
fp32, bf16 = (json.load(open(path)) for path in sys.argv[1:])
assert fp32["grad_reduce"] == "fp32" and bf16["grad_reduce"] == "bf16", (fp32["grad_reduce"], bf16["grad_reduce"])
assert "--grad-reduce-in-bf16" in bf16["megatron_args"] and "--grad-reduce-in-bf16" not in fp32["megatron_args"]
for a, b in zip(fp32["stages"], bf16["stages"]):
    assert b["gradients_bytes"] * 2 == a["gradients_bytes"], (a["gradients_bytes"], b["gradients_bytes"])
assert bf16["breakdown"]["dp_sync_s"] < fp32["breakdown"]["dp_sync_s"], (fp32["breakdown"], bf16["breakdown"])
PY
"$NESTFAST" evaluate --plan "$TEST_TMPDIR/bf16.json" --json |
  python3 -c "import json,sys; d=json.load(sys.stdin); e=json.load(open('$TEST_TMPDIR/bf16.json')); assert d['grad_reduce'] == 'bf16' and d['iteration_time_s'] == e['iteration_time_s'], (d['iteration_time_s'], e['iteration_time_s'])"

# ... Megatron's uneven first / last stage: 11 blocks on the first and the last of 4 ranks,
#     the 26 others split 13 / 13 (the line carries them as a layout).
"$NESTFAST" evaluate --model megatron-22b --cluster selene-a100 --gpus 32 --tp 8 --pp 4 --gbs 8 \
  --decoder-first-pipeline-num-layers 11 --decoder-last-pipeline-num-layers 11 --json > "$TEST_TMPDIR/first-last.json"
python3 - "$TEST_TMPDIR/first-last.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ranges = [(s["first_layer"], s["last_layer"]) for s in d["stages"]]
assert ranges == [(0, 11), (12, 24), (25, 37), (38, 49)], ranges
assert "--pipeline-model-parallel-layout" in d["megatron_args"], d["megatron_args"]
PY

# 7. Bad input (expect_bad).
base=(--model gpt3-175b --cluster selene-a100 --gbs 1536 --mbs 1)
expect_bad "unknown model preset" --model no-such-model --cluster selene-a100 --gpus 8 --gbs 8
expect_bad "--tp" "${base[@]}" --gpus 1120 --tp 7 --pp 16 --dp 10
expect_bad "--gpus" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --dp 4
expect_bad "--gbs" --model gpt3-175b --cluster selene-a100 --gpus 1024 --tp 8 --pp 16 --gbs 100
expect_bad "--ep" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --ep 2
expect_bad "--recompute" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --recompute sometimes
expect_bad "--placement" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --placement tp,xp
expect_bad "--moe-imbalance" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --moe-imbalance nan
expect_bad "--zero" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --zero 5
expect_bad "--sp" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --sp maybe
expect_bad "--vpp" --model gpt3-175b --cluster selene-a100 --gpus 1024 --tp 8 --pp 16 --vpp 4 --gbs 8 --dp 8
expect_bad "--gpus" "${base[@]}" --gpus 0
expect_bad "--stages" --model megatron-22b --cluster selene-a100 --gpus 16 --tp 8 --pp 2 --gbs 8 --stages 0-20,22-49
expect_bad "--stages" --model megatron-22b --cluster selene-a100 --gpus 16 --tp 8 --pp 2 --gbs 8 --stages 0-20
expect_bad "--stages" --model megatron-22b --cluster selene-a100 --gpus 16 --tp 8 --pp 2 --gbs 8 --stages 0-2x,3-49
expect_bad "--decoder-first" --model megatron-22b --cluster selene-a100 --gpus 32 --tp 8 --pp 4 --gbs 8 \
  --decoder-first-pipeline-num-layers 10
expect_bad "--decoder-first" --model megatron-22b --cluster selene-a100 --gpus 32 --tp 8 --pp 4 --gbs 8 \
  --decoder-first-pipeline-num-layers 0
# A cluster file with a zero bandwidth is refused naming file, line and key.
sed 's/^bandwidth_GBps = 300/bandwidth_GBps = 0/' "$NESTFAST_SOURCE_DIR/jobs/presets/clusters/selene-a100.toml" \
  > "$TEST_TMPDIR/zero-bandwidth.toml"
expect_bad "bandwidth_GBps" --model gpt3-175b --cluster "$TEST_TMPDIR/zero-bandwidth.toml" --gpus 8 --tp 8 --gbs 8
expect_bad "--attention" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --attention fused
expect_bad "--overlap" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --overlap grad,dp
expect_bad "--overlap" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --overlap all,grad
expect_bad "--grad-reduce" "${base[@]}" --gpus 1024 --tp 8 --pp 16 --grad-reduce fp16
echo "evaluate e2e: ok"
