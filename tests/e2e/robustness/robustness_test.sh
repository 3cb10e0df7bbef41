#!/usr/bin/env bash
# Extreme arguments and hostile files (issue 19): each is refused on every
# rank with one line naming what is wrong and exit 2, before any work, never
# a crash, a hang, a replaced device node or a silently different answer.
source "$(dirname "$0")/../catalog_lib.sh"
fresh_dir
write_small_job job.toml
nest_input="$NESTFAST_SHARED_DIR/fixtures/nest-reference/tpuv4_bert_seq_N128.in.json"
solve=(solve --model llama2-7b --cluster h100-superpod --gbs 1024 --no-baselines)

# Counts that overflowed an int (SIGFPE) or were accepted against the cluster.
expect_one_line_error 2 "536870912 is not in \[1, 16777216\]" "$NESTFAST" "${solve[@]}" --gpus 536870912
expect_one_line_error 2 "1073741824 is not in \[1, 16777216\]" "$NESTFAST" "${solve[@]}" --gpus 1073741824
expect_one_line_error 2 "12 is not a multiple of the 8 GPUs per node" "$NESTFAST" "${solve[@]}" --gpus 12
expect_one_line_error 2 "\-\-gbs: an empty value" "$NESTFAST" solve --model llama2-7b --cluster h100-superpod --gpus 8 --gbs ""
expect_one_line_error 2 "\-\-mcmc-seed: '-1' is not an integer" "$NESTFAST" "${solve[@]}" --gpus 8 --mcmc-seed -1
expect_one_line_error 2 "\-\-mcmc-seed: '18446744073709551616' is not an integer" \
  "$NESTFAST" "${solve[@]}" --gpus 8 --mcmc-seed 18446744073709551616
# iteration time -nan s before
expect_one_line_error 2 "\-\-moe-imbalance: 1e+308 is more than" \
  "$NESTFAST" evaluate --model mixtral-8x7b --cluster h100-superpod --gpus 8 --gbs 64 --ep 8 --moe-imbalance 1e308

# Demands beyond what one alltoallv may move: they hung the FAST plan or
# wrapped to 0 bytes with exit 0.
plan=(a2a plan --servers 1 --gpus-per-server 2 --verify --simulate)
expect_one_line_error 2 "more than 1125899906842624 bytes" "$NESTFAST" "${plan[@]}" --bytes-per-rank 18446744073709551615
expect_one_line_error 2 "more than 1125899906842624 bytes" "$NESTFAST" a2a plan --servers 2 --bytes-per-rank 9223372036854775808
printf '0 18446744073709551615\n0 0\n' > max.txt
# 2^64 - 1 reads as 2^64 through strtod (nccl-tests' rule), past 64 bits.
expect_one_line_error 2 "max.txt:1: value 18446744073709551615 x scale 1 overflows 64 bits" "$NESTFAST" "${plan[@]}" --workload file:max.txt
printf '4611686018427387904 4611686018427387904\n4611686018427387904 4611686018427387904\n' > wraps.txt  # 4 x 2^62 = 2^64
expect_one_line_error 2 "wraps.txt: the demand adds up to more than" "$NESTFAST" "${plan[@]}" --workload file:wraps.txt
printf '0 18446744073709551616\n0 0\n' > overflow.txt
expect_one_line_error 2 "overflow.txt:1: value 18446744073709551616 x scale 1 overflows 64 bits" "$NESTFAST" "${plan[@]}" --workload file:overflow.txt
expect_one_line_error 2 "100000000 experts, at most 65536" "$NESTFAST" "${plan[@]}" --workload moe:100000000,2,0
# The largest demand that is allowed still plans and verifies, quickly.
printf '0 1125899906842624\n0 0\n' > largest.txt
timeout 60 "$NESTFAST" "${plan[@]}" --workload file:largest.txt > largest.out || fail "the largest allowed demand failed"
expect_one_line_error 2 "more than 1125899906842624 bytes" "$NESTFAST" a2a bench --sizes 18446744073709551615
expect_one_line_error 2 "more than 1125899906842624 bytes" "$NESTFAST" a2a bench --sizes 9223372036854775808
[ ! -s out.txt ] || { cat out.txt >&2; fail "a2a bench printed its table before refusing the sizes"; }
# Buffers larger than the memory this process may use (ulimit -v): named with the limit, not std::bad_alloc.
# An ASan build (the debug preset) cannot start under any ulimit -v: it reserves about 16 TiB of
# address space for its shadow memory first. The release suite checks this case.
if grep -qa __asan_init "$NESTFAST"; then
  echo "note: a2a bench under ulimit -v not checked: $NESTFAST is an ASan build"
else
  rc=0
  (ulimit -v 2097152; timeout 60 "$NESTFAST" a2a bench --sizes 3G --iters 1 --warmup 0 >out.txt 2>err.txt) || rc=$?
  [ "$rc" -eq 2 ] || { cat err.txt >&2; fail "a2a bench --sizes 3G under a 2 GiB limit: exit $rc"; }
  grep -q "of memory available" err.txt || { cat err.txt >&2; fail "a2a bench --sizes 3G: the limit is not named"; }
fi

# MPMD launches whose ranks disagree on an option that shapes the collectives: one line, no hang.
bench=(a2a bench --iters 2 --warmup 0)
expect_one_line_error 2 "\-\-sizes differs across ranks" \
  "$MPIEXEC" -n 1 "$NESTFAST" "${bench[@]}" --sizes 1K:4K : -n 1 "$NESTFAST" "${bench[@]}" --sizes 1K:16K
expect_one_line_error 2 "\-\-iters differs across ranks" \
  "$MPIEXEC" -n 1 "$NESTFAST" a2a bench --sizes 1K --iters 2 : -n 1 "$NESTFAST" a2a bench --sizes 1K --iters 3
expect_one_line_error 2 "\-\-out differs across ranks" \
  "$MPIEXEC" -n 1 "$NESTFAST" catalog job.toml --out a.h5 : -n 1 "$NESTFAST" catalog job.toml --out b.h5
# A default and the same value given agree.
timeout 60 "$MPIEXEC" -n 1 "$NESTFAST" "${bench[@]}" --sizes 1K : -n 1 "$NESTFAST" "${bench[@]}" --sizes 1K --seed 1 \
  > agreed.txt 2>&1 || { cat agreed.txt >&2; fail "an option given as its default was refused"; }

# Ranks whose counts disagree (an MPMD launch where each half reads its own matrix under the
# same name, so the options agree): one line naming the first mismatched pair, exit 2, no hang.
mkdir -p left right
# (Cells are multiples of 16: nccl-tests' rule rounds every cell down to 16 bytes.)
printf '0 16 32 48\n64 0 80 96\n112 128 0 144\n16 32 48 0\n' > left/m.txt
printf '0 16 32 48\n64 0 80 96\n112 128 0 144\n32 32 48 0\n' > right/m.txt  # rank 3 sends rank 0 32 bytes, not 16
counts=(a2a bench --workload file:m.txt --iters 1 --warmup 0)
expect_one_line_error 2 "alltoallv counts disagree: rank 0 expects 16 bytes from rank 3, which sends 32 (1 mismatched pairs in all)" \
  "$MPIEXEC" -n 2 -wdir left "$NESTFAST" "${counts[@]}" : -n 2 -wdir right "$NESTFAST" "${counts[@]}"

# Checks that ran only after the sweep now run before any work.
cp job.toml servers.toml
printf '\n[validate]\nenabled = true\nvirtual_servers = 3\n' >> servers.toml
expect_one_line_error 2 "servers.toml: validate.virtual_servers: 3 virtual servers need at least as many ranks; this launch has 2" \
  "$MPIEXEC" -n 2 "$NESTFAST" run servers.toml --out servers.h5 --no-progress
[ ! -e servers.h5.checkpoint ] || fail "the sweep started before the job was checked"
# seq_len = 1: the manual baseline turned sequence parallelism on where tp does not divide
# the sequence, and one rank died mid-sweep with '--sp: ...'.
sed 's/^gpus = \[8, 16, 32\]/gpus = [8]\nseq_len = [1]/' job.toml > short.toml
timeout 120 "$MPIEXEC" -n 2 "$NESTFAST" catalog short.toml --out short.h5 --no-progress > short.out 2> short.err ||
  { cat short.err >&2; fail "a job with seq_len = 1 failed"; }

# Inputs that are not regular files would block forever (FIFO) or never end (/dev/zero).
mkfifo fifo
expect_one_line_error 2 "fifo: the JSON file is a FIFO" "$NESTFAST" nest-compat fifo
expect_one_line_error 2 "fifo: the job file is a FIFO" "$NESTFAST" catalog fifo
expect_one_line_error 2 "fifo: the catalog is a FIFO" "$NESTFAST" query fifo --model llama2-7b --gpus 8
expect_one_line_error 2 "fifo: the catalog is a FIFO" "$NESTFAST" merge fifo --out merged.h5
expect_one_line_error 2 "fifo: the workload file is a FIFO" "$NESTFAST" "${plan[@]}" --workload file:fifo
expect_one_line_error 2 "fifo: the workload file is a FIFO" "$NESTFAST" a2a bench --workload file:fifo
expect_one_line_error 2 "/dev/zero: the JSON file is a character device" "$NESTFAST" nest-compat /dev/zero
expect_one_line_error 2 "/dev/zero: the job file is a character device" "$NESTFAST" catalog /dev/zero
expect_one_line_error 2 "job: an empty value" "$NESTFAST" catalog ""

# Outputs that would replace a device node, a FIFO or an input. The device
# node is this test's own (the same numbers as /dev/full), never /dev/full itself.
mknod full c 1 7
expect_one_line_error 2 "full: --out is a character device" "$NESTFAST" nest-compat "$nest_input" --out full
expect_one_line_error 2 "full: the catalog (--out) is a character device" "$NESTFAST" catalog job.toml --force --out full
expect_one_line_error 2 "fifo: the catalog (--out) is a FIFO" "$NESTFAST" catalog job.toml --force --out fifo
[ -c full ] && [ -p fifo ] || fail "a device node or FIFO was replaced"
cp job.toml job-copy.toml
expect_one_line_error 2 "job.toml: the catalog (--out) is also an input" "$NESTFAST" catalog job.toml --force --out job.toml
cmp -s job.toml job-copy.toml || fail "catalog --out JOB changed the job file"
cp "$nest_input" input.json
expect_one_line_error 2 "input.json: --out is also an input" "$NESTFAST" nest-compat input.json --out input.json
cmp -s input.json "$nest_input" || fail "nest-compat --out IN changed its input"

# Errors that quote the input's own bytes (fuzz_job_toml, fuzz_nest_json): a newline or a
# terminal escape in the file is printed escaped, so the error stays one line.
printf '[job]\nname = "x"\n[search]\nzero = tru\n' > syntax.toml
expect_one_line_error 2 "syntax.toml:4: TOML syntax: .*saw 'tru\\\\n'" "$NESTFAST" catalog syntax.toml
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["a\nb\x1b[31m"] = 1; json.dump(d, open("key.json", "w"))' \
  "$nest_input"
expect_one_line_error 2 'key.json: a\\nb\\x1b\[31m: unknown key' "$NESTFAST" nest-compat key.json
# A number beyond a double (fuzz_nest_json): nlohmann throws out_of_range, not a parse error.
python3 -c 'import sys; t = open(sys.argv[1]).read(); open("huge.json", "w").write(t.replace("\"mbsInBatch\":", "\"mbsInBatch\": 4e089049, \"x\":", 1))' \
  "$nest_input"
grep -q 4e089049 huge.json || fail "huge.json has no huge number"
expect_one_line_error 2 "huge.json: invalid JSON: a number does not fit a double" "$NESTFAST" nest-compat huge.json
echo "robustness e2e: ok"
