#!/usr/bin/env bash
# Faults during a catalog job, injected with the LD_PRELOAD shim
# (tests/support/fault_inject.c) and with a real full file system (a small
# tmpfs, when this machine lets the test mount one): every case ends on every
# rank, with one line from nestfast naming the file and the system's reason,
# never a hang, and the unfinished job resumes to exactly the catalog of an
# uninterrupted run.
source "$(dirname "$0")/../catalog_lib.sh"
fresh_dir
write_small_job job.toml
# Checkpoints only at the end of each phase, so a run's writes do not depend on timing.
export NESTFAST_CHECKPOINT_INTERVAL=1000
timeout 300 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out ref.h5 --no-progress > /dev/null
catalog_data ref.h5 > ref.txt

# The shim goes after the sanitizer runtime when the binary links one dynamically.
preload=$NESTFAST_FAULT_SHIM
asan=$(ldd "$NESTFAST" | awk '/libasan/ {print $3}')
[ -z "$asan" ] || preload="$asan:$preload"

# run_with_fault RANKS VAR=VALUE...: the job under the shim, output in out.txt/err.txt, exit code in $rc.
run_with_fault() {
  local ranks=$1
  shift
  local genv=(-genv LD_PRELOAD "$preload" -genv NESTFAST_FAULT_LOG "$PWD/injected.log")
  for setting in "$@"; do genv+=(-genv "${setting%%=*}" "${setting#*=}"); done
  rm -f injected.log
  rc=0
  timeout 180 "$MPIEXEC" -n "$ranks" "${genv[@]}" "$NESTFAST" catalog job.toml --out out.h5 --no-progress \
    > out.txt 2> err.txt || rc=$?
  [ "$rc" -ne 124 ] || { cat err.txt >&2; fail "hung (timeout) with $*"; }
  [ -s injected.log ] || fail "the fault was never injected ($*)"
  [ "$rc" -ne 0 ] || fail "exit 0 although a write failed ($*)"
}

# The failed job's leftovers resume to the uninterrupted run's catalog.
expect_resume_to_reference() {
  timeout 300 "$MPIEXEC" -n "${1:-2}" "$NESTFAST" catalog job.toml --out out.h5 --no-progress > resume.txt 2>&1 ||
    { cat resume.txt >&2; fail "the resume after '$2' failed"; }
  catalog_data out.h5 | cmp -s - ref.txt || fail "the resume after '$2' gives a different catalog"
  rm -f out.h5
}

# 1. A full disk on one rank of four while it records finished items: all
#    ranks agree and stop, one line names the file and the reason.
run_with_fault 4 NESTFAST_FAULT_CALL=pwrite NESTFAST_FAULT_PATH=out.h5 NESTFAST_FAULT_RANK=2 NESTFAST_FAULT_AFTER=1
[ "$(wc -l < err.txt)" -eq 1 ] || { cat err.txt >&2; fail "ENOSPC on rank 2: not one line"; }
grep -Eq "rank 2: out.h5.checkpoint: .*No space left on device" err.txt || { cat err.txt >&2; fail "ENOSPC on rank 2: unclear error"; }
expect_resume_to_reference 4 "ENOSPC on rank 2"

# 2. EIO instead, on every rank.
run_with_fault 2 NESTFAST_FAULT_CALL=pwrite NESTFAST_FAULT_PATH=out.h5 NESTFAST_FAULT_ERRNO=EIO NESTFAST_FAULT_AFTER=3
grep -Eq "out.h5.checkpoint: .*Input/output error" err.txt || { cat err.txt >&2; fail "EIO: unclear error"; }
expect_resume_to_reference 2 "EIO"

# 3. A full disk from each of the last writes to the catalog of a one-rank
#    job on (its rows, presets, metadata and superblock).
rm -f trace.log
NESTFAST_FAULT_TRACE=$PWD/trace.log NESTFAST_FAULT_CALL=pwrite NESTFAST_FAULT_PATH=ref2.h5.partial NESTFAST_FAULT_AFTER=1000000000 \
  LD_PRELOAD=$preload timeout 300 "$NESTFAST" catalog job.toml --out ref2.h5 --no-progress > /dev/null
writes=$(wc -l < trace.log)
[ "$writes" -gt 10 ] || fail "a clean run made only $writes writes to its catalog"
for back in 1 2 3 5 8 $((writes - 1)); do
  run_with_fault 1 NESTFAST_FAULT_CALL=pwrite NESTFAST_FAULT_PATH=out.h5.partial NESTFAST_FAULT_AFTER=$((writes - back))
  grep -Eq "^nestfast: .*out.h5.(checkpoint|partial): .*No space left on device" err.txt ||
    { cat err.txt >&2; fail "ENOSPC from write $((writes - back)) of $writes: unclear error"; }
  expect_resume_to_reference 1 "ENOSPC from write $((writes - back)) of $writes"
done

# 4. The same in a four-rank job, on rank 0 (it writes the small datasets):
#    wherever it lands, no rank hangs and the job resumes.
for after in 2 6 12; do
  run_with_fault 4 NESTFAST_FAULT_CALL=pwrite NESTFAST_FAULT_PATH=out.h5 NESTFAST_FAULT_RANK=0 NESTFAST_FAULT_AFTER=$after
  grep -Eq "out.h5.(checkpoint|partial): .*No space left on device" err.txt || { cat err.txt >&2; fail "ENOSPC on rank 0: unclear error"; }
  expect_resume_to_reference 4 "ENOSPC on rank 0 after $after writes"
done

# 5. A kill (SIGKILL, as by a node failure) at each of the last writes to
#    the catalog of a one-rank job, the final metadata write included: the
#    checkpoint survives it, so the re-run only writes the catalog again.
for back in 1 2 3 5 8 $((writes - 1)); do
  rm -f injected.log
  rc=0
  # (in a subshell, so bash does not report the kill on stderr)
  (NESTFAST_FAULT_LOG=$PWD/injected.log NESTFAST_FAULT_CALL=pwrite NESTFAST_FAULT_PATH=out.h5.partial \
    NESTFAST_FAULT_ERRNO=SIGKILL NESTFAST_FAULT_AFTER=$((writes - back)) LD_PRELOAD=$preload \
    exec timeout 180 "$NESTFAST" catalog job.toml --out out.h5 --no-progress > /dev/null 2>&1) 2> /dev/null || rc=$?
  [ -s injected.log ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "no kill at write $((writes - back)) (exit $rc)"
  [ ! -e out.h5 ] || fail "a job killed at write $((writes - back)) of $writes left a finished catalog"
  [ -e out.h5.checkpoint ] || fail "a kill at write $((writes - back)) of $writes lost the checkpoint"
  timeout 300 "$NESTFAST" catalog job.toml --out out.h5 --no-progress > resume.txt 2> resume.err ||
    { cat resume.err >&2; fail "the resume after a kill at write $((writes - back)) failed"; }
  grep -q "([1-9][0-9]* resumed)" resume.txt || fail "nothing resumed after a kill at write $((writes - back))"
  catalog_data out.h5 | cmp -s - ref.txt || fail "the resume after a kill at write $((writes - back)) differs"
  rm -f out.h5
done

# 6. EIO when the finished catalog is synced, and a failing final rename:
#    one line each, and the job resumes.
run_with_fault 2 NESTFAST_FAULT_CALL=fsync NESTFAST_FAULT_PATH=out.h5.partial NESTFAST_FAULT_ERRNO=EIO NESTFAST_FAULT_RANK=0
grep -q "out.h5.partial.*Input/output error" err.txt || { cat err.txt >&2; fail "EIO at fsync: unclear error"; }
expect_resume_to_reference 2 "EIO at fsync"
run_with_fault 2 NESTFAST_FAULT_CALL=rename NESTFAST_FAULT_PATH=out.h5.partial NESTFAST_FAULT_ERRNO=EIO
[ "$(wc -l < err.txt)" -eq 1 ] || { cat err.txt >&2; fail "a failed rename: not one line"; }
grep -q "renaming out.h5.partial to out.h5: Input/output error" err.txt || { cat err.txt >&2; fail "a failed rename: unclear error"; }
expect_resume_to_reference 2 "a failed rename"

# 7. Two jobs on one output: while the first runs (held by the shim, which
#    stops its rank 0 at its first write to the checkpoint, so it surely
#    still runs: a job stopped from outside once the checkpoint file
#    appeared could finish first on a loaded machine, and the second job
#    then met a finished catalog), a second one, with --force or without, is
#    refused at once; the first then finishes with the uninterrupted run's
#    catalog.
rm -f stopped.log
"$MPIEXEC" -n 2 -genv LD_PRELOAD "$preload" -genv NESTFAST_FAULT_LOG "$PWD/stopped.log" -genv NESTFAST_FAULT_CALL pwrite \
  -genv NESTFAST_FAULT_PATH two.h5.checkpoint -genv NESTFAST_FAULT_ERRNO SIGSTOP -genv NESTFAST_FAULT_RANK 0 \
  -genv NESTFAST_FAULT_TIMES 1 "$NESTFAST" catalog job.toml --out two.h5 --no-progress > first.txt 2>&1 &
first=$!
waited=0
until [ -s stopped.log ]; do
  sleep 0.05
  waited=$((waited + 1))
  [ "$waited" -lt 1200 ] || { kill "$first" 2> /dev/null; fail "the first job never wrote its checkpoint"; }
done
ranks=$(pgrep -P "$(pgrep -P "$first" | head -1)" | tr '\n' ' ')
for force in "" --force; do
  expect_one_line_error 2 "two.h5: another job is writing this catalog now" \
    "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out two.h5 --no-progress $force
done
kill -CONT $ranks
wait "$first" || { cat first.txt >&2; fail "the first job failed after the second was refused"; }
catalog_data two.h5 | cmp -s - ref.txt || fail "the first job's catalog differs after a second job tried the output"

# 8. A real full file system: a tmpfs too small for the checkpoint (the sweep
#    fails), then one too small for the catalog too (the final write fails);
#    each time, once the file system is grown, the same command resumes.
if mkdir -p full && mount -t tmpfs -o size=96k tmpfs full 2> /dev/null; then
  trap 'umount "$TEST_TMPDIR/full" 2> /dev/null || true' EXIT
  for size in 96k 160k; do
    mount -o remount,size=$size full
    rm -f full/*
    rc=0
    timeout 180 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out full/c.h5 --no-progress > out.txt 2> err.txt || rc=$?
    [ "$rc" -ne 124 ] || fail "hung on a full tmpfs of $size"
    [ "$rc" -ne 0 ] || fail "exit 0 on a full tmpfs of $size"
    grep -Eq "full/c.h5.(checkpoint|partial): .*No space left on device" err.txt ||
      { cat err.txt >&2; fail "full tmpfs of $size: unclear error"; }
    mount -o remount,size=4m full
    timeout 300 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out full/c.h5 --no-progress > resume.txt 2>&1 ||
      { cat resume.txt >&2; fail "no resume after the tmpfs of $size was grown"; }
    catalog_data full/c.h5 | cmp -s - ref.txt || fail "the resume on the grown tmpfs ($size) differs"
  done
  umount full
  trap - EXIT
else
  echo "faults e2e: cannot mount a tmpfs here; the real full-disk case is skipped"
fi
echo "faults e2e: ok"
