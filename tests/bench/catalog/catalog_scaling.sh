#!/usr/bin/env bash
# Catalog job scaling: one 240-point sweep at 1, 2, 4 and 8 ranks (one
# OpenMP thread each), wall time and parallel efficiency against 1 rank, and
# a check that every rank count wrote the same catalog data.
#   tests/bench/catalog/catalog_scaling.sh [nestfast binary] [rank counts...]
# Not run by ctest (it takes minutes); the numbers go into the notes.
set -euo pipefail
NESTFAST=${1:-build/jobs/nestfast}
shift || true
RANKS=("${@:-1 2 4 8}")
read -r -a RANKS <<< "${RANKS[*]}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=1
cat > "$WORK/bench.toml" <<'TOML'
[job]
name = "catalog-scaling-bench"
out = "bench.h5"

[[sweep]]
model = ["llama2-7b", "llama3-70b", "mixtral-8x7b", "gpt3-175b"]
cluster = ["h100-superpod", "h200-superpod", "selene-a100"]
gpus = [64, 128, 256, 512, 1024]
global_batch = [512, 1024, 2048, 4096]

[search]
zero = [1]
mbs = [1]
vpp = [1]
cp = [1]
sp = [true]
top_k = 3
baselines = ["manual", "phaze", "mcmc"]
TOML
printf "%6s %10s %12s %11s\n" ranks wall_s speedup efficiency
base=""
for ranks in "${RANKS[@]}"; do
  start=$(date +%s.%N)
  mpiexec -n "$ranks" "$NESTFAST" catalog "$WORK/bench.toml" --out "$WORK/r$ranks.h5" --no-progress > "$WORK/r$ranks.txt"
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  [ -n "$base" ] || base=$wall
  awk -v r="$ranks" -v w="$wall" -v b="$base" 'BEGIN { printf "%6d %10.2f %12.2f %10.1f%%\n", r, w, b / w, 100 * b / (w * r) }'
  h5dump -d /plans -d /stages "$WORK/r$ranks.h5" | tail -n +2 > "$WORK/r$ranks.dump"
  cmp -s "$WORK/r${RANKS[0]}.dump" "$WORK/r$ranks.dump" || echo "  WARNING: $ranks ranks wrote different data"
done
head -1 "$WORK/r${RANKS[0]}.txt"
