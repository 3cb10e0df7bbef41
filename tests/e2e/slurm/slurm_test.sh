#!/usr/bin/env bash
# A real Slurm on localhost: slurm/submit-catalog.sh submits the catalog
# sweep as a 3-task job array (2 ranks each, srun --mpi=pmi2) and the merge
# with --dependency=afterok; the merged catalog must hold exactly the data of
# a direct `mpiexec` run of the whole sweep. Then slurm/validate-h200.sbatch
# runs `nestfast run` with 8 ranks on the node's 8 (placeholder) GPUs. The
# cluster is stopped on every exit path and must leave no process behind.
source "$(dirname "$0")/../catalog_lib.sh"  # fail, fresh_dir, write_small_job, catalog_data

for command in munged slurmctld slurmd sbatch squeue sinfo scancel; do
  command -v "$command" > /dev/null 2>&1 || [ -x "/usr/sbin/$command" ] ||
    fail "$command is not installed: this test needs Slurm and munge (Debian: apt-get install -y slurm-wlm munge)"
done
command -v h5dump > /dev/null || fail "h5dump is not installed (Debian: hdf5-tools)"

fresh_dir
cluster_script="$NESTFAST_SOURCE_DIR/slurm/local-cluster.sh"

write_small_job job.toml

# The reference: one direct run of the whole sweep.
timeout 60 "$MPIEXEC" -n 2 "$NESTFAST" catalog job.toml --out direct.h5 --no-progress > direct.txt ||
  fail "the direct mpiexec run failed"

# The cluster's dir is short (munge's socket path must stay under 108 bytes).
cluster_dir=""
stop_cluster() {
  [ -n "$cluster_dir" ] || return 0
  "$cluster_script" stop "$cluster_dir" || echo "WARNING: local-cluster stop failed" >&2
  rm -rf "$cluster_dir"
  cluster_dir=""
}
# Killed by ctest's timeout (TERM) or by hand (INT): still stop the cluster.
trap stop_cluster EXIT
trap 'exit 143' TERM INT
cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/nestfast-slurm-e2e.XXXXXX")
started_ns=$(date +%s%N)
NESTFAST_SLURM_DIR=$cluster_dir NESTFAST_SLURM_CPUS=16 NESTFAST_SLURM_GPUS=8 timeout 30 "$cluster_script" start > cluster.env || fail "local-cluster start failed"
source cluster.env
echo "local cluster up in $((($(date +%s%N) - started_ns) / 1000000)) ms"
[ "$(sinfo -h -o %T)" = idle ] || fail "the local node is not idle"

NESTFAST=$NESTFAST PARTS="$TEST_TMPDIR/parts" OUT="$TEST_TMPDIR/merged.h5" CPUS_PER_TASK=2 \
  "$NESTFAST_SOURCE_DIR/slurm/submit-catalog.sh" job.toml 3 2 > submit.txt || fail "submit-catalog.sh failed"
cat submit.txt
array_id=$(sed -n 's/^catalog array job: \([0-9]*\).*/\1/p' submit.txt)
merge_id=$(sed -n 's/^merge job: \([0-9]*\).*/\1/p' submit.txt)
[ -n "$array_id" ] && [ -n "$merge_id" ] || fail "submit-catalog.sh printed no job ids"

# Bounded wait for both jobs to leave the queue.
deadline=$((SECONDS + 150))
while [ -n "$(squeue -h -o %i)" ]; do
  [ $SECONDS -lt $deadline ] || { squeue >&2; fail "the jobs did not finish in 150 s"; }
  sleep 1
done
for task in 0 1 2; do
  log="nestfast-catalog-${array_id}_${task}.out"
  [ -f "$log" ] || fail "no log of array task $task"
  grep -q "slice $task/3 .* on 2 ranks" "$log" || { cat "$log" >&2; fail "array task $task did not run slice $task/3 on 2 ranks"; }
  [ -f "parts/part-$task.h5" ] || { cat "$log" >&2; fail "array task $task wrote no part file"; }
done
grep -q "merged 3 parts" "nestfast-merge-$merge_id.out" || { cat "nestfast-merge-$merge_id.out" >&2; fail "the merge job did not merge 3 parts"; }
[ -f merged.h5 ] || fail "no merged catalog"

# The first line names the file.
catalog_data direct.h5 | tail -n +2 > direct.dump
catalog_data merged.h5 | tail -n +2 > merged.dump
grep -q '"nest' direct.dump || fail "the direct catalog has no NEST rows (dump broken?)"
cmp -s direct.dump merged.dump || { diff direct.dump merged.dump | head -20 >&2; fail "the merged catalog differs from the direct run"; }
h5dump -a /job merged.h5 | grep -c "e2e-small" >/dev/null || fail "the merged catalog lacks the job text"

# The H200 validation script: 8 ranks, one per GPU, --gpus-per-node=8; a job with validation on.
cp job.toml validate.toml
printf '\n[validate]\nenabled = true\nsizes = "64K:128K"\niterations = 1\nwarmup = 0\n' >> validate.toml
validate_id=$(sbatch --parsable --nodes=1 --cpus-per-task=2 \
  --export=ALL,NESTFAST="$NESTFAST",JOB="$TEST_TMPDIR/validate.toml",SHOW_BINDING=1,OMP_NUM_THREADS= \
  "$NESTFAST_SOURCE_DIR/slurm/validate-h200.sbatch") || fail "sbatch validate-h200.sbatch failed"
deadline=$((SECONDS + 240))  # a hang guard: on a loaded 2-core machine 8 ranks take minutes
while [ -n "$(squeue -h -o %i)" ]; do
  [ $SECONDS -lt $deadline ] || { squeue >&2; fail "validate-h200 did not finish in 240 s"; }
  sleep 1
done
log="nestfast-validate-h200-${validate_id%%;*}.out"
grep -q "on 8 ranks" "$log" || { cat "$log" >&2; fail "validate-h200 did not run 8 ranks"; }
# What each task really got: srun passes --cpus-per-task on (Slurm >= 22.05
# does not inherit it from sbatch), so the step holds 8 x 2 CPUs and every
# task runs 2 OpenMP threads. (The local cluster has
# no cgroups, TaskPlugin=task/none: Cpus_allowed is printed, not pinned.)
[ "$(grep -c "^binding: task" "$log")" -eq 8 ] || { cat "$log" >&2; fail "validate-h200 printed no binding of 8 tasks"; }
grep "^binding: task" "$log" | awk '{ if ($4 != "cpus_per_task=2" || $5 != "omp_threads=2") bad = 1 } END { exit bad }' ||
  { grep "^binding" "$log" >&2; fail "a task did not get 2 CPUs and 2 OpenMP threads"; }
grep -q "^binding: task 0 .* step_cpus=16$" "$log" || { grep "^binding" "$log" >&2; fail "the srun step does not hold 8 x 2 CPUs"; }
# The GPU each task sees is printed (CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES at a
# site) but not checked here: the local cluster's placeholder GPUs have no driver, so
# Slurm sets neither (only SLURM_GPUS_ON_NODE and SLURMD_TRES_BIND=gpu:map_gpu:...).
catalog=$(sed -n 's|^catalog with /validation/alltoallv: ||p' "$log")
[ -f "$catalog" ] || { cat "$log" >&2; fail "validate-h200 printed no catalog path"; }
h5dump -d /validation/alltoallv "$catalog" > validation.dump
grep -q "DATASPACE  SIMPLE { ( [1-9]" validation.dump || fail "validate-h200 stored no validation rows"

# Stop explicitly and check that nothing of the cluster is left running.
pid_files=("$cluster_dir/slurmctld.pid" "$cluster_dir/slurmd.pid" "$cluster_dir/munge/munged.pid")
pids=()
for file in "${pid_files[@]}"; do pids+=("$(cat "$file")"); done
"$cluster_script" stop "$cluster_dir" > /dev/null || fail "local-cluster stop failed"
for pid in "${pids[@]}"; do ! kill -0 "$pid" 2> /dev/null || fail "daemon $pid still runs after stop"; done
rm -rf "$cluster_dir"
cluster_dir=""

# The CPUs a task really gets (sched_getaffinity): a second cluster with
# task/affinity, declaring the machine's own CPUs so they can be bound. In a
# job of 2 CPUs per task, srun without --cpus-per-task (Slurm >= 22.05: not
# passed on from sbatch) binds each task to 1 CPU; with --cpus-per-task or
# SRUN_CPUS_PER_TASK, as the sbatch scripts now pass it, to 2; two tasks of
# one CPU get two different CPUs.
if [ "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" -ge 2 ]; then  # nproc obeys OMP_NUM_THREADS
  cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/nestfast-slurm-e2e.XXXXXX")
  NESTFAST_SLURM_DIR=$cluster_dir NESTFAST_SLURM_CPUS=2 NESTFAST_SLURM_TASK_PLUGIN=task/affinity timeout 30 \
    "$cluster_script" start > affinity.env || fail "local-cluster start with task/affinity failed"
  source affinity.env
  cat > binding.sh <<'SH'
#!/usr/bin/env bash
probe() {
  srun "$@" bash -c 'echo "$1 task $SLURM_PROCID cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' _ "$label"
}
label=plain probe --cpu-bind=cores
label=option probe --cpus-per-task="$SLURM_CPUS_PER_TASK" --cpu-bind=cores
label=variable SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK probe --cpu-bind=cores
SH
  sbatch --parsable -n 1 -c 2 -o binding-2.out binding.sh > /dev/null || fail "sbatch of the binding probe failed"
  sbatch --parsable -n 2 -c 1 -o binding-1.out binding.sh > /dev/null || fail "sbatch of the binding probe failed"
  deadline=$((SECONDS + 60))
  while [ -n "$(squeue -h -o %i)" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "the binding probes did not finish in 60 s"
    sleep 0.5
  done
  cat binding-2.out binding-1.out
  cpus_of() { sed -n "s/^$2 task $3 cpus=//p" "$1"; }
  count() { awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }' <<< "$1"; }
  [ "$(count "$(cpus_of binding-2.out plain 0)")" -eq 1 ] ||
    fail "plain srun in a 2-CPU task got $(cpus_of binding-2.out plain 0), expected 1 CPU (Slurm >= 22.05)"
  for way in option variable; do
    [ "$(count "$(cpus_of binding-2.out $way 0)")" -eq 2 ] ||
      fail "srun with the CPUs per task ($way) got $(cpus_of binding-2.out $way 0), expected 2 CPUs"
  done
  first=$(cpus_of binding-1.out option 0) second=$(cpus_of binding-1.out option 1)
  [ "$(count "$first")" -eq 1 ] && [ "$(count "$second")" -eq 1 ] && [ "$first" != "$second" ] ||
    fail "two 1-CPU tasks got '$first' and '$second', expected two different CPUs"
  stop_cluster
else
  echo "one CPU: the binding check needs 2 (skipped)"
fi
echo "slurm e2e: ok"
