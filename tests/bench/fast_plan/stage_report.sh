#!/usr/bin/env bash
# Stages and predicted time against the server bound, 8 to 256 servers x 8
# GPUs, 32 MiB per GPU, NIC 50 GB/s 2 us, scale-up 450 GB/s 1 us: the
# latency-aware decomposition (auto at a stage cost of the NIC latency) next
# to the exact Birkhoff one (issue 18). Times from the flow model (comm/sim):
# pipelined (the granted pipeline of comm/exec) and step-synchronous.
#   tests/bench/fast_plan/stage_report.sh [NESTFAST] [SERVERS...]
set -euo pipefail
nestfast=${1:-build/default/jobs/nestfast}
shift || true
servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=(8 16 32 64 128 256)
printf '%-14s %7s | %-8s %6s %7s %9s %9s %9s | %8s %9s %9s\n' workload servers method stages loss% pipe/lb sync/lb plan_ms \
  exact_K exact_pipe exact_sync
for w in uniform random zipf:0.8 hot:5 moe:256,2,0.8; do
  for s in "${servers[@]}"; do
    row=()
    for method in auto birkhoff; do
      "$nestfast" a2a plan --servers "$s" --gpus-per-server 8 --workload "$w" --method "$method" --simulate --json > /tmp/stage_report.$$.json
      row+=("$(python3 - /tmp/stage_report.$$.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
sim = p["simulate"]; lb = sim["server_bound_s"]
fast = next(a for a in sim["algorithms"] if a["algo"] == "fast")
print(p["method"], len(p["stages"]), f'{100 * p["loss_vs_lower_bound"]:.2f}', f'{fast["time_s"] / lb:.3f}',
      f'{fast["step_synchronous_time_s"] / lb:.3f}', f'{1e3 * p["plan_time_s"]:.1f}')
PY
)")
    done
    read -r m k loss pipe sync ms <<< "${row[0]}"
    read -r _ ek _ epipe esync _ <<< "${row[1]}"
    printf '%-14s %7s | %-8s %6s %7s %9s %9s %9s | %8s %9s %9s\n' "$w" "$s" "$m" "$k" "$loss" "$pipe" "$sync" "$ms" "$ek" "$epipe" "$esync"
  done
done
rm -f /tmp/stage_report.$$.json
