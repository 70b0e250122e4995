#!/usr/bin/env bash
# A subset of the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (-DMantissa_ENABLE_SANITIZERS=ON), the part CI can afford on two cores: the deck parser
# (unit tests and the mutation/fuzz property test), the mesh deck checks, and the run-directory
# policy at 1-3 ranks. Builds into BUILD_DIR-sanitize (default build-sanitize/).
# Leak detection is off: Open MPI and hwloc keep allocations until exit by design and
# LeakSanitizer would report them in every MPI test; ASan's memory errors and every UBSan
# finding still fail a test (UBSan does not recover).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}-sanitize"
targets="tstDeck tstMeshDeck mantissa_fuzz_deck mantissa_fault_rundir"
BUILD_DIR="$build" BUILD_TARGETS="$targets" "$here/scripts/configure.sh" \
  -DMantissa_ENABLE_SANITIZERS=ON -DMantissa_ENABLE_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cd "$build"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export MANTISSA_FUZZ_SECONDS="${MANTISSA_FUZZ_SECONDS:-5}"
ctest --output-on-failure -j "$(nproc)" -R '^(tstDeck|tstMeshDeck|mantissa_fuzz_deck|mantissa_fault_rundir_np[0-9])$'
