#!/usr/bin/env bash
# The FAST targets of issue 18 on the emulated network (netcluster.sh): per
# topology, workload and size, every algorithm's time per exchange (median of
# REPEATS runs, each run the mean of ITERS iterations), FAST against the
# lower bound at the configured NIC rate, and the ratios of the others to
# FAST taken inside each run (their median). The machine's load average is
# printed before and after, and its range over the runs (sampled as each run
# starts): quote it with the numbers.
#   tests/testbed/bench.sh [NESTFAST]
# Environment: TOPOLOGIES ("4x2 8x1 2x4"), WORKLOADS ("uniform zipf:0.8 hot:5"),
# SIZES ("4M 16M"), REPEATS (3), ITERS (3), RATE_4x2/RATE_8x1 (200mbit/100mbit),
# BUFFER (64k), FAST_ARGS (extra a2a bench arguments, e.g. "--fast-chunk 16K"),
# OUT (a directory for the raw JSON, default a temp dir).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nestfast=${1:-$here/../../build/default/jobs/nestfast}
testbed=$here/netcluster.sh
topologies=${TOPOLOGIES:-4x2 8x1 2x4}
workloads=${WORKLOADS:-uniform zipf:0.8 hot:5}
sizes=${SIZES:-4M 16M}
repeats=${REPEATS:-3}
iters=${ITERS:-3}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
algos=(fast mpi pairwise fanout)
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg); raw rows in $out"

for topology in $topologies; do
  servers=${topology%x*}
  ranks=${topology#*x}
  rate_var=RATE_$topology
  rate=${!rate_var:-$([ "$servers" -ge 8 ] && echo 100mbit || echo 200mbit)}
  eval "$("$testbed" up "$servers" "$ranks" "$rate" "${BUFFER:-64k}")"
  trap '"$testbed" down' EXIT
  for workload in $workloads; do
    for size in $sizes; do
      for ((r = 0; r < repeats; r++)); do
        # A different algorithm goes first in every repeat.
        order=("${algos[@]:r % 4}" "${algos[@]:0:r % 4}")
        list=$(IFS=,; echo "${order[*]}")
        name="$out/$topology-${workload//:/_}-$size-$r"
        cut -d' ' -f1 /proc/loadavg >> "$out/load"
        # shellcheck disable=SC2086
        "$testbed" run --timeout 590 -- -n $((servers * ranks)) "$nestfast" a2a bench --algos "$list" --workload "$workload" \
          --sizes "$size:$size" --iters "$iters" --warmup 1 --json "$name.json" ${FAST_ARGS:-} > "$name.txt" 2>&1 ||
          { echo "run failed: $(tail -3 "$name.txt")" >&2; exit 1; }
        cp "$NESTFAST_TESTBED/last-run.json" "$name.counters.json"
      done
    done
  done
  "$testbed" down
  trap - EXIT
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# load average as the runs started: $(sort -n "$out/load" | awk '{ v[NR] = $1 } END { printf "min %s, median %s, max %s over %d runs", v[1], v[int((NR + 1) / 2)], v[NR], NR }')"

python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    if path.endswith(".counters.json"): continue
    topology, workload, size, _ = os.path.basename(path)[:-5].split("-")
    doc = json.load(open(path))
    rows = {row["algo"]: row for row in doc["rows"]}
    drops = sum(s["down_drops"] for s in json.load(open(path[:-5] + ".counters.json"))["servers"])
    runs.setdefault((topology, workload.replace("_", ":"), size), []).append((rows, drops))
# pairwise/LB next to fast/LB: pairwise is one-to-one too, so where it is near
# the bound no schedule can be much faster than it.
print("| S x M | workload | size/rank | fast ms | mpi ms | pairwise ms | fanout ms | fast/LB | pairwise/LB | mpi/fast | pairwise/fast | fanout/fast | drops (run) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (topology, workload, size), items in sorted(runs.items()):
    med = lambda algo: statistics.median(r[algo]["time_avg_us"] for r, _ in items) / 1e3
    ratio = lambda algo: statistics.median(r[algo]["time_avg_us"] / r["fast"]["time_avg_us"] for r, _ in items)
    eff = lambda algo: statistics.median((r[algo]["efficiency_pct"] or 0) / 100 for r, _ in items)
    print(f"| {topology} | {workload} | {size} | {med('fast'):.0f} | {med('mpi'):.0f} | {med('pairwise'):.0f} | {med('fanout'):.0f} "
          f"| {eff('fast'):.2f} | {eff('pairwise'):.2f} | {ratio('mpi'):.2f} | {ratio('pairwise'):.2f} | {ratio('fanout'):.2f} | {statistics.median(d for _, d in items):.0f} |")
PY
