#!/usr/bin/env bash
# Seed corpora of the fuzz targets from the files nestfast ships:
#   tests/fuzz/seed_corpus.sh OUT NESTFAST
# OUT/job_toml (the default job and the tests' small job), OUT/preset_toml
# (every preset), OUT/nest_json (the NEST oracle inputs in tests/data and the
# shared fixtures when they are there), OUT/matrix (matrix files the
# workloads generate, one rank-count byte first) and OUT/catalog_reader (a
# catalog written by NESTFAST from the small job).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$1"/{job_toml,preset_toml,nest_json,matrix,catalog_reader}
out=$(realpath "$1")
nestfast=$(realpath "$2")

cp "$root/jobs/default_job.toml" "$out/job_toml/default_job.toml"
TEST_TMPDIR=$out/work
source "$root/tests/e2e/catalog_lib.sh"
set +u
write_small_job "$out/job_toml/small_job.toml"
set -u

for preset in "$root"/jobs/presets/*/*.toml; do
  cp "$preset" "$out/preset_toml/$(basename "$(dirname "$preset")")-$(basename "$preset")"
done

for input in "$root"/tests/data/nest-oracle/*.in.json "$root"/../shared/fixtures/nest-reference/*.in.json; do
  [ -f "$input" ] && cp "$input" "$out/nest_json/"
done

# N x N byte counts as nccl-tests writes them, after the byte that makes the target read N ranks.
for ranks in 2 4 8; do
  for workload in uniform zipf:1.2 moe:8,2,1; do
    name="$out/matrix/${ranks}-${workload//[:,]/_}.txt"
    printf "\\x$(printf %02x $((ranks - 1)))" > "$name"
    "$nestfast" a2a plan --servers 1 --gpus-per-server "$ranks" --workload "$workload" --bytes-per-rank 64K --json \
      --include-demand | python3 -c 'import json,sys; [print(" ".join(map(str,row))) for row in json.load(sys.stdin)["demand"]]' >> "$name"
  done
done

mkdir -p "$out/work"
(cd "$out/work" && OMP_NUM_THREADS=1 timeout 300 "$nestfast" catalog "$out/job_toml/small_job.toml" --out small.h5 --no-progress >/dev/null)
cp "$out/work/small.h5" "$out/catalog_reader/small.h5"
rm -rf "$out/work"
