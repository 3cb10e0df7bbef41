#!/usr/bin/env bash
# The one test command (also what CI runs): installs missing Debian packages,
# configures and builds the default preset, and runs every test label
# (unit, mpi, e2e, slurm) with ctest. Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

"$root/jobs/install-deps.sh"
cmake --preset default
cmake --build --preset default -j "$(nproc)"
# MPI tests declare how many ranks they use (PROCESSORS), so ctest keeps the
# 2-core machine from being oversubscribed more than one test at a time.
ctest --preset default -j "$(nproc)" --timeout 600
