#!/usr/bin/env bash
# The one test command (also what CI runs): installs missing Debian packages,
# configures and builds the default preset (plus HIP), and runs every test label
# (unit, mpi, e2e, slurm) with ctest, then fuzzes every parser for at most 45 s
# (tests/fuzz/run.sh, the debug preset's clang build, fixed seed). Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# HIP too, so every kernel is compiled for AMD (gfx90a) as well as NVIDIA
# (sm_80, sm_90 when nvcc exists); Slurm for the local one-node cluster test.
"$root/jobs/install-deps.sh" --hip --slurm --debug
cmake --preset default -DNESTFAST_ENABLE_HIP=ON
cmake --build --preset default -j "$(nproc)"
# MPI tests declare how many ranks they use (PROCESSORS), so ctest keeps the
# 2-core machine from being oversubscribed more than one test at a time.
ctest --preset default -j "$(nproc)" --timeout 600
# Every parser (job and preset TOML, NEST JSON, matrix files, the catalog
# reader) under libFuzzer with ASan/UBSan; a finding fails the run. A fixed
# seed and input count per target bound the search alike on every machine
# (the open-ended run is in docs/robustness.md).
FUZZ_SEED=1 "$root/tests/fuzz/run.sh" 45 "$root/build/default/jobs/nestfast"
