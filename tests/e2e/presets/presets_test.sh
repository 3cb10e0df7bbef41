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
echo "presets e2e: ok"
