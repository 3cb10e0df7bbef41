#!/usr/bin/env bash
# Bad input to the MPI catalog job: each case is one line on stderr (rank 0
# only), a non-zero exit of every rank, and never a hang.
source "$(dirname "$0")/../catalog_lib.sh"
fresh_dir
run4=("$MPIEXEC" -n 4 "$NESTFAST" catalog --no-progress)

printf '[job\nname = "x"\n' > malformed.toml
expect_one_line_error 2 "malformed.toml:1: TOML syntax" "${run4[@]}" malformed.toml

write_small_job good.toml
sed 's/^top_k = 3/top_k = 3\ntensor_parallel = [2]/' good.toml > unknown.toml
expect_one_line_error 2 "unknown.toml:23: search.tensor_parallel: unknown key" "${run4[@]}" unknown.toml

sed 's/^gpus = \[8, 16, 32\]/gpus = [8, 12]/' good.toml > indivisible.toml
expect_one_line_error 2 "indivisible.toml:8: sweep\[0\].gpus: 12 is not a multiple of the 8 GPUs per node" "${run4[@]}" indivisible.toml

sed 's/^gpus = \[8, 16, 32\]/gpus = [8, -16]/' good.toml > negative.toml
expect_one_line_error 2 "negative.toml:8: sweep\[0\].gpus\[1\]: -16 is out of range" "${run4[@]}" negative.toml

sed 's/^gpus = \[8, 16, 32\]/gpus = [8, nan]/' good.toml > nan.toml
expect_one_line_error 2 "nan.toml:8: sweep\[0\].gpus\[1\]: expected an integer, got NaN" "${run4[@]}" nan.toml

sed 's/^model = \["llama2-7b"\]/model = ["llama9-1t"]/' good.toml > unknown_model.toml
expect_one_line_error 2 "unknown_model.toml:6: sweep\[0\].model:" "${run4[@]}" unknown_model.toml

expect_one_line_error 2 "cannot read the job file" "${run4[@]}" missing.toml
expect_one_line_error 2 "the output directory does not exist" "${run4[@]}" good.toml --out /nonexistent/dir/c.h5
mkdir -p readonly && chmod 555 readonly
if [ "$(id -u)" -ne 0 ]; then
  expect_one_line_error 2 "the output directory is not writable" "${run4[@]}" good.toml --out readonly/c.h5
fi
expect_one_line_error 2 "--slice: \"4/4\" is not I/N" "${run4[@]}" good.toml --slice 4/4

# A finished catalog is not overwritten without --force.
echo "not a catalog" > small.h5
expect_one_line_error 2 "small.h5: a finished catalog exists; pass --force" "${run4[@]}" good.toml
# Leftover .partial files that cannot be resumed are refused, with what to do.
timeout 120 "$MPIEXEC" -n 2 "$NESTFAST" catalog good.toml --out finished.h5 --no-progress > /dev/null
mv finished.h5 finished.h5.partial  # as if killed between removing /checkpoint and the rename
expect_one_line_error 2 "finished.h5.partial: is a finished catalog whose final rename was interrupted" \
  "${run4[@]}" good.toml --out finished.h5
echo "garbage" > damaged.h5.partial
expect_one_line_error 2 "damaged.h5.partial: cannot be opened as HDF5 (damaged?); rerun with --force" \
  "${run4[@]}" good.toml --out damaged.h5
timeout 120 "${run4[@]}" good.toml --out damaged.h5 --force > /dev/null || fail "--force does not start over"
[ -f damaged.h5 ] && [ ! -e damaged.h5.partial ] || fail "--force did not write a fresh catalog"
echo "catalog_bad_input e2e: ok"
