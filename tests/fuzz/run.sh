#!/usr/bin/env bash
# Builds the fuzz targets of the debug preset and fuzzes every parser for a bounded time:
#   tests/fuzz/run.sh SECONDS_PER_TARGET NESTFAST
# With FUZZ_SEED set, each target runs libFuzzer's mutations from that seed
# for its input count below, at most SECONDS (CI uses this). That bounds the
# search the same way on every machine; it is not bit-exact (two CI runs kept
# 142 and 183 preset inputs), but it does not wander further on a faster or
# longer run the way a run on the clock alone does.
# NESTFAST (a built nestfast) writes the seed catalog and matrices. The
# corpora grow in build/debug/fuzz/corpus/<target> (kept between runs); a finding
# (crash, sanitizer report, an exception other than invalid_argument or
# runtime_error, 10 s on one input, 4 GiB) is written to
# build/debug/fuzz/findings/<target>/ and fails the run.
# CI (tests/run.sh) runs 45 s per target; docs/robustness.md gives the long run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=$1
nestfast=$(realpath "$2")
cd "$root"
targets=(job_toml preset_toml nest_json matrix catalog_reader)
# Inputs per target under FUZZ_SEED: about 20-40 s each on 2 loaded cores.
declare -A seeded_runs=([job_toml]=100000 [preset_toml]=50000 [nest_json]=20000 [matrix]=500000 [catalog_reader]=1500)

mkdir -p build
cmake --preset debug > build/debug-configure.log 2>&1 || { cat build/debug-configure.log >&2; exit 1; }
cmake --build --preset debug -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
build=$root/build/debug/fuzz
seeds=$build/seeds
[ -s "$seeds/catalog_reader/small.h5" ] || "$root/tests/fuzz/seed_corpus.sh" "$seeds" "$nestfast"

export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/sanitizer/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for target in "${targets[@]}"; do
  mkdir -p "$build/corpus/$target" "$build/findings/$target"
  log=$build/findings/$target.log
  # HDF5 is built without frame pointers: only the slow unwinder sees the HDF5 frames
  # that tests/sanitizer/lsan.supp names (its own leak on a damaged object header).
  asan=detect_leaks=1:abort_on_error=1
  [ "$target" != catalog_reader ] || asan=$asan:fast_unwind_on_malloc=0
  sequence=()
  [ -z "${FUZZ_SEED:-}" ] || sequence=(-seed="$FUZZ_SEED" -runs="${seeded_runs[$target]}")
  if ! ASAN_OPTIONS=${ASAN_OPTIONS:-$asan} "$root/build/debug/tests/fuzz/fuzz_$target" "${sequence[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$build/findings/$target/" \
      "$build/corpus/$target" "$seeds/$target" > "$log" 2>&1; then
    echo "fuzz_$target: FINDING (see $log and $build/findings/$target/)" >&2
    tail -30 "$log" >&2
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz_$target: ${runs:-?} executions (at most $seconds s), corpus $(ls "$build/corpus/$target" | wc -l) inputs"
done
exit $status
