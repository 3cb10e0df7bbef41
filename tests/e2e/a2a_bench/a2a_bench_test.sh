#!/usr/bin/env bash
# `nestfast a2a bench` end to end on 4 ranks as 2 virtual servers: the output
# parses by osu_alltoallv's rules (header lines start with '#', rows start with
# the size), every algorithm has a row per size with 0 wrong bytes, the JSON
# agrees with the table, a matrix file works, and bad input fails in one line.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$TEST_TMPDIR"
cd "$TEST_TMPDIR"

"$MPIEXEC" -n 4 "$NESTFAST" a2a bench --algos fast,mpi,pairwise,fanout,auto --auto-threshold 4K \
  --workload zipf:0.8 --sizes 1K:8K --iters 3 --warmup 1 --virtual-servers 2 --json bench.json > bench.txt \
  || fail "bench exited $?: $(cat bench.txt)"

python3 - bench.txt bench.json <<'PY'
import json, sys
text, doc = open(sys.argv[1]).read().splitlines(), json.load(open(sys.argv[2]))
def fail(message): sys.exit("FAIL: " + message)
headers = [l for l in text if l.startswith("#")]
rows = [l.split() for l in text if l.strip() and not l.startswith("#")]
if not any("Avg Latency(us)" in h for h in headers): fail("no OSU column header")
columns = headers[-1].lstrip("# ").replace("Avg Latency(us)", "Avg").replace("Min Latency(us)", "Min") \
    .replace("Max Latency(us)", "Max").split()
if columns[:5] != ["Size", "Avg", "Min", "Max", "Iterations"]: fail("columns " + str(columns))
seen = {}
for row in rows:
    if len(row) != len(columns): fail("row has %d fields, header %d: %s" % (len(row), len(columns), row))
    size = int(row[0])                       # osu rule: the first column is the size
    avg, low, high = (float(x) for x in row[1:4])
    if not (0 < low <= avg <= high): fail("latencies out of order: " + " ".join(row))
    if int(row[4]) != 3: fail("iterations " + row[4])
    if int(row[7]) != 0: fail("wrong bytes: " + " ".join(row))
    algo = row[-1]
    seen.setdefault(algo.split(":")[0], []).append(size)
    if algo.startswith("auto:"):
        expected = "mpi" if size < 4096 else "fast"
        if algo != "auto:" + expected: fail("auto picked %s at %d" % (algo, size))
for algo in ["fast", "mpi", "pairwise", "fanout", "auto"]:
    if sorted(seen.get(algo, [])) != [1024, 2048, 4096, 8192]: fail("%s rows at sizes %s" % (algo, seen.get(algo)))
if len(doc["rows"]) != len(rows): fail("json has %d rows, table %d" % (len(doc["rows"]), len(rows)))
if doc["servers"] != 2 or doc["ranks"] != 4: fail("json topology " + str(doc["servers"]))
if any(r["wrong_bytes"] != 0 or not r["validated"] for r in doc["rows"]): fail("json wrong bytes")
for r in doc["rows"]:
    if abs(r["algbw_GBps"] - r["bytes_per_rank"] / r["time_avg_us"] / 1e3) > 1e-9 * r["algbw_GBps"]: fail("algbw " + str(r))
if not any(r["algo"] == "fast" and r["stages"] >= 1 for r in doc["rows"]): fail("fast without stages")
PY

# The nccl-tests matrix file format: sizes come from the file (one row per algorithm).
printf '0 100 200 300\n17 0 5 0\n0 0 0 0\n4096 1 2 3\n' > matrix.txt
"$MPIEXEC" -n 4 "$NESTFAST" a2a bench --algos fast,pairwise --workload file:matrix.txt --iters 2 \
  --virtual-servers 2 > file.txt || fail "file workload exited $?"
[ "$(grep -vc '^#' file.txt)" -eq 2 ] || fail "file workload rows: $(cat file.txt)"
awk '!/^#/ && $8 != 0 { exit 1 }' file.txt || fail "file workload wrong bytes: $(cat file.txt)"

# Bad input: one line, exit 2.
# Usage: expect_usage_error PATTERN-THE-MESSAGE-MUST-CONTAIN ARGS...
expect_usage_error() {
  local pattern=$1
  shift
  set +e
  "$NESTFAST" a2a bench "$@" > /dev/null 2> err.txt
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc, expected 2"
  [ "$(wc -l < err.txt)" -eq 1 ] || fail "'$*' printed $(wc -l < err.txt) error lines: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "'$*' error does not say '$pattern': $(cat err.txt)"
}
expect_usage_error "--sizes" --sizes 8K:1K
expect_usage_error "ring" --algos fast,ring
expect_usage_error "zipf:x" --workload zipf:x
expect_usage_error "virtual servers 3" --virtual-servers 3
expect_usage_error "--device" --device
# nccl-tests' matrix rules (src/alltoallv.cu at v2.19.6): strtod values
# (1e2, 0x20, +48), every cell rounded down to 16 bytes, a matrix larger
# than the rank count gives its first N rows and columns, the scale factor
# from NCCL_TESTS_ALLTOALLV_MATRIX_SCALE or --matrix-scale, and the file from
# NCCL_TESTS_ALLTOALLV_MATRIX_FILE with --workload file. The header describes
# the matrix and never a bytes-per-rank or seed it overrides; the Size column
# is the busiest rank's bytes, as alltoallv_perf reports.
printf '0 1e2 0x20 +48 7\n16 0 16 16 7\n32 32 0 32 7\n64 0 0 0 7\n7 7 7 7 7\n' > big.txt  # 5 x 5 on 4 ranks
"$MPIEXEC" -n 4 "$NESTFAST" a2a bench --algos pairwise --workload file:big.txt --iters 1 --warmup 0 \
  --json big.json > big.out || fail "a 5 x 5 matrix on 4 ranks exited $?"
head -1 big.out | grep -q '^# OSU MPI All-to-Allv Personalized Exchange Latency Test v.* (nestfast a2a bench' ||
  fail "no OSU title line: $(head -1 big.out)"
grep -q "nccl-tests matrix 5x5, its first 4 rows and columns, scale 1," big.out || fail "header: $(grep workload big.out)"
! grep -q "bytes per rank, seed" big.out || fail "the header prints a bytes per rank the file overrides"
# Rank 0 sends 96 + 32 + 48 = 176 (1e2 -> 96); rank 3 receives 48 + 16 + 32 = 96; the busiest is rank 0's 176.
awk '!/^#/ { if ($1 != 176) exit 1 }' big.out || fail "size column: $(grep -v '^#' big.out)"
NCCL_TESTS_ALLTOALLV_MATRIX_FILE=big.txt NCCL_TESTS_ALLTOALLV_MATRIX_SCALE=2 \
  "$MPIEXEC" -n 4 "$NESTFAST" a2a bench --algos pairwise --workload file --iters 1 --warmup 0 > env.out ||
  fail "--workload file from the environment exited $?"
grep -q "scale 2," env.out && awk '!/^#/ { if ($1 != 352) exit 1 }' env.out || fail "scale 2: $(cat env.out)"
"$MPIEXEC" -n 4 "$NESTFAST" a2a bench --algos pairwise --workload file:big.txt --matrix-scale 0.5 --iters 1 \
  --warmup 0 > half.out || fail "--matrix-scale exited $?"
awk '!/^#/ { if ($1 != 80) exit 1 }' half.out || fail "scale 0.5 (50 -> 48, 16, 24 -> 16): $(grep -v '^#' half.out)"
printf '0 -16\n16 0\n' > negative.txt
expect_usage_error "negative.txt:1: '-16' is negative" --workload file:negative.txt
printf '0 16 32\n16 0\n' > ragged.txt
expect_usage_error "ragged.txt:2: 2 values, the first row has 3" --workload file:ragged.txt

echo "a2a bench e2e: ok"
