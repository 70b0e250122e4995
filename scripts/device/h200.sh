#!/usr/bin/env bash
# One-shot check on an NVIDIA H200 node (sm_90, 16 cores, no network): build Kokkos with CUDA,
# build mantissa against it, run the unit tests and the benchmarks. Everything it prints and
# every log goes under $OUT (default ./h200-out).
#
#   scripts/device/h200.sh KOKKOS_SRC KOKKOS_KERNELS_SRC
#
# The source trees travel with the repository (e.g. unpacked into build-device-src/, which
# .gitignore's /build*/ keeps out of git, and carried along). Kokkos <= 4.6 trees are patched
# for CUDA 13 in place by patch_kokkos_cuda13.sh (a no-op on newer trees or older CUDA).
#
# Assumes on the machine: nvcc (CUDA_HOME, /usr/local/cuda or PATH) with cuBLAS, a host g++,
# CMake >= 3.20, and mantissa's other dependencies (MPI, parallel HDF5, yaml-cpp, CLI11, fmt,
# GoogleTest, Google Benchmark) as system packages. It checks and prints what is there
# (environment.txt) and stops with a clear message where a build cannot start; no step
# downloads anything. Budget: ~8 minutes; each step is time-boxed and later steps are skipped
# with a note once the budget is spent. Build trees live in $BUILD_ROOT (default
# /tmp/mantissa-h200) so a second run on a warm machine reuses them.
set -uo pipefail
start=$SECONDS
budget="${BUDGET_S:-470}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$here/h200-out}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
note() { echo "[h200] $*" | tee -a "$summary"; }
left() { echo $((budget - (SECONDS - start))); }

if [ $# -lt 2 ]; then
  note "usage: $0 KOKKOS_SRC KOKKOS_KERNELS_SRC"
  exit 2
fi
kokkos_src="$(cd "$1" && pwd)" || { note "no Kokkos source at $1"; exit 2; }
kk_src="$(cd "$2" && pwd)" || { note "no Kokkos Kernels source at $2"; exit 2; }
jobs="${JOBS:-$(nproc)}"
broot="${BUILD_ROOT:-/tmp/mantissa-h200}"
prefix="$broot/install"
mkdir -p "$broot"

# ---- what is on this machine ------------------------------------------------------------
cuda_home="${CUDA_HOME:-}"
if [ -z "$cuda_home" ]; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then cuda_home=/usr/local/cuda
  elif command -v nvcc >/dev/null; then cuda_home="$(dirname "$(dirname "$(command -v nvcc)")")"
  fi
fi
{
  echo "date: $(date -u +%FT%TZ)   host: $(hostname)   cores: $(nproc)"
  echo "--- nvidia-smi"; nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi missing"
  echo "--- nvcc ($cuda_home)"; "$cuda_home/bin/nvcc" --version 2>&1 | tail -n 2 || echo "nvcc missing"
  echo "--- cuBLAS"; ls "$cuda_home"/lib64/libcublas.so* "$cuda_home"/targets/*/lib/libcublas.so* 2>/dev/null | head -n 2 || true
  echo "--- tools"
  for t in g++ cmake ninja mpicxx mpirun h5pcc /usr/bin/python3; do
    printf '%-16s %s\n' "$t" "$(command -v "$t" >/dev/null && "$t" --version 2>&1 | head -n 1 || echo MISSING)"
  done
  echo "--- packages (dpkg)"
  for p in libopenmpi-dev libhdf5-openmpi-dev libyaml-cpp-dev libcli11-dev libfmt-dev libgtest-dev \
    libbenchmark-dev libopenblas-dev; do
    printf '%-22s %s\n' "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo MISSING)"
  done
  echo "--- headers"
  for h in yaml-cpp/yaml.h CLI/CLI.hpp fmt/format.h gtest/gtest.h benchmark/benchmark.h hdf5.h; do
    f="$(find /usr/include /usr/local/include -path "*$h" 2>/dev/null | head -n 1)"
    printf '%-24s %s\n' "$h" "${f:-MISSING}"
  done
} >"$out/environment.txt" 2>&1
cat "$out/environment.txt"
if [ -z "$cuda_home" ] || [ ! -x "$cuda_home/bin/nvcc" ]; then
  note "STOP: no nvcc found (set CUDA_HOME)"
  exit 1
fi
export PATH="$cuda_home/bin:$PATH" CUDA_ROOT="$cuda_home"
missing="$(grep -E 'MISSING' "$out/environment.txt" | grep -E 'mpicxx|h5pcc|libhdf5-openmpi|yaml-cpp|CLI|fmt|gtest' || true)"
export NVCC_WRAPPER_DEFAULT_ARCH=sm_90
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# step NAME MAX_SECONDS cmd...: time-boxed, logged to $OUT/NAME.log, result in summary.txt.
step() {
  local name="$1" max="$2"
  shift 2
  local l
  l="$(left)"
  if [ "$l" -lt 20 ]; then
    note "$name: SKIPPED (time budget spent)"
    return 1
  fi
  [ "$max" -gt "$l" ] && max="$l"
  local t0=$SECONDS
  timeout "$max" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc in $((SECONDS - t0)) s (limit $max s)"
  [ $rc -ne 0 ] && tail -n 30 "$out/$name.log"
  return $rc
}

"$here/scripts/device/patch_kokkos_cuda13.sh" "$kokkos_src" 2>&1 | tee -a "$summary"

# ---- Kokkos core (no tests), Kokkos Kernels (BLAS only, ETI off, cuBLAS) --------------------
if [ ! -f "$prefix/.stamp" ] && [ ! -f "$prefix/.stamp-kokkos-only" ]; then
  step kokkos-configure 120 cmake "${gen[@]}" -S "$kokkos_src" -B "$broot/kokkos" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper" \
    -DCMAKE_CXX_STANDARD=17 -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF || exit 1
  step kokkos-build 240 cmake --build "$broot/kokkos" -j "$jobs" || exit 1
  step kokkos-install 60 cmake --install "$broot/kokkos" || exit 1
  if [ -n "$missing" ]; then
    note "skipping Kokkos Kernels: only needed by the full mantissa build"
    date -u +%FT%TZ >"$prefix/.stamp-kokkos-only"
  else
    step kk-configure 120 cmake "${gen[@]}" -S "$kk_src" -B "$broot/kk" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" \
      -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON \
      -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TPL_CUBLAS=ON \
      -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF \
      -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF -DKokkosKernels_ENABLE_PERFTESTS=OFF || exit 1
    step kk-build 180 cmake --build "$broot/kk" -j "$jobs" || exit 1
    step kk-install 60 cmake --install "$broot/kk" || exit 1
    date -u +%FT%TZ >"$prefix/.stamp"
  fi
else
  note "reusing Kokkos install in $prefix"
fi

# ---- mantissa ----------------------------------------------------------------------------
# The full build needs MPI, parallel HDF5, yaml-cpp, CLI11, fmt and GoogleTest. A GPU node
# without them (the lent H200 had no MPI/HDF5 so far) gets the Kokkos-only fallback:
# bench/device built as a project of its own (device STREAM, stencil per storage precision,
# every bf16/fp16/fp8 pattern converted on the device and compared with the host).
if [ -n "$missing" ]; then
  note "mantissa's dependencies are missing here; running the Kokkos-only fallback (bench/device):"
  echo "$missing" | tee -a "$summary"
  step device-configure 120 cmake "${gen[@]}" -S "$here/bench/device" -B "$broot/device" -DCMAKE_BUILD_TYPE=Release \
    -DKokkos_ROOT="$prefix" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" || exit 1
  step device-build 240 cmake --build "$broot/device" -j "$jobs" || exit 1
  step device-check 120 "$broot/device/mantissa_device_check" 512 20
  rc=$?
  note "total $((SECONDS - start)) s"
  exit $rc
fi
mb="$broot/mantissa"
step mantissa-configure 120 cmake "${gen[@]}" -S "$here" -B "$mb" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix" \
  -DMantissa_ENABLE_ONEDNN=OFF -DMantissa_ENABLE_TESTS=ON -DMantissa_ENABLE_BENCHMARKS=ON || exit 1
# Only what the run needs (the unit tests and the benchmarks; not the MPI tests or the app):
# a full nvcc build of mantissa does not fit in the budget.
targets="$(ctest --test-dir "$mb" -N -L unit | sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')"
if [ ${#gen[@]} -gt 0 ]; then
  all_targets="$(ninja -C "$mb" -t targets all)"
  # test names that are not targets (e.g. name_np1 of MPI tests run at one rank) are dropped
  targets="$(for t in $targets; do grep -q "^$t: phony" <<<"$all_targets" && echo "$t"; done | tr '\n' ' ')"
  bench_targets="$(sed -n 's#^\(bench/[^:]*\): CXX_EXECUTABLE_LINKER.*#\1#p' <<<"$all_targets" | tr '\n' ' ')"
  note "building: $targets $bench_targets"
  # shellcheck disable=SC2086
  step mantissa-build 300 ninja -C "$mb" -j "$jobs" -k 0 $targets $bench_targets
else
  tflags=()
  for t in $targets; do tflags+=(--target "$t"); done
  step mantissa-build 300 cmake --build "$mb" -j "$jobs" "${tflags[@]}"
fi
build_rc=$?
[ $build_rc -ne 0 ] && note "mantissa build had failures; testing what was built"

step ctest-unit 150 ctest --test-dir "$mb" -L unit --output-on-failure --timeout 120 -j 4
grep -E "tests passed|tests failed|^\s+[0-9]+ - " "$out/ctest-unit.log" | tee -a "$summary"

# ---- benchmarks: every executable built under bench/ ----------------------------------------
if [ -d "$mb/bench" ]; then
  while IFS= read -r exe; do
    name="bench-$(basename "$exe")"
    step "$name" 60 "$exe" || true
  done < <(find "$mb/bench" -type f -executable -not -name "*.so" -not -path "*/CMakeFiles/*" | sort)
fi
note "total $((SECONDS - start)) s"
