#!/usr/bin/env bash
# nestfast solve end to end: the report's sections, --json consistent with
# evaluate_plan and the baselines (the DP's plan is never slower than any of
# them, and equals the exhaustive optimum on a small model), restrictions
# honoured, "no feasible plan" naming the constraint, bad input exit 2.
set -euo pipefail
: "${NESTFAST:?}" "${TEST_TMPDIR:?}"
mkdir -p "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The text report.
"$NESTFAST" solve --model llama2-7b --cluster selene-a100 --gpus 64 --gbs 512 --threads 2 > "$TEST_TMPDIR/report.txt"
for word in "Best plan:" "boundary in" "memory GiB / HBM" "time split" "Alternatives" "#5" "Baselines" manual phaze mcmc \
            exhaustive "speed-up" "Search:" "instances" "states" "Megatron-LM (pretrain_gpt.py, framework megatron-core): --tensor-model-parallel-size"; do
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
best = d["best"]
t = best["iteration_time_s"]
assert d["feasible"] is True and best["feasible"] is True
assert len(d["alternatives"]) == 2, len(d["alternatives"])
assert all(a["iteration_time_s"] >= t for a in d["alternatives"])
names = {b["name"]: b for b in d["baselines"]}
assert set(names) == {"manual", "phaze", "mcmc", "exhaustive"}, names.keys()
for b in d["baselines"]:
    if b["feasible"]:
        assert b["iteration_time_s"] >= t * (1 - 1e-12), (b["name"], b["iteration_time_s"], t)
        assert b["speedup"] >= 1 - 1e-12
ex = names["exhaustive"]
assert ex["feasible"] and ex["iteration_time_s"] == t, (ex, t)
assert best["micro_batch"] in (1, 2) and best["zero_stage"] in (0, 1) and best["vpp"] == 1 and best["cp"] == 1
stages = best["stages"]
assert len(stages) == best["pp"]
assert stages[0]["first_layer"] == 0 and stages[-1]["last_layer"] == 5
for a, b in zip(stages, stages[1:]):
    assert b["first_layer"] == a["last_layer"] + 1
assert max(s["memory_bytes"] for s in stages) <= best["hbm_bytes"]
assert d["stats"]["instances"] > 0 and d["stats"]["states"] > 0
assert best["megatron_args"].startswith("--tensor-model-parallel-size")
PY

# 3. Restrictions are honoured.
"$NESTFAST" solve --model llama2-7b --cluster selene-a100 --gpus 64 --gbs 512 --tp 2 --pp 4 --recompute full \
  --no-baselines --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
b = d["best"]
assert b["tp"] == 2 and b["pp"] == 4 and b["dp"] * b["tp"] * b["pp"] * b["cp"] == 64, b
assert all(s["recompute"] == "full" for s in b["stages"])
assert d["baselines"] == []'

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
assert cpu["best"] == gpu["best"], (cpu["best"], gpu["best"])
assert cpu["alternatives"] == gpu["alternatives"]
assert len(cpu["alternatives"]) == 5
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
    for plan in [d["best"]] + d["alternatives"]:
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
                           "--placement", ",".join(plan["placement"]), "--stages", stages,
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
expect_bad() {
  local word=$1; shift
  set +e
  "$NESTFAST" solve "$@" > /dev/null 2> "$TEST_TMPDIR/bad.err"
  local code=$?
  set -e
  [ "$code" -eq 2 ] || fail "'$*' exited $code, expected 2"
  [ "$(wc -l < "$TEST_TMPDIR/bad.err")" -eq 1 ] || fail "'$*' printed more than one line: $(cat "$TEST_TMPDIR/bad.err")"
  grep -q -- "$word" "$TEST_TMPDIR/bad.err" || fail "'$*' error does not name $word: $(cat "$TEST_TMPDIR/bad.err")"
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
echo "solve e2e: ok"
