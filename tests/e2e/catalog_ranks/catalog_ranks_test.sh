#!/usr/bin/env bash
# The same job gives the same catalog data with 1, 2, 3 and 4 ranks (dynamic
# distribution, deterministic reduction), the file is an h5ls-readable
# catalog with the io.md layout, and query reads it back (text and JSON).
source "$(dirname "$0")/../catalog_lib.sh"
fresh_dir
write_small_job job.toml
# A point whose best plan in the nest space recomputes differently per stage
# (the one-line check below shows megatron-core does not): llama3-70b at 128 H100s.
cat >> job.toml <<'TOML'

[[sweep]]
model = "llama3-70b"
cluster = "h100-superpod"
gpus = [128]
global_batch = [256]
TOML

for ranks in 1 2 3 4; do
  timeout 240 "$MPIEXEC" -n "$ranks" "$NESTFAST" catalog job.toml --out "r$ranks.h5" --no-progress > "r$ranks.txt" \
    || fail "catalog with $ranks ranks failed"
  [ ! -e "r$ranks.h5.partial" ] || fail "the .partial file is left behind ($ranks ranks)"
  catalog_data "r$ranks.h5" > "r$ranks.dump"
done
for ranks in 2 3 4; do
  cmp -s r1.dump "r$ranks.dump" || { diff r1.dump "r$ranks.dump" | head -20 >&2; fail "$ranks ranks differ from 1 rank"; }
done
# The GPU batch path (its kernel emulated on the CPU) writes the same catalog.
timeout 240 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out gpu.h5 --gpu emulate --no-progress > gpu.txt \
  || fail "catalog --gpu emulate failed"
catalog_data gpu.h5 > gpu.dump
cmp -s r1.dump gpu.dump || { diff r1.dump gpu.dump | head -20 >&2; fail "--gpu emulate differs from the CPU run"; }
# --gpu on where no device is present: one line, exit 2, no file (a GPU node may run it).
if ! timeout 240 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out on.h5 --gpu on --no-progress > /dev/null 2>&1; then
  expect_one_line_error 2 "--gpu on: no GPU device present" "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out on.h5 --gpu on
  [ ! -e on.h5.partial ] && [ ! -e on.h5 ] || fail "--gpu on without a device left a file behind"
fi

# Layout (io.md): root attributes, the tables, no checkpoint left.
h5ls r4.h5 > ls.txt
for object in plans stages models clusters validation; do grep -q "^$object " ls.txt || fail "no /$object"; done
! grep -q "^checkpoint" ls.txt || fail "/checkpoint left in a finished catalog"
for attribute in format schema_version nestfast_version git_sha created_utc mpi_ranks job; do
  h5dump -a "/$attribute" r4.h5 > /dev/null || fail "no root attribute $attribute"
done
h5dump -a /mpi_ranks r4.h5 | grep -c "(0): 4" >/dev/null || fail "mpi_ranks is not 4"
h5dump -a /job r4.h5 | grep -c "e2e-small" >/dev/null || fail "the job text is not stored"
h5dump -p -H -d /plans r4.h5 | grep -c "DEFLATE" >/dev/null || fail "/plans is not compressed"
h5dump -H -d /plans r4.h5 | grep -c "H5T_STRING" >/dev/null || fail "/plans has no string columns"
! h5dump -H -d /plans r4.h5 | grep -c "H5T_VARIABLE" >/dev/null || fail "/plans has variable-length strings"
# 5 points x (3 nest rows at most + 3 baselines); every point has a best row.
best_rows=$(h5dump -d /plans r4.h5 | grep -c '"nest"' || true)
[ "$best_rows" -ge 5 ] || fail "fewer nest rows than points"

# query: text with the stage table and a Megatron-LM line, JSON that parses.
"$NESTFAST" query r4.h5 --model llama2-7b --gpus 16 > q.txt || fail "query failed"
grep -q "Megatron-LM (pretrain_gpt.py, framework megatron-core): --tensor-model-parallel-size" q.txt || fail "query prints no Megatron-LM line"
grep -q "stage" q.txt || fail "query prints no stage table"
"$NESTFAST" query r4.h5 --model mixtral-8x7b --gpus 64 --cluster h200-superpod --json > q.json || fail "query --json failed"
python3 -c 'import json,sys; d=json.load(open("q.json")); assert d[0]["model"]=="mixtral-8x7b" and d[0]["gpus"]==64, d' \
  || fail "query --json output is wrong"
# One Megatron-LM line: the stored best plan of every point gives the line
# `solve` prints for the same point and search space; under megatron-core no
# plan recomputes differently per stage (the catalog would say "mixed"), not
# even llama3-70b at 128 H100s, whose best plan in the nest space does.
for point in "llama2-7b h100-superpod 8 64" "llama2-7b h100-superpod 16 64" "llama2-7b h100-superpod 32 64" \
             "mixtral-8x7b h200-superpod 64 256" "llama3-70b h100-superpod 128 256"; do
  read -r model cluster gpus gbs <<< "$point"
  "$NESTFAST" query r4.h5 --model "$model" --gpus "$gpus" --cluster "$cluster" --json > stored.json || fail "query $point failed"
  "$NESTFAST" solve --model "$model" --cluster "$cluster" --gpus "$gpus" --gbs "$gbs" --zero 1 --mbs 1 --vpp 1 --cp 1 \
    --top-k 3 --no-baselines --json > solved.json || fail "solve $point failed"
  python3 - stored.json solved.json <<'PY' || fail "query and solve print different Megatron-LM lines for $point"
import json, sys
stored, solved = json.load(open(sys.argv[1]))[0]["plans"][0], json.load(open(sys.argv[2]))["plans"][0]
assert stored["megatron_args"] == solved["megatron_args"], (stored["megatron_args"], solved["megatron_args"])
assert stored["megatron_notes"] == solved["megatron_notes"]
print(stored["recompute"])
PY
done > recompute.txt
! grep -q "^mixed$" recompute.txt || fail "a megatron-core plan recomputes differently per stage"
expect_one_line_error 2 "no stored plan for model 'llama2-7b' at 12 GPUs; stored GPU counts: 8, 16, 32" \
  "$NESTFAST" query r4.h5 --model llama2-7b --gpus 12
# --slice I/N (Slurm array tasks): part files with disjoint blocks of the
# global point ids, together the whole sweep, each marked with its slice.
point_ids() {  # the value before each model name is the row's point_id
  h5dump -d /plans -y -w 0 -o ids.txt "$1" > /dev/null
  grep -B1 -E '^ *"(llama2-7b|mixtral-8x7b|llama3-70b)",$' ids.txt | grep -E '^ *[0-9]+,$' | tr -dc '0-9\n' | sort -nu
}
for slice in 0 1; do
  timeout 120 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --slice "$slice/2" --no-progress > /dev/null \
    || fail "slice $slice/2 failed"
  [ -f "small.part${slice}of2.h5" ] || fail "no part file for slice $slice/2"
  h5dump -a /slice "small.part${slice}of2.h5" | grep -c "\"$slice/2\"" >/dev/null || fail "part $slice lacks its slice attribute"
done
[ "$( (point_ids small.part0of2.h5; point_ids small.part1of2.h5) | tr '\n' ' ')" = "0 1 2 3 4 " ] \
  || fail "the slices do not partition the sweep points: $( (point_ids small.part0of2.h5; point_ids small.part1of2.h5) | tr '\n' ' ')"
echo "catalog_ranks e2e: ok"
