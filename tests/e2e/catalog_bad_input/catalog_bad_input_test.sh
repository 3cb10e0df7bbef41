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
# A leftover checkpoint that cannot be resumed is refused, with what to do.
echo "garbage" > damaged.h5.checkpoint
expect_one_line_error 2 "damaged.h5.checkpoint: cannot be opened as HDF5 (damaged?); rerun with --force" \
  "${run4[@]}" good.toml --out damaged.h5
timeout 120 "${run4[@]}" good.toml --out damaged.h5 --force > /dev/null || fail "--force does not start over"
[ -f damaged.h5 ] && [ ! -e damaged.h5.checkpoint ] || fail "--force did not write a fresh catalog"
# A leftover .partial of an interrupted final write is simply written again.
timeout 120 "${run4[@]}" good.toml --out again.h5 > /dev/null
echo "garbage" > again2.h5.partial
timeout 120 "${run4[@]}" good.toml --out again2.h5 > /dev/null || fail "a leftover .partial stops a fresh job"
cmp -s <(catalog_data again.h5) <(catalog_data again2.h5) || fail "a leftover .partial changed the catalog"
echo "catalog_bad_input e2e: ok"
