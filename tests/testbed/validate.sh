#!/usr/bin/env bash
# The solver's predicted all-to-all time against the measured one on the
# emulated network (netcluster.sh): a job whose sweep prices an MoE model
# (mixtral-8x7b, ep = every rank) on the testbed's own cluster preset
# ($NESTFAST_TESTBED/cluster.toml) runs under `nestfast run`, which groups the
# ranks into servers by shared-memory node, i.e. by namespace, so the
# validated all-to-alls cross the shaped NICs. Prints per topology and size
# the measured time of each algorithm, the lower bound at the declared rates,
# the solver's prediction for the chosen plan (FAST) and its error, and the
# load average before and after.
#   tests/testbed/validate.sh [NESTFAST]
# Environment: TOPOLOGIES ("4x2 8x1 2x4"; each gets its own testbed, or the
# one of $NESTFAST_TESTBED when that is set), SIZES ("1M:4M"), ALGOS
# ("fast,mpi,pairwise"), ITERS (3), SKEW (validate.skew, "zipf:0.8" as in
# the default job), RATE_4x2/... (200mbit, 100mbit at >= 8 servers), BUFFER
# (64k), OUT (a directory for the jobs, catalogs and validation.json, default
# a temp dir).
# The prediction is the solver's price of the very traffic each row ran
# (jobs/traffic_price.hpp), so any skew can be validated.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nestfast=$(realpath "${1:-$here/../../build/default/jobs/nestfast}")
testbed=$here/netcluster.sh
sizes=${SIZES:-1M:4M}
iters=${ITERS:-3}
algos=${ALGOS:-fast,mpi,pairwise}
out=$(realpath -m "${OUT:-$(mktemp -d)}")
mkdir -p "$out"
python=/usr/bin/python3  # Debian's, with python3-h5py
trap 'exit 130' INT TERM  # so that the EXIT trap takes a testbed this script made down
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg); jobs and catalogs in $out"

validate_here() {  # validate_here NAME: one job on the testbed of $NESTFAST_TESTBED
  local name=$1
  # shellcheck disable=SC1091
  . "$NESTFAST_TESTBED/env"
  local ranks=$((SERVERS * RANKS_PER_SERVER))
  local quoted_algos
  quoted_algos=$(sed 's/[^,][^,]*/"&"/g; s/,/, /g' <<< "$algos")
  cat > "$out/$name.toml" <<EOF
[job]
name = "testbed-validate-$name"
out = "$out/$name.h5"

[[sweep]]
model = ["mixtral-8x7b"]
cluster = ["$NESTFAST_TESTBED/cluster.toml"]
gpus = [$ranks]
global_batch = [$ranks]
seq_len = [4096]

[search]
ep = [$ranks]   # the testbed's slow network makes ep = 1 best otherwise
top_k = 1

[validate]
enabled = true
sizes = "$sizes"
algos = [$quoted_algos]
skew = "${SKEW:-zipf:0.8}"
nics_per_server = 1
fast_chunk = "16K"
iterations = $iters
warmup = 1
EOF
  "$testbed" run --timeout 590 -- -n "$ranks" "$nestfast" run "$out/$name.toml" --force > "$out/$name.txt" 2>&1 ||
    { echo "validation on $name failed: $(tail -3 "$out/$name.txt")" >&2; exit 1; }
  cp "$NESTFAST_TESTBED/last-run.json" "$out/$name.counters.json"
  echo "$name ${SERVERS}x${RANKS_PER_SERVER}" >> "$out/topologies"
}

: > "$out/topologies"
if [ -n "${NESTFAST_TESTBED:-}" ] && [ -z "${TOPOLOGIES:-}" ]; then
  validate_here current
else
  for topology in ${TOPOLOGIES:-4x2 8x1 2x4}; do
    servers=${topology%x*}
    rate_var=RATE_$topology
    rate=${!rate_var:-$([ "$servers" -ge 8 ] && echo 100mbit || echo 200mbit)}
    eval "$("$testbed" up "$servers" "${topology#*x}" "$rate" "${BUFFER:-64k}")"
    trap '"$testbed" down' EXIT
    validate_here "$topology"
    "$testbed" down
    trap - EXIT
  done
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$python" - "$out" <<'PY'
import json, os, sys
import h5py
out = sys.argv[1]
rows = []
for line in open(os.path.join(out, "topologies")):
    name, topology = line.split()
    with h5py.File(os.path.join(out, name + ".h5"), "r") as catalog:
        for r in catalog["/validation/alltoallv"][()]:
            rows.append({"topology": topology, "servers": int(r["servers"]), "gpus_per_server": int(r["gpus_per_server"]),
                         "algo": r["algo"].decode(), "bytes_per_rank": int(r["bytes_per_rank"]),
                         "time_avg_us": float(r["time_avg_us"]), "time_min_us": float(r["time_min_us"]),
                         "lower_bound_us": float(r["lower_bound_us"]), "efficiency_pct": float(r["efficiency_pct"]),
                         "wrong_bytes": int(r["wrong_bytes"]), "predicted_us": float(r["predicted_us"])})
for r in rows:
    r["pred_err"] = r["time_avg_us"] / r["predicted_us"] - 1 if r["predicted_us"] > 0 else None
json.dump(rows, open(os.path.join(out, "validation.json"), "w"), indent=1)
print("| S x M | algo | size/rank | measured ms | lower bound ms | eff % | predicted ms | measured / predicted - 1 |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    err = "-" if r["pred_err"] is None else f"{100 * r['pred_err']:+.1f}%"
    print(f"| {r['topology']} | {r['algo']} | {r['bytes_per_rank'] >> 10} KiB | {r['time_avg_us'] / 1e3:.1f} "
          f"| {r['lower_bound_us'] / 1e3:.1f} | {r['efficiency_pct']:.1f} | {r['predicted_us'] / 1e3:.1f} | {err} |")
PY
