# Shared by the catalog and run end-to-end tests (sourced, not run).
# Needs NESTFAST, MPIEXEC and TEST_TMPDIR from ctest.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/one_line_error.sh"  # expect_one_line_error

MPIEXEC=${MPIEXEC:-mpiexec}
# One thread per rank: the tests oversubscribe the cores anyway.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

fresh_dir() {
  rm -rf "$TEST_TMPDIR"
  mkdir -p "$TEST_TMPDIR"
  cd "$TEST_TMPDIR"
}

# A small but real sweep: a dense and an MoE model, restricted so one run takes seconds.
write_small_job() {
  cat > "$1" <<'TOML'
[job]
name = "e2e-small"
out = "small.h5"

[[sweep]]
model = ["llama2-7b"]
cluster = ["h100-superpod"]
gpus = [8, 16, 32]
global_batch = [64]

[[sweep]]
model = "mixtral-8x7b"
cluster = "h200-superpod"
gpus = [64]
global_batch = [256]

[search]
zero = [1]
mbs = [1]
vpp = [1]
cp = [1]
top_k = 3
baselines = ["manual", "phaze", "mcmc"]
TOML
}

# The catalog's data, not its timestamps or rank count: the tables and the
# preset groups (root attributes are left out on purpose).
catalog_data() {
  h5dump -d /plans -d /stages -g /models -g /clusters "$1" | tail -n +2  # line 1 names the file
}

