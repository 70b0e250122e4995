#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: dependencies, build, `mantissa info`.
# (The precision campaign of inputs/quickstart.yaml joins here when the workflow lands.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
BUILD_DIR="$build" "$here/scripts/configure.sh"
"$build/apps/mantissa/mantissa" info
