#!/usr/bin/env bash
# Portability check: build mantissa against a newer Kokkos on back-ends this machine cannot run.
#
#   scripts/check_portability.sh KOKKOS_SRC KOKKOS_KERNELS_SRC [cuda] [hip] [openmp20]
#
# KOKKOS_SRC / KOKKOS_KERNELS_SRC: unpacked source trees (e.g. Kokkos 4.6.01, Kokkos Kernels
# 4.6.02), fetched by you; this script never downloads anything. Everything is built under
# WORK (default /work/ext), outside the repository:
#   install-<backend>/           Kokkos + Kokkos Kernels
#   build-kokkos-<backend>/, build-kk-<backend>/, build-mantissa-<backend>/   build trees
#   logs/<step>.log              full output of every step
# Back-ends (default: all three):
#   cuda      nvcc (CUDA_HOME, default /usr/local/cuda) through Kokkos' nvcc_wrapper, sm_90
#             (Kokkos_ARCH_HOPPER90); compile and link only.
#   hip       hipcc (Debian package `hipcc`), gfx90a, rocThrust off; compile and link only.
#   openmp20  the plain OpenMP host back-end with -DCMAKE_CXX_STANDARD=20; built and tested.
# Environment: WORK, JOBS (default 2), CUDA_HOME, HIPCC, MANTISSA_TARGETS (default: all).
# Kokkos installs are reused when their stamp file exists; delete install-<backend>/ to redo.
#
# CUDA 13 changed three runtime signatures that Kokkos <= 4.6 calls (cudaGraphAddDependencies
# gained an edge-data argument; cudaMemPrefetchAsync and cudaMemAdvise take a cudaMemLocation):
# scripts/device/patch_kokkos_cuda13.sh adds #if CUDART_VERSION >= 13000 branches to the given
# Kokkos tree, in place and idempotently (newer trees are left alone), and lets
# NVCC_WRAPPER_DEFAULT_ARCH replace nvcc_wrapper's default sm_70, which CUDA 13 dropped.
# Debian's hipcc asks rocm_agent_enumerator (i.e. a GPU) for the target unless
# HCC_AMDGPU_TARGET is set, which breaks CMake's compiler checks on a machine without one.
set -uo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,20p' "$0"
  exit 2
fi
kokkos_src="$(cd "$1" && pwd)"
kk_src="$(cd "$2" && pwd)"
shift 2
backends=("$@")
[ ${#backends[@]} -eq 0 ] && backends=(cuda hip openmp20)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${WORK:-/work/ext}"
jobs="${JOBS:-2}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
hipcc="${HIPCC:-$(command -v hipcc || true)}"
mkdir -p "$work/logs"
declare -A result

log() { echo "[portability] $*"; }
gen=()
keep_going=()
if command -v ninja >/dev/null; then
  gen=(-G Ninja)
  keep_going=(-- -k 0)
fi

# run NAME cmd...: output to logs/NAME.log; prints the tail on failure.
run() {
  local name="$1"
  shift
  log "$name: $*"
  if "$@" >"$work/logs/$name.log" 2>&1; then
    return 0
  fi
  log "$name FAILED; last lines of $work/logs/$name.log:"
  tail -n 25 "$work/logs/$name.log"
  return 1
}

patch_kokkos_cuda13() { "$here/scripts/device/patch_kokkos_cuda13.sh" "$kokkos_src"; }

# build_kokkos BACKEND cmake-args...: Kokkos core (no tests, no examples) + Kokkos Kernels
# (BLAS component only, ETI off, no tests) into install-BACKEND.
build_kokkos() {
  local b="$1"
  shift
  local prefix="$work/install-$b"
  if [ -f "$prefix/.mantissa-stamp" ]; then
    log "kokkos-$b: reusing $prefix"
    return 0
  fi
  run "kokkos-$b-configure" cmake "${gen[@]}" -S "$kokkos_src" -B "$work/build-kokkos-$b" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF \
    -DKokkos_ENABLE_SERIAL=ON "$@" || return 1
  run "kokkos-$b-build" cmake --build "$work/build-kokkos-$b" -j "$jobs" || return 1
  run "kokkos-$b-install" cmake --install "$work/build-kokkos-$b" || return 1
  local kk_args=()
  case "$b" in
    cuda) kk_args=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DKokkosKernels_ENABLE_TPL_CUBLAS=ON
                   -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF) ;;
    hip) kk_args=(-DCMAKE_CXX_COMPILER="$hipcc" -DKokkosKernels_ENABLE_TPL_ROCBLAS=OFF
                  -DKokkosKernels_ENABLE_TPL_ROCSPARSE=OFF -DKokkosKernels_ENABLE_TPL_ROCSOLVER=OFF) ;;
    *) kk_args=(-DKokkosKernels_ENABLE_TPL_BLAS=ON) ;;
  esac
  run "kk-$b-configure" cmake "${gen[@]}" -S "$kk_src" -B "$work/build-kk-$b" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" -DKokkosKernels_ENABLE_TESTS=OFF \
    -DKokkosKernels_ENABLE_EXAMPLES=OFF -DKokkosKernels_ENABLE_PERFTESTS=OFF \
    -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON \
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF "${kk_args[@]}" || return 1
  run "kk-$b-build" cmake --build "$work/build-kk-$b" -j "$jobs" || return 1
  run "kk-$b-install" cmake --install "$work/build-kk-$b" || return 1
  date -u +%FT%TZ >"$prefix/.mantissa-stamp"
}

# build_mantissa BACKEND cmake-args...: configure and build mantissa (keep going past errors,
# so the log lists every file that fails).
build_mantissa() {
  local b="$1"
  shift
  local prefix="$work/install-$b" bdir="$work/build-mantissa-$b"
  local targets=()
  for t in ${MANTISSA_TARGETS:-}; do targets+=(--target "$t"); done
  run "mantissa-$b-configure" cmake "${gen[@]}" -S "$here" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
    -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix" -DCMAKE_PREFIX_PATH="$prefix" "$@" || return 1
  run "mantissa-$b-build" cmake --build "$bdir" -j "$jobs" "${targets[@]}" "${keep_going[@]}"
}

for b in "${backends[@]}"; do
  case "$b" in
    cuda)
      if [ ! -x "$cuda_home/bin/nvcc" ]; then result[$b]="skipped: no nvcc in $cuda_home"; continue; fi
      patch_kokkos_cuda13 || { result[$b]="FAILED: could not patch Kokkos for CUDA 13"; continue; }
      export CUDA_ROOT="$cuda_home" PATH="$cuda_home/bin:$PATH"
      # nvcc_wrapper defaults to sm_70, which CUDA 13 dropped; Kokkos passes -arch=sm_90 itself.
      export NVCC_WRAPPER_DEFAULT_ARCH=sm_90
      if ! build_kokkos cuda -DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON \
        -DKokkos_ARCH_HOPPER90=ON -DCMAKE_CXX_STANDARD=17; then
        result[$b]="FAILED: Kokkos/Kokkos Kernels build (see $work/logs)"
        continue
      fi
      if build_mantissa cuda -DCMAKE_CXX_COMPILER="$work/install-cuda/bin/nvcc_wrapper"; then
        result[$b]="compiled and linked (not run: no GPU)"
      else
        result[$b]="FAILED: mantissa build (see $work/logs/mantissa-cuda-build.log)"
      fi
      ;;
    hip)
      if [ -z "$hipcc" ]; then result[$b]="skipped: no hipcc (apt-get install hipcc)"; continue; fi
      export HCC_AMDGPU_TARGET="${HCC_AMDGPU_TARGET:-gfx90a}"
      if ! build_kokkos hip -DCMAKE_CXX_COMPILER="$hipcc" -DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_AMD_GFX90A=ON \
        -DKokkos_ENABLE_ROCTHRUST=OFF -DCMAKE_CXX_STANDARD=17; then
        result[$b]="FAILED: Kokkos/Kokkos Kernels build (see $work/logs)"
        continue
      fi
      if build_mantissa hip -DCMAKE_CXX_COMPILER="$hipcc"; then
        result[$b]="compiled and linked (not run: no GPU)"
      else
        result[$b]="FAILED: mantissa build (see $work/logs/mantissa-hip-build.log)"
      fi
      ;;
    openmp20)
      if ! build_kokkos openmp20 -DKokkos_ENABLE_OPENMP=ON -DCMAKE_CXX_STANDARD=20; then
        result[$b]="FAILED: Kokkos/Kokkos Kernels build (see $work/logs)"
        continue
      fi
      if ! build_mantissa openmp20 -DCMAKE_CXX_STANDARD=20; then
        result[$b]="FAILED: mantissa build (see $work/logs/mantissa-openmp20-build.log)"
        continue
      fi
      if run "mantissa-openmp20-test" ctest --test-dir "$work/build-mantissa-openmp20" --output-on-failure \
        -j "$jobs"; then
        result[$b]="built and all tests passed"
      else
        result[$b]="FAILED: tests (see $work/logs/mantissa-openmp20-test.log)"
      fi
      ;;
    *) result[$b]="unknown back-end (use cuda, hip, openmp20)" ;;
  esac
done

status=0
echo
echo "Kokkos: $(grep -m1 -o 'Kokkos_VERSION_MAJOR [0-9]*' "$kokkos_src/CMakeLists.txt" | awk '{print $2}').$(grep -m1 -o 'Kokkos_VERSION_MINOR [0-9]*' "$kokkos_src/CMakeLists.txt" | awk '{print $2}').$(grep -m1 -o 'Kokkos_VERSION_PATCH [0-9]*' "$kokkos_src/CMakeLists.txt" | awk '{print $2}') from $kokkos_src"
for b in "${backends[@]}"; do
  echo "  $b: ${result[$b]}"
  case "${result[$b]}" in FAILED*) status=1 ;; esac
done
exit $status
