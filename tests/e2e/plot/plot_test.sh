#!/usr/bin/env bash
# jobs/plot_catalog.py on a catalog made in the test by `nestfast run` on a
# small job (a dense and an MoE model, plus validation on 2 ranks): all four
# figures as non-empty PNG and SVG; a plan row out of range and a file that
# is not a catalog are one-line errors.
source "$(dirname "$0")/../catalog_lib.sh"  # fail, fresh_dir, write_small_job

# Debian's h5py and matplotlib live in the system python3, which may not be first on PATH.
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import h5py, matplotlib" > /dev/null 2>&1; then python=$candidate; break; fi
done
[ -n "$python" ] || fail "no python3 with h5py and matplotlib (Debian: apt-get install -y python3-h5py python3-matplotlib)"

fresh_dir
script="$NESTFAST_SOURCE_DIR/jobs/plot_catalog.py"

write_small_job tiny.toml
cat >> tiny.toml <<'TOML'

[validate]
enabled = true
sizes = "64K:256K"
algos = ["fast", "mpi"]
iterations = 2
warmup = 1
TOML
timeout 180 "$MPIEXEC" -n 2 "$NESTFAST" run tiny.toml --out tiny.h5 --no-progress > run.txt || { tail run.txt >&2; fail "nestfast run failed"; }
h5dump -H -d /validation/alltoallv tiny.h5 | grep -c "DATASPACE  SIMPLE { ( [1-9]" >/dev/null || fail "the test catalog has no validation rows"

"$python" "$script" tiny.h5 --out figures > plot.txt || fail "plot_catalog.py failed"
for figure in throughput timeline placement alltoallv; do
  for extension in png svg; do
    [ -s "figures/$figure.$extension" ] || fail "figures/$figure.$extension is missing or empty"
  done
  head -c 8 "figures/$figure.png" | od -An -c | grep -c "P   N   G" >/dev/null || fail "figures/$figure.png is not a PNG"
done

# Under a python3 without Debian's modules first on PATH (here a venv of
# Debian's own python3, which does not see them) the script runs itself again
# under /usr/bin/python3 and says so in one line.
if /usr/bin/python3 -m venv --without-pip venv > /dev/null 2>&1; then
  PATH="$PWD/venv/bin:$PATH" python3 "$script" tiny.h5 --out from-venv > venv.txt 2> venv.err ||
    { cat venv.err >&2; fail "plot_catalog.py under a venv's python3 failed"; }
  [ "$(wc -l < venv.err)" -eq 1 ] && grep -q "lacks h5py.*running under /usr/bin/python3" venv.err ||
    { cat venv.err >&2; fail "the re-run under /usr/bin/python3 is not said in one line"; }
  [ -s from-venv/placement.png ] || fail "no figures from the venv run"
else
  echo "no venv module: the re-run under /usr/bin/python3 is not checked"
fi

# Another plan row: the MoE plan (the last NEST row).
moe_row=$("$python" -c "import h5py; p=h5py.File('tiny.h5')['plans'][()]; print(max(i for i, r in enumerate(p) if r['model'].startswith(b'mixtral') and r['kind'].startswith(b'nest')))")
"$python" "$script" tiny.h5 --out moe --plan-row "$moe_row" > /dev/null || fail "plot_catalog.py --plan-row $moe_row failed"
[ -s moe/placement.png ] || fail "no placement figure for row $moe_row"

# Bad input: one line on stderr, non-zero exit.
for bad in "--plan-row 100000" "--plan-row -1"; do
  rc=0
  # shellcheck disable=SC2086
  "$python" "$script" tiny.h5 --out bad $bad > /dev/null 2> err.txt || rc=$?
  [ "$rc" -ne 0 ] || fail "$bad was accepted"
  [ "$(wc -l < err.txt)" -eq 1 ] && grep -q "plan-row" err.txt || { cat err.txt >&2; fail "$bad: not a one-line error"; }
done
rc=0
"$python" "$script" tiny.toml --out bad > /dev/null 2> err.txt || rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -q "tiny.toml" err.txt || { cat err.txt >&2; fail "a non-HDF5 file is not a one-line error"; }
echo "plot e2e: ok"
