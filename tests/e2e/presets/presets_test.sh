#!/usr/bin/env bash
# nestfast presets: lists the 9 models, 5 GPUs and 7 clusters as tables and as
# JSON; a broken preset in $NESTFAST_PRESETS is a one-line error and exit 2.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
unset NESTFAST_PRESETS
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
rm -rf "$tmp" && mkdir -p "$tmp"

tables=$("$NESTFAST" presets)
for title in "models (10)" "gpus (5)" "clusters (7)"; do
  grep -qx "$title" <<<"$tables" || fail "no '$title' heading in: $tables"
done
for name in bert-large llama2-7b llama3-70b mixtral-8x7b gpt3-175b megatron-22b turing-530b megatron-1t deepseek-v3 \
            a100-80g h100-sxm h200 mi300x tpuv4 nest-paper-tpuv4-fattree nest-paper-h100-spineleaf selene-a100 \
            h100-superpod h200-superpod h100-roce-llama3 mi300x-roce; do
  grep -q "^$name " <<<"$tables" || fail "preset $name not listed"
done

"$NESTFAST" presets --json >"$tmp/all.json"
counts=$(python3 -c "import json,sys; d=json.load(sys.stdin); print(len(d['models']), len(d['gpus']), len(d['clusters']))" <"$tmp/all.json")
[ "$counts" = "10 5 7" ] || fail "--json counts are '$counts', expected '10 5 7'"
hbm=$(python3 -c "import json,sys; d=json.load(sys.stdin); print([g['hbm_bytes'] for g in d['gpus'] if g['name']=='h100-sxm'][0])" <"$tmp/all.json")
[ "$hbm" = "85899345920" ] || fail "h100-sxm hbm_bytes in --json is $hbm, expected 80 GiB in bytes"

# What --json prints is what the preset files say: every number in a
# datasheet unit is the double nearest its decimal in the base unit
# (66.9 TFLOP/s -> 66900000000000.0, 100 us -> 0.0001), never float noise.
python3 - "$tmp/all.json" "$NESTFAST_SOURCE_DIR/jobs/presets" <<'PY' || fail "presets --json shows numbers the presets do not say"
import json, pathlib, sys, tomllib
doc, root = json.load(open(sys.argv[1])), pathlib.Path(sys.argv[2])
def same(shown, written, exponent, what):
    expected = float(repr(float(written)) + "e" + str(exponent))
    assert shown == expected, "%s: %r, the file says %r x 1e%d" % (what, shown, written, exponent)
checked = 0
for gpu in doc["gpus"]:
    said = tomllib.loads((root / "gpus" / (gpu["name"] + ".toml")).read_text())["gpu"]
    for key, shown, exponent in (("hbm_bandwidth_TBps", "hbm_bandwidth_Bps", 12), ("peak_tflops_bf16", "peak_flops_bf16", 12),
                                 ("peak_tflops_fp8", "peak_flops_fp8", 12), ("peak_tflops_fp32", "peak_flops_fp32", 12)):
        same(gpu[shown], said[key], exponent, gpu["name"] + "." + shown); checked += 1
    for point, written in zip(gpu["matmul_efficiency"], said["matmul_efficiency"]):
        same(point["flops"], written["gflop"], 9, gpu["name"] + ".matmul_efficiency"); checked += 1
for cluster in doc["clusters"]:
    said = tomllib.loads((root / "clusters" / (cluster["name"] + ".toml")).read_text())["cluster"]
    for level, written in zip(cluster["levels"], said["level"]):
        same(level["bandwidth_Bps"], written["bandwidth_GBps"], 9, cluster["name"] + "." + level["name"])
        same(level["latency_s"], written["latency_us"], -6, cluster["name"] + "." + level["name"])
        assert level["oversubscription"] == written.get("oversubscription", 1), (cluster["name"], level)
        checked += 3
print("presets --json:", checked, "numbers as the files say them")
PY
grep -q '"peak_flops_fp32": *66900000000000.0[,}]' <("$NESTFAST" presets --kind gpus --json | python3 -m json.tool) ||
  fail "h100-sxm peak_flops_fp32 is not 66900000000000.0"

kinds=$("$NESTFAST" presets --kind gpus --json | python3 -c "import json,sys; print(sorted(json.load(sys.stdin)))")
[ "$kinds" = "['gpus']" ] || fail "--kind gpus --json gave kinds $kinds"
"$NESTFAST" presets --kind clusters | grep -c "^clusters (7)$" >/dev/null || fail "--kind clusters has no clusters table"
if "$NESTFAST" presets --kind gpus | grep -c "^models" >/dev/null; then fail "--kind gpus also printed models"; fi

expect_exit2_one_line() {  # <pattern> <command...>: exit 2, one stderr line matching the pattern
  local pattern=$1; shift
  set +e
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc, expected 2 (stderr: $(cat "$tmp/err"))"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "'$*' printed more than one error line: $(cat "$tmp/err")"
  grep -Eq "$pattern" "$tmp/err" || fail "'$*' error does not match '$pattern': $(cat "$tmp/err")"
}

mkdir -p "$tmp/presets/models"
cp "$NESTFAST_SOURCE_DIR/jobs/presets/models/llama2-7b.toml" "$tmp/presets/models/broken.toml"
sed -i -e 's/^name = "llama2-7b"/name = "broken"/' -e 's/^kv_heads = 32/kv_heads = -32/' "$tmp/presets/models/broken.toml"
line=$(grep -n '^kv_heads' "$tmp/presets/models/broken.toml" | cut -d: -f1)
NESTFAST_PRESETS="$tmp/presets" expect_exit2_one_line \
  "^nestfast: error: .*/broken\.toml:$line: model\.kv_heads: must be at least 1, got -32$" "$NESTFAST" presets

NESTFAST_PRESETS="$tmp/no-such-dir" expect_exit2_one_line "NESTFAST_PRESETS: '.*no-such-dir' is not a directory" \
  "$NESTFAST" presets
set +e
"$NESTFAST" presets --kind widgets >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--kind widgets exited $rc, expected 2 (a usage error)"
grep -q -- "--kind: widgets not in" "$tmp/err" || fail "--kind widgets: unexpected message: $(cat "$tmp/err")"
# A preset of one's own may leave out oversubscription (1) and source (one
# warning line naming the file, then it is used as written).
mkdir -p "$tmp/own/clusters"
cat > "$tmp/own/clusters/my-cluster.toml" <<'TOML'
[cluster]
name = "my-cluster"
gpu = "h100-sxm"

[[cluster.level]]
name = "node"
group_size = 8
bandwidth_GBps = 450
latency_us = 2

[[cluster.level]]
name = "fabric"
group_size = 0
bandwidth_GBps = 50
latency_us = 100
TOML
NESTFAST_PRESETS="$tmp/own" "$NESTFAST" presets --kind clusters --json > "$tmp/own.json" 2> "$tmp/own.err" ||
  fail "a cluster without oversubscription or source is refused: $(cat "$tmp/own.err")"
[ "$(grep -c 'my-cluster.toml: no source' "$tmp/own.err")" -eq 1 ] && [ "$(wc -l < "$tmp/own.err")" -eq 1 ] ||
  fail "not one warning line naming the file: $(cat "$tmp/own.err")"
python3 -c '
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clusters"] if c["name"] == "my-cluster"][0]
assert [l["oversubscription"] for l in c["levels"]] == [1, 1], c["levels"]
assert c["levels"][1]["latency_s"] == 0.0001 and c["source"] == "", c' "$tmp/own.json" || fail "my-cluster is not what it says"
NESTFAST_PRESETS="$tmp/own" "$NESTFAST" solve --model llama2-7b --cluster my-cluster --gpus 16 --gbs 64 --zero 1 --mbs 1 \
  --vpp 1 --cp 1 > "$tmp/own-solve.txt" 2> "$tmp/own.err" || fail "solve on my-cluster failed: $(cat "$tmp/own.err")"
[ "$(wc -l < "$tmp/own.err")" -eq 1 ] || fail "solve printed more than the one warning: $(cat "$tmp/own.err")"
echo "presets e2e: ok"
