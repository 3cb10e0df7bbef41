#!/usr/bin/env bash
# nestfast solve end to end: the report's sections, --json consistent with
# evaluate_plan and the baselines (the DP's plan is never slower than any of
# them, and equals the exhaustive optimum on a small model), restrictions
# honoured, "no feasible plan" naming the constraint, bad input exit 2.
set -euo pipefail
: "${NESTFAST:?}" "${TEST_TMPDIR:?}" "${NESTFAST_SOURCE_DIR:?}"
mkdir -p "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$NESTFAST_SOURCE_DIR/tests/e2e/one_line_error.sh"  # expect_one_line_error

# 1. The text report.
"$NESTFAST" solve --model llama2-7b --cluster selene-a100 --gpus 64 --gbs 512 --threads 2 > "$TEST_TMPDIR/report.txt"
for word in "best plan:" "boundary in" "memory GiB" "time split" "alternative #4" "Baselines" manual phaze mcmc \
            exhaustive "NEST is" "Search:" "instances" "states" \
            "Megatron-LM (pretrain_gpt.py, framework megatron-core): --tensor-model-parallel-size"; do
  grep -q -- "$word" "$TEST_TMPDIR/report.txt" || fail "report lacks '$word'"
done

# 2. A tiny model whose whole space the exhaustive baseline can enumerate:
#    it must find exactly the DP's time; every baseline is >= the DP's time.
cat > "$TEST_TMPDIR/tiny.toml" <<'TOML'
[model]
name = "tiny"
source = "e2e test"
layers = 4
hidden = 1024
ffn_hidden = 4096
heads = 16
kv_heads = 16
vocab = 32000
seq_len = 1024
mlp = "gelu"
tied_embeddings = false
dtype_bytes = 2
TOML
"$NESTFAST" solve --model "$TEST_TMPDIR/tiny.toml" --cluster selene-a100 --gpus 16 --gbs 64 --mbs 1,2 --zero 0,1 \
  --vpp 1 --cp 1 --placement 'tp,cp,ep,dp,pp;tp,pp,dp' --top-k 3 --json > "$TEST_TMPDIR/tiny.json"
python3 - "$TEST_TMPDIR/tiny.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
plans = d["plans"]
best = plans[0]
t = best["iteration_time_s"]
assert d["feasible"] is True and best["feasible"] is True and best["kind"] == "nest" and best["rank_k"] == 0
alternatives = [p for p in plans if p["kind"] == "nest" and p["rank_k"] > 0]
assert len(alternatives) == 2, len(alternatives)
assert all(a["iteration_time_s"] >= t for a in alternatives)
names = {b["kind"]: b for b in plans if b["kind"] != "nest"}
assert set(names) == {"manual", "phaze", "mcmc", "exhaustive"}, names.keys()
for b in names.values():
    if b["feasible"]:
        assert b["iteration_time_s"] >= t * (1 - 1e-12), (b["kind"], b["iteration_time_s"], t)
        assert b["nest_speedup_x"] >= 1 - 1e-12
        assert b["plans_priced"] > 0 and b["note"]
ex = names["exhaustive"]
assert ex["feasible"] and ex["iteration_time_s"] == t, (ex, t)
assert best["micro_batch"] in (1, 2) and best["zero_stage"] in (0, 1) and best["vpp"] == 1 and best["cp"] == 1
stages = best["stages"]
assert len(stages) == best["pp"]
assert stages[0]["first_layer"] == 0 and stages[-1]["last_layer"] == 5
for a, b in zip(stages, stages[1:]):
    assert b["first_layer"] == a["last_layer"] + 1
assert max(s["memory_bytes"] for s in stages) <= best["hbm_bytes"]
assert best["memory_peak_bytes"] == max(s["memory_bytes"] for s in stages)
assert d["stats"]["instances"] > 0 and d["stats"]["states"] > 0
assert all(p["megatron_args"].startswith("--tensor-model-parallel-size") for p in plans if p["feasible"])
PY

# 2b. The schema round trip: every plan solve printed, priced again by
#     evaluate --plan from the JSON alone, has the same time and memory.
"$NESTFAST" solve --model mixtral-8x7b --cluster h200-superpod --gpus 64 --gbs 256 --top-k 3 --json \
  > "$TEST_TMPDIR/moe.json"
for file in "$TEST_TMPDIR/tiny.json" "$TEST_TMPDIR/moe.json"; do
  model=()  # the tiny model is a file, not a preset: the JSON names it, --model says where it is
  [ "$file" = "$TEST_TMPDIR/tiny.json" ] && model=(--model "$TEST_TMPDIR/tiny.toml")
  for pick in $(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["plans"]:
    if p["feasible"]: print("%s:%d" % (p["kind"], p["rank_k"]))' "$file"); do
    "$NESTFAST" evaluate --plan "$file" --pick "$pick" "${model[@]}" --json > "$TEST_TMPDIR/again.json" ||
      fail "evaluate --plan $file --pick $pick failed"
    python3 - "$file" "$pick" "$TEST_TMPDIR/again.json" <<'PY' || fail "evaluate --plan $file --pick $pick priced it differently"
import json, sys
doc, pick, again = json.load(open(sys.argv[1])), sys.argv[2], json.load(open(sys.argv[3]))
kind, k = pick.split(":")
printed = next(p for p in doc["plans"] if p["kind"] == kind and p["rank_k"] == int(k))
for key in ("iteration_time_s", "memory_peak_bytes", "tokens_per_s", "mfu_pct", "tp", "pp", "dp", "ep", "cp",
            "placement", "recompute", "micro_batches", "breakdown"):
    assert again[key] == printed[key], (pick, key, again[key], printed[key])
assert again["stages"] == printed["stages"], pick
assert again["kind"] == kind and again["rank_k"] == int(k)
PY
  done
done

set +e
"$NESTFAST" evaluate --plan "$TEST_TMPDIR/tiny.json" > /dev/null 2> "$TEST_TMPDIR/unnamed.err"; rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l < "$TEST_TMPDIR/unnamed.err")" = 1 ] && grep -q "names 'tiny': give --model" "$TEST_TMPDIR/unnamed.err" ||
  fail "a plan of a model file: rc $rc, $(cat "$TEST_TMPDIR/unnamed.err")"

# 3. Restrictions are honoured.
"$NESTFAST" solve --model llama2-7b --cluster selene-a100 --gpus 64 --gbs 512 --tp 2 --pp 4 --recompute full \
  --no-baselines --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
b = d["plans"][0]
assert b["tp"] == 2 and b["pp"] == 4 and b["dp"] * b["tp"] * b["pp"] * b["cp"] == 64, b
assert all(s["recompute"] == "full" for s in b["stages"])
assert all(p["kind"] == "nest" for p in d["plans"])'

# 3b. The GPU batch path (its kernel emulated on the CPU) finds the same plans.
"$NESTFAST" solve --model llama2-7b --cluster h100-superpod --gpus 64 --gbs 256 --mbs 1,2 --no-baselines --top-k 6 \
  --gpu off --json > "$TEST_TMPDIR/cpu.json"
"$NESTFAST" solve --model llama2-7b --cluster h100-superpod --gpus 64 --gbs 256 --mbs 1,2 --no-baselines --top-k 6 \
  --gpu emulate --json > "$TEST_TMPDIR/emulated.json"
python3 - "$TEST_TMPDIR/cpu.json" "$TEST_TMPDIR/emulated.json" <<'PY' || fail "--gpu emulate found other plans than --gpu off"
import json, sys
cpu, gpu = (json.load(open(f)) for f in sys.argv[1:])
assert cpu["stats"]["dp_device"] == "cpu", cpu["stats"]
assert gpu["stats"]["dp_device"].startswith("gpu kernel emulated"), gpu["stats"]
assert cpu["plans"] == gpu["plans"], (cpu["plans"][0], gpu["plans"][0])
assert len(cpu["plans"]) == 6
PY

# 3c. One Megatron-LM line: evaluate, given each plan solve found, prints the
#     line solve printed for it (one emitter), with no comment or placeholder.
python3 - "$NESTFAST" "$TEST_TMPDIR" <<'PY' || fail "evaluate and solve print different Megatron-LM lines"
import json, subprocess, sys
nestfast, tmp = sys.argv[1:]
runs = [(tmp + "/tiny.json", [ "--model", tmp + "/tiny.toml", "--cluster", "selene-a100", "--gpus", "16", "--gbs", "64"]),
        (tmp + "/cpu.json", ["--model", "llama2-7b", "--cluster", "h100-superpod", "--gpus", "64", "--gbs", "256"])]
checked = 0
for path, problem in runs:
    d = json.load(open(path))
    for plan in [p for p in d["plans"] if p["kind"] == "nest"]:
        line = plan["megatron_args"]
        assert "#" not in line and "<" not in line and "--num-layers " in line and "--context-parallel-size" in line, line
        block = max(s["recompute_layers"] for s in plan["stages"])
        if any(s["recompute"] == "full" for s in plan["stages"]):
            expected = ("--recompute-method block --recompute-num-layers %d" % block if block
                        else "--recompute-method uniform --recompute-num-layers 1")
            assert expected in line, line
        stages = ",".join("%d-%d:%s" % (s["first_layer"], s["last_layer"], s["recompute"]) for s in plan["stages"])
        flags = problem + ["--tp", str(plan["tp"]), "--pp", str(plan["pp"]), "--dp", str(plan["dp"]), "--cp", str(plan["cp"]),
                           "--ep", str(plan["ep"]), "--sp", "on" if plan["sp"] else "off", "--mbs", str(plan["micro_batch"]),
                           "--vpp", str(plan["vpp"]), "--zero", str(plan["zero_stage"]),
                           "--placement", plan["placement"], "--stages", stages,
                           "--recompute-layers", str(block), "--json"]
        evaluated = json.loads(subprocess.run([nestfast, "evaluate"] + flags, check=True, capture_output=True, text=True).stdout)
        assert evaluated["megatron_args"] == line, (flags, evaluated["megatron_args"], line)
        assert evaluated["megatron_notes"] == plan["megatron_notes"], (evaluated["megatron_notes"], plan["megatron_notes"])
        assert abs(evaluated["iteration_time_s"] - plan["iteration_time_s"]) <= 1e-9 * plan["iteration_time_s"], flags
        checked += 1
assert checked == 9, checked
PY

# 4. Nothing fits: exit 1 and a line naming the tightest constraint.
set +e
"$NESTFAST" solve --model llama3-70b --cluster h100-superpod --gpus 8 --gbs 8 --no-baselines 2> "$TEST_TMPDIR/nofit.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "an 8-GPU llama3-70b solve exited $rc, expected 1"
grep -q "no feasible plan: .*needs .* GiB per device at tp=.*HBM is 80.0 GiB" "$TEST_TMPDIR/nofit.err" ||
  fail "unexpected infeasibility message: $(cat "$TEST_TMPDIR/nofit.err")"

# 5. Bad input: one line on stderr naming the flag, exit 2.
expect_bad() {  # expect_bad PATTERN ARGS...: `nestfast solve ARGS` exits 2 with one stderr line holding PATTERN
  local pattern=$1
  shift
  (cd "$TEST_TMPDIR" && expect_one_line_error 2 "$pattern" "$NESTFAST" solve "$@")
}
base=(--model llama2-7b --cluster selene-a100 --gpus 64 --gbs 512 --no-baselines)
expect_bad --tp "${base[@]}" --tp 2,x
expect_bad --zero "${base[@]}" --zero 5
expect_bad --sp "${base[@]}" --sp maybe
expect_bad --recompute "${base[@]}" --recompute some
expect_bad --placement "${base[@]}" --placement tp,tp
expect_bad --placement "${base[@]}" --placement 'tp,pp;dp,xx'
expect_bad --zero "${base[@]}" --zero 1,4
expect_bad --gpu "${base[@]}" --gpu maybe  # a CLI11 usage error: one line too
expect_bad --model --cluster selene-a100 --gpus 64 --gbs 512
expect_bad --gpus --model llama2-7b --cluster selene-a100 --gpus 0 --gbs 512
# --gpu on where no device is present: one line naming the flag, exit 2 (a GPU node may run it).
if ! "$NESTFAST" solve --model llama2-7b --cluster h100-superpod --gpus 64 --gbs 256 --no-baselines --gpu on \
  > /dev/null 2>&1; then
  expect_bad "--gpu on: no GPU device present" --model llama2-7b --cluster h100-superpod --gpus 64 --gbs 256 --gpu on
fi
expect_bad "no-such-model" --model no-such-model --cluster selene-a100 --gpus 64 --gbs 512
expect_bad --tp "${base[@]}" --tp 3
# The expert all-to-all and selective recompute modules: unknown names, FAST for megatron-core
# plans, DeepEP where it does not run, modules Megatron refuses for the model.
moe=(--model mixtral-8x7b --cluster mi300x-roce --gpus 64 --gbs 256 --no-baselines)
expect_bad "--a2a: 'nccl'" "${moe[@]}" --a2a nccl
expect_bad "Megatron-LM does not run" "${moe[@]}" --a2a fast
expect_bad "DeepEP does not run on cluster 'mi300x-roce'" "${moe[@]}" --a2a deepep
expect_bad "--recompute-modules: core_attn,mla_up_proj" "${moe[@]}" --recompute-modules core_attn,mla_up_proj
expect_bad "'norm' is not one of" "${moe[@]}" --recompute-modules 'core_attn;layernorm,norm'
echo "solve e2e: ok"
