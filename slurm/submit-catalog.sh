#!/usr/bin/env bash
# Submits a sliced catalog sweep: the array job (catalog.sbatch) and the merge
# (merge.sbatch) that waits for it with --dependency=afterok. Prints both ids.
#
#   slurm/submit-catalog.sh JOB.toml [SLICES [RANKS_PER_SLICE]]
#
# Variables: NESTFAST (binary, made absolute), PARTS (default parts-<array id>),
# OUT (default catalog.h5), SBATCH_ARGS (extra sbatch options for both, e.g.
# "--partition=cpu --account=proj"), MPI_PLUGIN (pmi2 | pmix), CPUS_PER_TASK
# (OpenMP threads per rank; default 4).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 JOB.toml [SLICES [RANKS_PER_SLICE]]" >&2; exit 2; }
job=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -f "$job" ] || { echo "submit-catalog: $1: no such job file" >&2; exit 2; }
slices=${2:-4}
ranks=${3:-4}
[[ "$slices" =~ ^[1-9][0-9]*$ && "$ranks" =~ ^[1-9][0-9]*$ ]] ||
  { echo "submit-catalog: SLICES and RANKS_PER_SLICE must be positive integers" >&2; exit 2; }
nestfast=${NESTFAST:-$(command -v nestfast || true)}
[ -n "$nestfast" ] || { echo "submit-catalog: set NESTFAST to the nestfast binary" >&2; exit 2; }
nestfast=$(cd "$(dirname "$nestfast")" && pwd)/$(basename "$nestfast")
out=${OUT:-catalog.h5}
read -r -a extra <<< "${SBATCH_ARGS:-}"

# The parts folder needs the array id, which exists only after submission: a fixed name per submission instead.
parts=${PARTS:-parts-$(date +%Y%m%d-%H%M%S)-$$}
array_id=$(sbatch --parsable "${extra[@]}" --array="0-$((slices - 1))" --ntasks="$ranks" \
  --cpus-per-task="${CPUS_PER_TASK:-4}" \
  --export=ALL,NESTFAST="$nestfast",JOB="$job",PARTS="$parts",SLICES="$slices" "$here/catalog.sbatch")
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable "${extra[@]}" --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
  --export=ALL,NESTFAST="$nestfast",PARTS="$parts",OUT="$out" "$here/merge.sbatch")
merge_id=${merge_id%%;*}
echo "catalog array job: $array_id ($slices slices x $ranks ranks, parts in $parts/)"
echo "merge job: $merge_id (after the array succeeds) -> $out"
