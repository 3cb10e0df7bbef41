#!/usr/bin/env bash
# nestfast a2a plan: text, --verify, --simulate, --json checked by an outside
# (Python) reading of the plan, bad input, matrix files, and determinism
# across runs and optimisation levels.
set -euo pipefail
: "${NESTFAST:?}" "${TEST_TMPDIR:?}"
mkdir -p "$TEST_TMPDIR"
cd "$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. Text output, verified and simulated.
"$NESTFAST" a2a plan --servers 6 --gpus-per-server 4 --workload zipf:0.8 --bytes-per-rank 1M --verify --simulate > text.out
grep -q '^verify *ok' text.out || fail "verify did not pass: $(cat text.out)"
grep -q '^  fast ' text.out && grep -q '^  pairwise ' text.out || fail "no simulation table"
# Uneven servers and a quantum.
"$NESTFAST" a2a plan --gpus-per-server 4,2,3,1 --workload moe:16,2,1.0 --bytes-per-rank 64K --quantum 4096 --verify > uneven.out
grep -q '^verify *ok' uneven.out || fail "uneven servers: $(cat uneven.out)"

# 2. JSON, checked without our code: stages are permutations that re-sum to the
#    padded matrix, every GPU's sends are at most the stage weight, and the
#    per-GPU transfers deliver every byte of the demand exactly once.
#    The same for cover schedules (about S stages that carry at least the
#    server matrix), at a stage cost (fewest stages) and at none (lightest).
"$NESTFAST" a2a plan --servers 3 --gpus-per-server 3 --workload random --bytes-per-rank 4K --seed 7 --json > plan.json
"$NESTFAST" a2a plan --servers 5 --gpus-per-server 2 --workload random --bytes-per-rank 4K --seed 7 --method cover --json > cover.json
"$NESTFAST" a2a plan --servers 7 --gpus-per-server 2 --workload moe:6,1,1.5 --bytes-per-rank 4K --seed 3 --method cover \
  --stage-cost-us 0 --json > light.json
for file in plan.json cover.json light.json; do
python3 - "$file" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for key in ("servers", "gpus_per_server", "rank_server", "demand", "server_matrix", "padded_matrix", "stages",
            "lower_bound_s", "plan_time_s", "transfers"):
    assert key in p, key
S, m, D = p["servers"], p["gpus_per_server"], p["demand"]
N = len(p["rank_server"])
assert N == S * m and len(D) == N
resum = [[0] * S for _ in range(S)]
for st in p["stages"]:
    assert sorted(st["perm"]) == list(range(S)), st
    for s, t in enumerate(st["perm"]):
        resum[s][t] += st["weight"]
assert resum == p["padded_matrix"], "stages do not re-sum to the padded matrix"
for s_ in range(S):
    for t in range(S):
        assert p["padded_matrix"][s_][t] >= p["server_matrix"][s_][t], "stages carry less than the server matrix"
if p["method"] == "cover":
    assert len(p["stages"]) <= 4 * S, ("a cover with", len(p["stages"]), "stages on", S, "servers")
sums = {sum(r) for r in p["padded_matrix"]} | {sum(c) for c in zip(*p["padded_matrix"])}
assert len(sums) == 1, sums
weights = [st["weight"] for st in p["stages"]]
assert weights == sorted(weights, reverse=True)
server = p["rank_server"]
# Follow every byte: balance moves bytes within a server, rail stages move them
# to the rail peer, forwards bring them to the destination; intrinsic is direct.
delivered = {}
def land(dst, src, off, length):
    delivered.setdefault((src, dst), []).append((off, length))
for g in p["transfers"]:
    r = g["rank"]
    for t in g["intrinsic"]:
        assert server[t["to"]] == server[r]
        for src, dst, off, length in t["pieces"]:
            assert src == r and dst == t["to"]; land(dst, src, off, length)
    for t in g["rail"]:
        assert t["bytes"] <= weights[t["stage"]], "rail send above the stage weight"
        assert server[t["to"]] == p["stages"][t["stage"]]["perm"][server[r]]
        for src, dst, off, length in t["pieces"]:
            assert server[src] == server[r] and server[dst] == server[t["to"]]
            if dst == t["to"]: land(dst, src, off, length)
    for t in g["forward"]:
        for src, dst, off, length in t["pieces"]:
            assert dst == t["to"] and server[dst] == server[r]; land(dst, src, off, length)
for src in range(N):
    for dst in range(N):
        pieces = sorted(delivered.get((src, dst), []))
        at = 0
        for off, length in pieces:
            assert off == at, (src, dst, "gap or overlap at", at)
            at += length
        assert at == D[src][dst], (src, dst, at, D[src][dst])
print("json plan checked:", p["method"], len(p["stages"]), "stages,", N, "ranks")
PY
done
# Above 64 ranks the per-GPU transfers are left out unless asked for.
"$NESTFAST" a2a plan --servers 9 --gpus-per-server 8 --bytes-per-rank 8K --json > big.json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert "transfers" not in p and "demand" in p' big.json
"$NESTFAST" a2a plan --servers 9 --gpus-per-server 8 --bytes-per-rank 8K --json --include-transfers > big.json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert len(p["transfers"]) == 72' big.json

# 3. The nccl-tests matrix file format, and its errors named by file:line.
printf '0 10 20 30\n40 0 60 70\n80 90 0 110\n120 130 140 0\n' > matrix.txt
"$NESTFAST" a2a plan --servers 2 --gpus-per-server 2 --workload "file:matrix.txt" --verify > file.out
grep -q '^verify *ok' file.out || fail "file workload"
printf '0 10 20 30\n40 zero 60 70\n' > bad.txt
set +e
"$NESTFAST" a2a plan --servers 2 --gpus-per-server 2 --workload file:bad.txt > /dev/null 2> bad.err; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'bad.txt:2' bad.err && [ "$(wc -l < bad.err)" = 1 ] || fail "bad matrix file: rc $rc, $(cat bad.err)"

# 4. Bad input: one line, exit 2.
expect_usage_error() {
  set +e; "$NESTFAST" a2a plan "$@" > /dev/null 2> err.txt; local rc=$?; set -e
  [ "$rc" = 2 ] || fail "'$*' exited $rc, not 2"
  [ "$(wc -l < err.txt)" -le 2 ] || fail "'$*' printed more than a line or two: $(cat err.txt)"
}
expect_usage_error --servers 0 --gpus-per-server 8
expect_usage_error --servers 2 --gpus-per-server x
expect_usage_error --gpus-per-server 4,0,2
expect_usage_error --servers 3 --gpus-per-server 4,4
expect_usage_error --servers 2 --workload zipf:-1
expect_usage_error --servers 2 --workload unknown
expect_usage_error --servers 2 --bytes-per-rank 12Q
expect_usage_error --servers 2 --simulate --nic-GBps 0
expect_usage_error --servers 200 --gpus-per-server 100

# 5. Determinism: the same plan on every run and at -O0 and -O2.
# The last field is the stage cost in us (at the default 50 GB/s: x 50000 bytes); 0 = exact stages.
fingerprint() { "$NESTFAST" a2a plan --servers "$1" --gpus-per-server "$2" --workload "$3" --bytes-per-rank "$4" --seed "$5" --quantum "$6" --stage-cost-us "$7" | awk '/^fingerprint/ {print $2}'; }
for config in "8 8 zipf:0.8 33554432 1 0 2" "5 3 random 1000003 4 0 0" "12 4 hot:5 65536 2 4096 2" "7 2 moe:14,2,1.2 99999 9 0 20" "16 4 random 4000000 3 0 2"; do
  set -- $config
  a=$(fingerprint "$@"); b=$(OMP_NUM_THREADS=1 fingerprint "$@")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "two runs differ for $config: $a $b"
  if [ -n "${PLAN_FINGERPRINT_O0:-}" ]; then
    cost=$(( $7 * 50000 ))
    o0=$("$PLAN_FINGERPRINT_O0" "${@:1:6}" "$cost"); o2=$("$PLAN_FINGERPRINT_O2" "${@:1:6}" "$cost")
    [ "$a" = "$o0" ] && [ "$a" = "$o2" ] || fail "fingerprints differ across optimisation levels for $config: nestfast $a, -O0 $o0, -O2 $o2"
  else
    fail "PLAN_FINGERPRINT_O0 not set (the -O0 fingerprint program was not built)"
  fi
done
echo "a2a plan e2e: ok"
