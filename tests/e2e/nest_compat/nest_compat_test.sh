#!/usr/bin/env bash
# nestfast nest-compat on the 21 NEST reference fixtures and the 79 generated
# cases (read in place from the shared folder): compat mode reproduces the
# artifact's finalTimePerBatch for its own plan exactly (priced at the levels
# of its networkSkeleton) and finds a plan at least as good; the corrected
# model answers; bad input is one line and exit 2, and --out is never left
# half-written. unit_nest_compat checks the baselines and every case's plan.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

fixtures="$NESTFAST_SHARED_DIR/fixtures/nest-reference"
generated="$NESTFAST_SHARED_DIR/fixtures/nest-generated"
work="${TEST_TMPDIR:-$(mktemp -d)}"
rm -rf "$work"
mkdir -p "$work"

count=0
for input in "$fixtures"/*.in.json "$generated"/*.in.json; do
  name=$(basename "$input" .in.json)
  reference="${input%.in.json}.out.json"
  "$NESTFAST" nest-compat "$input" --model compat --reference "$reference" --out "$work/$name.json" \
    2>"$work/$name.err" || fail "$name: compat exited $?: $(cat "$work/$name.err")"
  for key in stages devicesForStage dataParallelDegree tensorParallelDegree finalTimePerBatch baselineResults; do
    grep -q "\"$key\"" "$work/$name.json" || fail "$name: no $key in the output"
  done
  # "vs artifact X (rel Y)": the artifact's plan priced by the compat model,
  # bit-identical to the artifact's own price.
  rel=$(sed -n 's/.*(rel \([^)]*\)).*/\1/p' "$work/$name.err")
  [ -n "$rel" ] || fail "$name: no comparison line: $(cat "$work/$name.err")"
  [ "$rel" = 0 ] || fail "$name: relative error $rel, expected 0"
  # "= R x reference plan": the search's plan against the artifact's, same model.
  ratio=$(sed -n 's/.*= \([^ ]*\) x reference plan.*/\1/p' "$work/$name.err")
  awk -v r="$ratio" 'BEGIN { exit !(r <= 1) }' || fail "$name: search/artifact ratio $ratio > 1"
  count=$((count + 1))
done
[ "$count" -eq 100 ] || fail "expected 21 fixtures and 79 generated cases, found $count"

# The corrected model (default) on three setups; unit_nest_compat covers all 21.
for name in tpuv4_bert_seq_N64 tpuv4_gpt3_seq_N128 h100_mixtral_seq_N128; do
  "$NESTFAST" nest-compat "$fixtures/$name.in.json" --out "$work/$name.corrected.json" \
    || fail "$name: corrected exited $?"
  grep -q '"costModel": "corrected"' "$work/$name.corrected.json" || fail "$name: corrected output unmarked"
done

# stdout is the default, and --timing reports on stderr.
"$NESTFAST" nest-compat "$fixtures/tpuv4_bert_seq_N64.in.json" --model compat --timing >"$work/stdout.json" \
  2>"$work/timing.err"
grep -q '"finalTimePerBatch"' "$work/stdout.json" || fail "no answer on stdout"
grep -q 'search + baselines' "$work/timing.err" || fail "--timing printed nothing"

expect_bad_input() {
  local what="$1" key="$2"
  shift 2
  set +e
  "$@" >"$work/bad.out" 2>"$work/bad.err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2"
  [ "$(wc -l <"$work/bad.err")" -eq 1 ] || fail "$what: error is not one line: $(cat "$work/bad.err")"
  grep -q -- "$key" "$work/bad.err" || fail "$what: error does not name $key: $(cat "$work/bad.err")"
}

source_input="$fixtures/tpuv4_llama2_seq_N64.in.json"
sed 's/"devices_per_level": \[8, 4, 2\]/"devices_per_level": [8, 4, 4]/' "$source_input" >"$work/devices.in.json"
cmp -s "$source_input" "$work/devices.in.json" && fail "the devices_per_level edit did not apply"
expect_bad_input "product of devices_per_level" devices_per_level \
  "$NESTFAST" nest-compat "$work/devices.in.json" --model compat
sed 's/"maxDevices": 64/"maxDevices": "64"/' "$source_input" >"$work/type.in.json"
expect_bad_input "string maxDevices" maxDevices "$NESTFAST" nest-compat "$work/type.in.json"
sed 's/"optimalLatencyFw": [0-9.e+-]*/"optimalLatencyFw": NaN/' "$source_input" >"$work/nan.in.json"
expect_bad_input "NaN latency" optimalLatencyFw "$NESTFAST" nest-compat "$work/nan.in.json"
sed 's/"p": 8/"p": 40/' "$source_input" >"$work/empty.in.json"
expect_bad_input "empty baseline stage" baselines.Manual "$NESTFAST" nest-compat "$work/empty.in.json"
expect_bad_input "missing file" "$work/absent.in.json" "$NESTFAST" nest-compat "$work/absent.in.json"

# A failed run leaves an existing --out untouched and creates no temporary file.
echo '{"previous": true}' >"$work/kept.json"
expect_bad_input "bad input with --out" maxDevices "$NESTFAST" nest-compat "$work/type.in.json" --out "$work/kept.json"
grep -q previous "$work/kept.json" || fail "--out was overwritten by a failed run"
ls "$work" | grep -c '\.tmp\.' >/dev/null && fail "a temporary file was left behind"

set +e
"$NESTFAST" nest-compat "$source_input" --model bogus >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--model bogus exited $rc, expected 2"
echo "nest-compat e2e: ok ($count cases)"
