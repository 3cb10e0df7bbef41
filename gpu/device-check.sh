#!/usr/bin/env bash
# gpu/device-check.sh <outdir>: the device checks of nestfast's gpu/ in one
# short run (under 5 minutes on one H200 node with 16 cores):
#   1. environment   what GPU, driver, compilers and MPI the node has
#   2. configure     cmake --preset gpu (CUDA sm_90; HIP too where hipcc exists)
#   3. build         nestfast, unit_gpu, unit_gpu_mpi and nestfast-gpu-bench only
#   4. unit_gpu      the gpu/ unit tests (and unit_gpu_mpi); on a GPU node none may skip
#   5. gpu_bench     batched DP (device vs CPU, bit-exact check) and copy plans
#   6. solve_gpu     nestfast solve --gpu on vs off on one large sweep point
#   7. a2a_device    mpiexec -n 4 nestfast a2a bench --device --virtual-servers 4
# Everything goes to <outdir> (format: docs/gpu.md): summary.tsv (one row per
# step: step, status, seconds, detail), <step>.log for each step, and the
# JSON files the steps write. Exit status: 0 when no step failed.
#
# Environment: NESTFAST_DEVICE_BUILD_DIR (default build/gpu),
# NESTFAST_DEVICE_SOLVE_ARGS (the sweep point of step 6), MPIEXEC.
set -uo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: gpu/device-check.sh <outdir>" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
build=${NESTFAST_DEVICE_BUILD_DIR:-$root/build/gpu}
solve_args=${NESTFAST_DEVICE_SOLVE_ARGS:---model gpt3-175b --cluster h200-superpod --gpus 1024 --gbs 1536}
mpiexec=${MPIEXEC:-mpiexec}
summary=$out/summary.tsv
printf 'step\tstatus\tseconds\tdetail\n' >"$summary"
failed=0

record() {  # record STEP STATUS SECONDS DETAIL
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$summary"
  printf '%-12s %-12s %6ss  %s\n' "$1" "$2" "$3" "$4"
  [[ $2 == fail ]] && failed=1
  return 0
}

# run_step STEP LIMIT_S DETAIL_ON_SUCCESS COMMAND...: output to STEP.log.
run_step() {
  local name=$1 limit=$2 detail=$3
  shift 3
  local start=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local seconds=$((SECONDS - start))
  if ((rc == 0)); then
    record "$name" ok "$seconds" "$detail"
  elif ((rc == 124)); then
    record "$name" fail "$seconds" "timed out after ${limit}s"
  else
    local why
    why=$(grep -m1 -iE 'error|fail' "$out/$name.log" || head -1 "$out/$name.log")
    record "$name" fail "$seconds" "exit $rc: ${why:0:200}"
  fi
  return $rc
}

# 1. environment
{
  date -u +%FT%TZ
  git -C "$root" rev-parse HEAD 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version 2>&1 | tail -2
  command -v hipcc && hipcc --version 2>&1 | head -2
  cmake --version | head -1
  mpichversion 2>/dev/null | head -1 || "$mpiexec" --version 2>&1 | head -1
  nproc
} >"$out/environment.log" 2>&1
record environment ok 0 "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi')"

# 2-3. configure and build
if ! run_step configure 120 "preset gpu in $build" \
  cmake -S "$root" -B "$build" --preset gpu -DCMAKE_CUDA_ARCHITECTURES=90; then
  record build skipped 0 "configure failed"
  echo "device-check: results in $out"
  exit 1
fi
grep -m1 'GPU back-ends' "$out/configure.log" >>"$out/environment.log"
if ! run_step build 240 "nestfast unit_gpu unit_gpu_mpi nestfast-gpu-bench" \
  cmake --build "$build" -j "$(nproc)" --target nestfast unit_gpu unit_gpu_mpi nestfast_gpu_bench; then
  echo "device-check: results in $out"
  exit 1
fi
nestfast=$build/jobs/nestfast

# 4. unit tests: on a GPU node a skip means the device was not usable.
run_step unit_gpu 120 "all passed" "$build/tests/unit/gpu/unit_gpu" --gtest_output="json:$out/unit_gpu.json"
run_step unit_gpu_mpi 60 "all passed" "$build/tests/unit/gpu_mpi/unit_gpu_mpi" \
  --gtest_output="json:$out/unit_gpu_mpi.json"
device_skips=$(cat "$out/unit_gpu.log" "$out/unit_gpu_mpi.log" | grep -c 'no GPU device present')
if ((device_skips > 0)); then
  record unit_gpu_device fail 0 "$device_skips device tests skipped: no usable GPU"
else
  record unit_gpu_device ok 0 "no device test skipped; $(grep -m1 'GPU-aware MPI:' "$out/unit_gpu_mpi.log")"
fi

# 5. batched DP and copy plans
run_step gpu_bench 150 "see gpu_bench.json" bash -c "'$build/jobs/nestfast-gpu-bench' --gpus 256 >'$out/gpu_bench.json'"

# 6. solve: the same sweep point on the CPU and on the GPU
if "$nestfast" solve --help 2>/dev/null | grep -qE -- '--gpu( |$)'; then
  run_step solve_cpu 120 "$solve_args --gpu off" \
    bash -c "'$nestfast' solve $solve_args --gpu off --json >'$out/solve_cpu.json'"
  run_step solve_gpu 120 "$solve_args --gpu on" \
    bash -c "'$nestfast' solve $solve_args --gpu on --json >'$out/solve_gpu.json'"
  run_step solve_same 10 "same best plan and alternatives" python3 -c "
import json, sys
cpu, gpu = (json.load(open(f)) for f in sys.argv[1:])
print('wall_s cpu', cpu['stats']['wall_s'], 'gpu', gpu['stats']['wall_s'], gpu['stats']['dp_device'])
sys.exit(0 if cpu['plans'] == gpu['plans'] else 1)
" "$out/solve_cpu.json" "$out/solve_gpu.json"
else
  record solve_gpu unsupported 0 "this nestfast has no 'solve --gpu'"
fi

# 7. FAST alltoallv on device buffers, 4 ranks on the one GPU as 4 servers
run_step a2a_device 120 "see a2a_device.json" \
  "$mpiexec" -n 4 "$nestfast" a2a bench --device --virtual-servers 4 --sizes 1M:64M --json "$out/a2a_device.json"

echo "device-check: results in $out"
exit $failed
