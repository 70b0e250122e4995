#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: dependencies (bootstrap), build, then
# every test (unit, MPI at 1-4 ranks, regression, Python/PyTorch, postprocess, a real Slurm
# cluster on loopback).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
MANTISSA_BOOTSTRAP_TESTS=1 BUILD_DIR="$build" "$here/scripts/configure.sh" "$@"
cd "$build"
ctest --output-on-failure -j "$(nproc)" ${CTEST_ARGS:-}
