#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: dependencies (bootstrap), build, then
# every test (unit, MPI at 1-4 ranks, regression, Python/PyTorch, postprocess, a real Slurm
# cluster on loopback), then a subset under ASan + UBSan (scripts/test_sanitizers.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
MANTISSA_BOOTSTRAP_TESTS=1 BUILD_DIR="$build" "$here/scripts/configure.sh" "$@"
cd "$build"
# --timeout: the default for tests that set none, so a hung test fails instead of using up CI.
ctest --output-on-failure --timeout 1500 -j "$(nproc)" ${CTEST_ARGS:-}
# Then the subset CI can afford under AddressSanitizer + UndefinedBehaviorSanitizer, in its own
# build (BUILD_DIR-sanitize); MANTISSA_SANITIZERS=0 skips it.
if [ "${MANTISSA_SANITIZERS:-1}" != 0 ]; then
  BUILD_DIR="$build" "$here/scripts/test_sanitizers.sh"
fi
