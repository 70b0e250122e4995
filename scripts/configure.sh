#!/usr/bin/env bash
# Bootstrap dependencies, then configure and build mantissa into BUILD_DIR (default build/).
# Extra arguments go to cmake. BUILD_TARGETS="a b" builds only those targets.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$("$here/scripts/bootstrap.sh" | tail -n 1)"
build="${BUILD_DIR:-$here/build}"
gen=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$deps" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
