#!/usr/bin/env bash
# Installs the Debian 12 packages nestfast builds with (MPICH, parallel HDF5,
# Boost.Serialization, GoogleTest, ...). Idempotent: installs only what is
# missing, and does nothing (fast) when all are there. Run as root.
#   jobs/install-deps.sh         # what the build needs
#   jobs/install-deps.sh --hip   # also Debian's HIP compiler (compiles gpu/ for AMD gfx90a)
#   jobs/install-deps.sh --slurm # also Slurm and munge (the local one-node Slurm of the tests)
#   jobs/install-deps.sh --debug # also clang, its sanitizer and libFuzzer runtimes and LLVM's OpenMP (the debug preset)
set -euo pipefail

packages=(
  build-essential cmake git ccache
  mpich libmpich-dev libhdf5-mpich-dev hdf5-tools
  libboost-serialization-dev
  googletest libgtest-dev libbenchmark-dev
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
  python3 python3-h5py python3-matplotlib python3-pandas
)
for option in "$@"; do
  case "$option" in
    --hip) packages+=(hipcc libamdhip64-dev) ;;
    --slurm) packages+=(slurm-wlm munge) ;;
    --debug) packages+=(clang libclang-rt-14-dev libomp-dev) ;;
    *) echo "install-deps.sh: unknown option '$option' (known: --hip, --slurm, --debug)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "nestfast: missing Debian packages: ${missing[*]} (re-run as root or install them)" >&2
    exit 1
  fi
  echo "nestfast: installing ${#missing[@]} Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# OpenMPI must not take over the mpi alternatives: nestfast is built and
# tested with MPICH (and its parallel HDF5).
if [[ $(id -u) -eq 0 ]]; then
  update-alternatives --quiet --set mpi /usr/bin/mpicc.mpich 2>/dev/null || true
  update-alternatives --quiet --set mpirun /usr/bin/mpirun.mpich 2>/dev/null || true
fi
