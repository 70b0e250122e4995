#!/usr/bin/env bash
# A subset of the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (-DMantissa_ENABLE_SANITIZERS=ON), the part CI can afford on two cores: the deck parser
# (unit tests and the mutation/fuzz property test), the mesh deck checks, the run-directory
# policy at 1-3 ranks, the surrogate's weights files, the multigrid's host row kernels (raw
# pointers and eight-wide loads on AVX2 machines, against the point-wise form; at one thread
# and at three, where the swept passes' tiles are pipelined over the threads), and the
# campaign at 2 ranks in the cases
# that free, move and re-read the most memory (the hybrid's hand-overs, a stop and a resume,
# the checkpoint after every phase, a damaged newest checkpoint). Builds into BUILD_DIR-sanitize
# (default build-sanitize/). The whole suite under the same build: docs/user-guide.md section 8.
# Leak detection is off: Open MPI and hwloc keep allocations until exit by design and
# LeakSanitizer would report them in every MPI test; ASan's memory errors and every UBSan
# finding still fail a test (UBSan does not recover).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}-sanitize"
targets="tstDeck tstMeshDeck mantissa_fuzz_deck mantissa_fault_rundir mantissa_unit_surrogates_checkpoint
  mantissa_unit_solvers_host_kernels mantissa_mpi_workflow"
BUILD_DIR="$build" BUILD_TARGETS="$targets" "$here/scripts/configure.sh" \
  -DMantissa_ENABLE_SANITIZERS=ON -DMantissa_ENABLE_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cd "$build"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export MANTISSA_FUZZ_SECONDS="${MANTISSA_FUZZ_SECONDS:-5}"
ctest --output-on-failure -j "$(nproc)" \
  -R '^(tstDeck|tstMeshDeck|mantissa_fuzz_deck|mantissa_fault_rundir_np[0-9]|mantissa_unit_surrogates_checkpoint|mantissa_unit_solvers_host_kernels(_omp3)?)$'
# The campaign's cases by name (GTEST_FILTER reaches the ranks: mpirun starts them on this node
# with its environment); a filter that matched nothing would pass, so the count is checked.
cases="WorkflowCampaign.HybridHandsOverOnlyWhenTheSurrogateIsWrong:WorkflowCampaign.ResumeAfterAStopGivesBitIdenticalNumbers"
cases+=":WorkflowCampaign.DefaultsCheckpointEveryPhaseEndAndResumeFromEach"
cases+=":WorkflowCampaign.DamagedNewestCheckpointFallsBackToThePreviousOne"
log="$build/sanitize-campaign.log"
GTEST_COLOR=no GTEST_FILTER="$cases" ctest -V -R '^mantissa_mpi_workflow_np2$' 2>&1 | tee "$log"
ran="$(grep -c '\[       OK \] WorkflowCampaign\.' "$log" || true)"
want="$(tr ':' '\n' <<<"$cases" | wc -l)"
if [ "$ran" -lt "$want" ]; then
  echo "test_sanitizers.sh: $ran of the $want campaign cases passed on rank 0 ($log)" >&2
  exit 1
fi
