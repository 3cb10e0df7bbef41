#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to a first result:
# installs dependencies, builds the default preset, and runs the embedded
# default job (a small real sweep) on 4 MPI ranks.
#   jobs/quickstart.sh            # from the repository root or anywhere
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

"$root/jobs/install-deps.sh"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target nestfast

nestfast="$root/build/default/jobs/nestfast"
echo
echo "== nestfast built: $("$nestfast" --version)"
echo "== running the embedded default job on 4 MPI ranks"
# --force: a re-run replaces the catalog of the previous quickstart.
mpiexec -n 4 "$nestfast" run --force
