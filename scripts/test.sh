#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: dependencies (bootstrap), build, then
# every test (unit, MPI at 1-4 ranks, regression, Python/PyTorch, postprocess).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
BUILD_DIR="$build" "$here/scripts/configure.sh" "$@"
cd "$build"
ctest --output-on-failure -j "$(nproc)" ${CTEST_ARGS:-}
