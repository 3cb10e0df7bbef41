#!/usr/bin/env bash
# nestfast merge without Slurm: the parts of a sliced sweep (given in any
# order) merge into the data of a direct run; bad sets of parts are one-line
# errors that leave no output file behind.
source "$(dirname "$0")/../catalog_lib.sh"  # fail, fresh_dir, write_small_job, catalog_data, expect_one_line_error
fresh_dir
write_small_job job.toml

timeout 120 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out direct.h5 --no-progress > /dev/null || fail "direct run failed"
for slice in 0 1 2; do
  timeout 120 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --slice "$slice/3" --out "part-$slice.h5" --no-progress > /dev/null ||
    fail "slice $slice/3 failed"
done
# A single-process merge and one under mpiexec (rank 0 merges, the others wait).
"$NESTFAST" merge --out merged.h5 part-2.h5 part-0.h5 part-1.h5 > merge.txt || fail "merge failed"
grep -q "merged 3 parts: 4 sweep points" merge.txt || { cat merge.txt >&2; fail "merge summary is wrong"; }
timeout 60 "$MPIEXEC" -n 2 "$NESTFAST" merge --out merged2.h5 part-0.h5 part-1.h5 part-2.h5 > /dev/null || fail "merge under mpiexec failed"
catalog_data direct.h5 | tail -n +2 > direct.dump
for merged in merged.h5 merged2.h5; do
  catalog_data "$merged" | tail -n +2 > merged.dump
  cmp -s direct.dump merged.dump || { diff direct.dump merged.dump | head -20 >&2; fail "$merged differs from the direct run"; }
done
[ ! -e merged.h5.partial ] || fail "a .partial file is left behind"
h5dump -a /merged_parts merged.h5 | grep -c "(0): 3" >/dev/null || fail "merged_parts is not 3"
h5dump -a /sweep_points merged.h5 | grep -c "(0): 4" >/dev/null || fail "sweep_points of the merged catalog is not 4"

# A part of another job (another top_k): refused.
sed 's/top_k = 3/top_k = 2/' job.toml > other.toml
timeout 120 "$NESTFAST" catalog other.toml --slice 1/3 --out other-1.h5 --no-progress > /dev/null || fail "other job failed"
expect_one_line_error 2 "missing or unfinished" "$NESTFAST" merge --out bad.h5 part-0.h5 part-2.h5
expect_one_line_error 2 "given twice" "$NESTFAST" merge --out bad.h5 part-0.h5 part-1.h5 part-1.h5 part-2.h5
expect_one_line_error 2 "job text differs" "$NESTFAST" merge --out bad.h5 part-0.h5 other-1.h5 part-2.h5
expect_one_line_error 2 "exists already" "$NESTFAST" merge --out merged.h5 part-0.h5 part-1.h5 part-2.h5
expect_one_line_error 2 "not an HDF5 file" "$NESTFAST" merge --out bad.h5 job.toml
expect_one_line_error 2 "cannot be created" "$NESTFAST" merge --out no-such-dir/bad.h5 part-0.h5 part-1.h5 part-2.h5
[ ! -e bad.h5 ] && [ ! -e bad.h5.partial ] || fail "a refused merge left a file"
"$NESTFAST" merge --out merged.h5 --force part-0.h5 part-1.h5 part-2.h5 > /dev/null || fail "--force did not replace"
echo "merge e2e: ok"
