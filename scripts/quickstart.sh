#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: dependencies and build (scripts/configure.sh, the
# `mantissa` executable only), the precision campaign of inputs/quickstart.yaml at 2 MPI ranks
# into runs/quickstart, then its figures (runs/quickstart/figures). Under 5 minutes on 2 cores
# once the dependencies are built (docs/user-guide.md walks through the output).
#
# Environment: BUILD_DIR (default build/), RANKS (default 2), THREADS per rank (default 1).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
ranks="${RANKS:-2}"
BUILD_DIR="$build" BUILD_TARGETS="mantissa" "$here/scripts/configure.sh"

mpi=(mpirun -np "$ranks")
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  mpi+=(--oversubscribe --bind-to none)
  if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
fi
export OMP_NUM_THREADS="${THREADS:-1}" OMP_PROC_BIND=false

cd "$here"
start=$(date +%s)
"${mpi[@]}" "$build/apps/mantissa/mantissa" run inputs/quickstart.yaml --overwrite
echo "campaign: $(( $(date +%s) - start )) s"

python=/usr/bin/python3
"$python" -c "import h5py, matplotlib" 2>/dev/null || python=python3
"$python" postprocess/plot_report.py runs/quickstart
echo "report: runs/quickstart/report.md; figures: runs/quickstart/figures/"
