#!/usr/bin/env bash
# From a bare node to results, in one go: mantissa's whole GPU check (or its CPU rehearsal).
#
#   scripts/device/run.sh [cuda|openmp]          (default: cuda when nvcc is found, else openmp)
#
# Needs on the node only: a host C++ compiler (g++), a C library, xz and tar, python3 (for the
# CUDA 13 patch of Kokkos), and for `cuda` the CUDA toolkit (nvcc, cuBLAS/cuBLASLt) with a
# driver. Everything else comes from the carried bundle (scripts/device/prepare_bundle.sh):
# Kokkos 4.6.01 and Kokkos Kernels 4.6.02 sources, and a prefix of Debian 12 packages (Open MPI,
# parallel HDF5, yaml-cpp, CLI11, fmt, GoogleTest, CMake, Ninja). The node's own CMake/Ninja are
# used when present and new enough; a library the node has (same soname) is taken from the node.
#
# Steps (each time-boxed with `timeout`; a failed step does not stop the next ones):
#   env, unpack, kokkos, kokkos-kernels, mantissa-configure, build-main (the app, the benchmarks,
#   the vendor-GEMM test), build-tests, quickstart (mpirun -np 2 mantissa run quickstart.yaml),
#   gemm-vendor (tstGemmVendor: cuBLASLt against the portable kernel), bench-seismic (512^3
#   order 8 per storage precision, STREAM triad peer), bench-surrogates (with the PyTorch peer
#   when the node's python3 has torch), ctest-unit, ctest-mpi (1 and 2 ranks).
# Results, all under OUT (default ./device-out): summary.txt (one line per step: passed / FAILED /
# TIMED OUT / skipped, rc, seconds), summary.json, <step>.log, environment.txt, nvidia-smi-*.txt,
# quickstart/ (the campaign's run directory with report.json), bench-*.txt.
#
# Environment: OUT, BUNDLE (default <repo>/device-bundle), BUILD_ROOT (default
# /tmp/mantissa-device; a second run on a warm node reuses its builds), JOBS (default nproc),
# BUDGET_S (default 560: whole-run limit; steps are clipped to what is left), TIME_SCALE
# (default 1: multiplies every step's limit, for slower machines), STEPS (a
# space-separated subset to run, default all), RANKS (MPI test rank counts, default "1 2").
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
t_start=$SECONDS
# Steps that are shell functions run as `run.sh --fn NAME BACKEND` under `timeout` (which runs
# programs, not functions): the script re-enters, sets the same variables, runs only NAME.
fn_mode=""
if [ "${1:-}" = --fn ]; then fn_mode="$2"; shift 2; fi
backend="${1:-}"
if [ -z "$backend" ]; then
  if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDA_HOME:-}" ]; then backend=cuda; else backend=openmp; fi
fi
case "$backend" in cuda | openmp) ;; *) echo "usage: $0 [cuda|openmp]" >&2; exit 2 ;; esac
out="${OUT:-$here/device-out}"
bundle="${BUNDLE:-$here/device-bundle}"
broot="${BUILD_ROOT:-/tmp/mantissa-device}"
jobs="${JOBS:-$(nproc)}"
budget="${BUDGET_S:-560}"
ranks="${RANKS:-1 2}"
# Step limits are for a 16-core node; TIME_SCALE multiplies them (the 2-core rehearsal: ~10).
time_scale="${TIME_SCALE:-1}"
mkdir -p "$out" "$broot"
out="$(cd "$out" && pwd)"
summary="$out/summary.txt"
if [ -z "$fn_mode" ]; then : >"$summary"; : >"$out/steps.tsv"; fi
say() { echo "[device] $*" | tee -a "$out/run.log" >&2; }
left() { echo $((budget - (SECONDS - t_start))); }
want() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }

# step NAME MAX_S cmd...: runs cmd with a time box, output to $OUT/NAME.log; records the result.
step() {
  local name="$1" max="$2"
  shift 2
  if [ -n "$fn_mode" ]; then
    [ "$1" = "$fn_mode" ] || return 0
    "$@"
    exit $?
  fi
  if ! want "$name"; then return 0; fi
  if declare -F "$1" >/dev/null; then
    set -- bash "$here/scripts/device/run.sh" --fn "$1" "$backend"
  elif [[ "$1" == /* ]] && [ ! -x "$1" ]; then
    printf '%-20s skipped (not built: %s)\n' "$name" "$1" | tee -a "$summary" >&2
    printf '%s\tskipped\t-\t0\t%s\t0\n' "$name" "$max" >>"$out/steps.tsv"
    return 1
  fi
  local l
  l="$(left)"
  if [ "$l" -lt 15 ]; then
    printf '%-20s skipped (whole-run budget spent)\n' "$name" | tee -a "$summary" >&2
    printf '%s\tskipped\t-\t0\t%s\t0\n' "$name" "$max" >>"$out/steps.tsv"
    return 1
  fi
  max=$((max * time_scale))
  [ "$max" -gt "$l" ] && max="$l"
  local t0=$SECONDS rc verdict cpu
  # bash's `time`: the step's CPU seconds (user + system of all its processes) beside the wall.
  { TIMEFORMAT='%U %S'; time timeout -k 10 "$max" "$@" >"$out/$name.log" 2>&1; } 2>"$out/.cpu-$name"
  rc=$?
  cpu="$(awk '{printf "%.0f", $1 + $2}' "$out/.cpu-$name" 2>/dev/null)"
  rm -f "$out/.cpu-$name"
  case $rc in
    0) verdict=passed ;;
    124 | 137) verdict="TIMED OUT" ;;
    *) verdict=FAILED ;;
  esac
  printf '%-20s %-9s rc=%-3s %4d s wall, %5s s CPU (limit %d s)\n' "$name" "$verdict" "$rc" $((SECONDS - t0)) "${cpu:-?}" "$max" | tee -a "$summary" >&2
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$verdict" "$rc" $((SECONDS - t0)) "$max" "${cpu:-0}" >>"$out/steps.tsv"
  [ $rc -ne 0 ] && tail -n 15 "$out/$name.log" | sed 's/^/    /' >&2
  return $rc
}

# ---- env: what the node has -------------------------------------------------------------------
cuda_home="${CUDA_HOME:-}"
if [ "$backend" = cuda ] && [ -z "$cuda_home" ]; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then cuda_home=/usr/local/cuda; else cuda_home="$(dirname "$(dirname "$(command -v nvcc)")")"; fi
fi
env_report() {
  echo "date: $(date -u +%FT%TZ)  host: $(hostname)  cores: $(nproc)  backend: $backend"
  echo "kernel: $(uname -srm)"
  [ -r /etc/os-release ] && (. /etc/os-release && echo "os: $PRETTY_NAME")
  echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "repository: $(git -C "$here" rev-parse HEAD 2>/dev/null || echo '(no git)') $(git -C "$here" status --porcelain 2>/dev/null | grep -c . || true) changed files"
  for t in g++ c++ cc cmake ninja make python3 xz tar timeout nvidia-smi mpirun; do
    printf '%-12s %s\n' "$t" "$(command -v "$t" >/dev/null && { command -v "$t"; "$t" --version 2>&1 | head -n 1; } | paste -sd' ' || echo MISSING)"
  done
  if [ "$backend" = cuda ]; then
    echo "nvcc: $cuda_home/bin/nvcc $("$cuda_home/bin/nvcc" --version 2>&1 | tail -n 1)"
    ls "$cuda_home"/lib64/libcublasLt.so* "$cuda_home"/targets/*/lib/libcublasLt.so* 2>/dev/null | head -n 2 | sed 's/^/cublasLt: /'
    ldconfig -p 2>/dev/null | grep -E 'libnvidia-ml\.so|libcuda\.so' | sed 's/^/driver lib:/'
  fi
  echo "python3 torch: $(python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())' 2>&1 | tail -n 1)"
}
[ -z "$fn_mode" ] && want env && { env_report >"$out/environment.txt" 2>&1; cat "$out/environment.txt" >&2; }
if [ -z "$fn_mode" ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi >"$out/nvidia-smi-start.txt" 2>&1
  nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
fi

# ---- unpack the bundle ----------------------------------------------------------------------
prefix="$broot/prefix"
src="$broot/src"
unpack() {
  set -e
  [ -f "$bundle/prefix.tar.xz" ] || { echo "no bundle at $bundle (run scripts/device/prepare_bundle.sh and carry device-bundle)"; exit 1; }
  if [ ! -f "$prefix/.unpacked" ]; then
    rm -rf "$prefix" && mkdir -p "$prefix"
    tar -C "$prefix" -xJf "$bundle/prefix.tar.xz"
    touch "$prefix/.unpacked"
  fi
  # Relocate: @PREFIX@ in the text files that name install paths (h5pcc, pkg-config and CMake
  # files, Open MPI's wrapper data) becomes the real prefix.
  { grep -rlI '@PREFIX@' "$prefix/usr" || true; } | while IFS= read -r f; do sed -i "s#@PREFIX@#$prefix#g" "$f"; echo "relocated ${f#"$prefix"/}"; done
  mkdir -p "$src"
  for t in "$bundle"/kokkos-*.tar.xz; do
    d="$src/$(basename "$t" .tar.xz)"
    [ -d "$d" ] || tar -C "$src" -xJf "$t"
  done
  # The carried libraries the node lacks (by soname) go into one directory on LD_LIBRARY_PATH;
  # those the node has come from the node (its own versions, newer than Debian 12's there).
  rm -rf "$broot/lib" && mkdir -p "$broot/lib"
  local have
  have="$(ldconfig -p 2>/dev/null | awk '{print $1}' | sort -u)"
  local n_own=0 n_node=0
  while IFS= read -r so; do
    name="$(basename "$so")"
    if grep -qxF "$name" <<<"$have"; then n_node=$((n_node + 1)); continue; fi
    [ -e "$broot/lib/$name" ] || { ln -s "$so" "$broot/lib/$name"; n_own=$((n_own + 1)); }
  done < <(find "$prefix/usr/lib" "$prefix/lib" -name '*.so.*' \( -type f -o -type l \) -not -path '*/openmpi/lib/openmpi3/*' -not -path '*/pmix2/lib/pmix/*')
  echo "carried libraries used: $n_own; taken from the node (same soname): $n_node"
  ls "$broot/lib" | paste -sd' '
  ls "$src"
}
step unpack 60 unpack

multi=x86_64-linux-gnu
[ -d "$prefix/usr/lib/aarch64-linux-gnu" ] && multi=aarch64-linux-gnu
pu="$prefix/usr"
export LD_LIBRARY_PATH="$broot/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# After the node's own tools: h5pcc calls mpicc.openmpi by name.
export PATH="$PATH:$pu/bin"
export OPAL_PREFIX="$pu" PMIX_INSTALL_PREFIX="$pu/lib/$multi/pmix2"
export PMIX_MCA_pcompress_base_silence_warning=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_PROC_BIND=false
# One node, no ssh/rsh on it: Open MPI's "isolated" launcher starts the ranks locally.
export OMPI_MCA_plm=isolated
# The node's CMake / Ninja when they are there and new enough, else the carried ones.
cmake_bin="$(command -v cmake || true)"
if [ -z "$cmake_bin" ] || ! "$cmake_bin" --version | head -n 1 | awk '{split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 20))}'; then
  cmake_bin="$pu/bin/cmake"
fi
ctest_bin="$(dirname "$cmake_bin")/ctest"
ninja_bin="$(command -v ninja || echo "$pu/bin/ninja")"
mpirun_bin="$pu/bin/mpirun.openmpi"
[ -x "$mpirun_bin" ] || mpirun_bin="$pu/bin/orterun"
[ -z "$fn_mode" ] && say "cmake: $cmake_bin; ninja: $ninja_bin; mpirun: $mpirun_bin; jobs: $jobs"
gen=(-G Ninja -DCMAKE_MAKE_PROGRAM="$ninja_bin")
kokkos_src="$(ls -d "$src"/kokkos-[0-9]* 2>/dev/null | head -n 1)"
kk_src="$(ls -d "$src"/kokkos-kernels-* 2>/dev/null | head -n 1)"
kprefix="$broot/kokkos-$backend"

# ---- preflight: the carried prefix used once (MPI wrapper, mpirun at 1 and 2 ranks, parallel
# HDF5 written and read back, yaml-cpp, CLI11, fmt), seconds before the long builds start.
preflight() {
  set -e
  local exe="$broot/preflight"
  "$pu/bin/mpicxx.openmpi" -showme:command
  "$pu/bin/mpicxx.openmpi" -std=c++17 -O0 "$here/scripts/device/preflight.cpp" -o "$exe" \
    -I"$pu/include/hdf5/openmpi" -I"$pu/include" -L"$pu/lib/$multi/hdf5/openmpi" -L"$pu/lib/$multi" \
    -lhdf5 -lyaml-cpp -lfmt -Wl,-rpath-link,"$broot/lib"
  (cd "$broot" && "$mpirun_bin" --oversubscribe --bind-to none -np 1 "$exe" "$broot/preflight1.h5")
  (cd "$broot" && "$mpirun_bin" --oversubscribe --bind-to none -np 2 "$exe" "$broot/preflight2.h5")
}
step preflight 90 preflight

# ---- Kokkos, Kokkos Kernels -----------------------------------------------------------------
kokkos_args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$kprefix" -DCMAKE_CXX_STANDARD=17
  -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF)
kk_args=()
cxx=(-DCMAKE_CXX_COMPILER="${CXX:-g++}")
if [ "$backend" = cuda ]; then
  export PATH="$cuda_home/bin:$PATH" CUDA_ROOT="$cuda_home"
  export NVCC_WRAPPER_DEFAULT_ARCH="${NVCC_WRAPPER_DEFAULT_ARCH:-sm_90}"
  kokkos_args+=(-DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON
    -DKokkos_ARCH_"${KOKKOS_ARCH:-HOPPER90}"=ON)
  kk_args+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
    -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF)
  cxx=(-DCMAKE_CXX_COMPILER="$kprefix/bin/nvcc_wrapper")
else
  kokkos_args+=("${cxx[@]}" -DKokkos_ENABLE_OPENMP=ON)
  kk_args+=(-DKokkosKernels_ENABLE_TPL_BLAS=OFF)
fi
build_kokkos() {
  set -e
  [ -f "$kprefix/.done" ] && { echo "reusing $kprefix"; return 0; }
  [ "$backend" = cuda ] && "$here/scripts/device/patch_kokkos_cuda13.sh" "$kokkos_src"
  "$cmake_bin" "${gen[@]}" -S "$kokkos_src" -B "$broot/build-kokkos-$backend" "${kokkos_args[@]}"
  "$cmake_bin" --build "$broot/build-kokkos-$backend" -j "$jobs"
  "$cmake_bin" --install "$broot/build-kokkos-$backend" >/dev/null
  touch "$kprefix/.kokkos"
}
build_kk() {
  set -e
  [ -f "$kprefix/.done" ] && { echo "reusing $kprefix"; return 0; }
  local kcxx=(-DCMAKE_CXX_COMPILER="${CXX:-g++}")
  [ "$backend" = cuda ] && kcxx=(-DCMAKE_CXX_COMPILER="$kprefix/bin/nvcc_wrapper")
  "$cmake_bin" "${gen[@]}" -S "$kk_src" -B "$broot/build-kk-$backend" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$kprefix" -DKokkos_ROOT="$kprefix" "${kcxx[@]}" \
    -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON \
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TESTS=OFF \
    -DKokkosKernels_ENABLE_EXAMPLES=OFF -DKokkosKernels_ENABLE_PERFTESTS=OFF "${kk_args[@]}"
  "$cmake_bin" --build "$broot/build-kk-$backend" -j "$jobs"
  "$cmake_bin" --install "$broot/build-kk-$backend" >/dev/null
  touch "$kprefix/.done"
}
step kokkos 240 build_kokkos
step kokkos-kernels 120 build_kk

# ---- mantissa ------------------------------------------------------------------------------
mb="$broot/build-mantissa-$backend"
py="$(command -v python3 || echo /usr/bin/python3)"
configure_mantissa() {
  set -e
  local rl
  rl="$(echo "$ranks" | tr ' ' ';')"
  local pyt=ON
  "$py" -c 'import torch, h5py, numpy' >/dev/null 2>&1 || { pyt=OFF; echo "python3 lacks torch/h5py/numpy: PyTorch oracle tests off"; }
  "$cmake_bin" "${gen[@]}" -S "$here" -B "$mb" -DCMAKE_BUILD_TYPE=Release "${cxx[@]}" \
    -DKokkos_ROOT="$kprefix" -DKokkosKernels_ROOT="$kprefix" -DCMAKE_PREFIX_PATH="$pu" \
    -DCMAKE_LIBRARY_PATH="$pu/lib/$multi" -DCMAKE_INCLUDE_PATH="$pu/include" \
    -DMPI_CXX_COMPILER="$pu/bin/mpicxx.openmpi" -DMPI_C_COMPILER="$pu/bin/mpicc.openmpi" \
    -DMPIEXEC_EXECUTABLE="$mpirun_bin" -DHDF5_C_COMPILER_EXECUTABLE=HDF5_C_COMPILER_EXECUTABLE-NOTFOUND \
    -DHDF5_C_LIBRARY_hdf5="$pu/lib/$multi/libhdf5_openmpi.so" -DHDF5_hdf5_LIBRARY_RELEASE="$pu/lib/$multi/libhdf5_openmpi.so" \
    -DHDF5_C_INCLUDE_DIR="$pu/include/hdf5/openmpi" \
    -DMANTISSA_MPI_RANKS="$rl" -DMantissa_ENABLE_PYTHON_TESTS="$pyt" -DMantissa_ENABLE_STYLE_TEST=OFF -DMantissa_ENABLE_ONEDNN=OFF -DMANTISSA_PYTHON="$py" \
    -DCMAKE_BUILD_RPATH="$broot/lib"
  grep -E "^(Kokkos_DIR|MPI_CXX_LIB_NAMES|HDF5_C_LIBRARY_hdf5|HDF5_C_INCLUDE_DIR|yaml-cpp_DIR|fmt_DIR|CLI11_DIR|GTest_DIR|MPIEXEC_EXECUTABLE)[:=]" "$mb/CMakeCache.txt"
  # Nothing may come from the system's /usr (the node has none of it): list what was found.
  if grep -E "^(MPI|HDF5|yaml|fmt|CLI11|GTest)[^:]*:(FILEPATH|PATH|STRING)=/usr/(lib|include)" "$mb/CMakeCache.txt"; then
    echo "ERROR: a dependency was found in the system's /usr, not in the carried prefix"
    exit 1
  fi
}
step mantissa-configure 90 configure_mantissa

main_targets="${MAIN_TARGETS:-mantissa mantissa_device_check mantissa_bench_seismic bench_surrogate mantissa_unit_surrogates_gemm_vendor}"
step build-main 300 "$ninja_bin" -C "$mb" -j "$jobs" -k 0 $main_targets
step build-tests 240 "$ninja_bin" -C "$mb" -j "$jobs" -k 0

# ---- runs -------------------------------------------------------------------------------------
threads=1
[ "$backend" = openmp ] && threads="${THREADS:-1}"
export OMP_NUM_THREADS="$threads"
mpi=("$mpirun_bin" --oversubscribe --bind-to none)
quickstart() {
  rm -rf "$out/quickstart"
  # The quickstart's surrogate trains for 12500 steps (about 4 minutes on 2 CPU cores, never
  # timed on a device); this step checks that the main job runs on the device and what its
  # report says, so it trains 2000 steps to stay inside the step's limit.
  "${mpi[@]}" -np 2 "$mb/apps/mantissa/mantissa" run "$here/inputs/quickstart.yaml" \
    "run.output_dir=$out" surrogate.train.total_steps=2000 --overwrite
  ls "$out/quickstart"
  # What the report says about the machine and the energy meter (the make-or-break items).
  grep -oE '"(backend|devices|device|energy_meter|energy_joules|energy_note|precision_support|wall_seconds)": *("[^"]*"|[-0-9.e+]+|\[[^]]*\])' \
    "$out/quickstart/report.json" | sort | uniq -c | sort -rn | head -n 40
}
step quickstart 150 quickstart
step gemm-vendor 60 "$mb/tests/unit/surrogates/mantissa_unit_surrogates_gemm_vendor"
if [ "$backend" = cuda ]; then
  step device-check 60 "$mb/bench/device/mantissa_device_check" 512 20 "$mb/bench/seismic/mantissa_bench_seismic" 512 10
  step bench-surrogates 120 "$mb/bench/surrogates/bench_surrogate" 256 5
else
  step device-check 60 "$mb/bench/device/mantissa_device_check" 96 3
  step bench-seismic 120 "$mb/bench/seismic/mantissa_bench_seismic" 96 5
  step bench-surrogates 120 "$mb/bench/surrogates/bench_surrogate" 64 2 fp32,bf16 0
fi
# The PyTorch peer (STREAM copy, GEMM rates per precision) in the same job, where torch is there.
if "$py" -c 'import torch' >/dev/null 2>&1; then
  step torch-peer 90 env -u LD_LIBRARY_PATH "$py" "$here/bench/device/torch_peer.py"
fi
step ctest-unit 150 "$ctest_bin" --test-dir "$mb" -L unit --no-tests=error --output-on-failure --timeout 120 -j "$(( jobs < 8 ? jobs : 8 ))"
step ctest-mpi 180 "$ctest_bin" --test-dir "$mb" -L mpi --no-tests=error --output-on-failure --timeout 150 -j "$(( jobs < 4 ? 1 : 4 ))"
[ -n "$fn_mode" ] && { echo "no step function $fn_mode" >&2; exit 2; }
for t in ctest-unit ctest-mpi; do
  [ -f "$out/$t.log" ] && grep -E "tests passed|tests failed|^\s+[0-9]+ - " "$out/$t.log" | sed "s/^/  $t: /" | tee -a "$summary" >&2
done
command -v nvidia-smi >/dev/null && nvidia-smi >"$out/nvidia-smi-end.txt" 2>&1

# ---- summary.json ---------------------------------------------------------------------------
{
  echo "{\"backend\": \"$backend\", \"total_seconds\": $((SECONDS - t_start)), \"budget_seconds\": $budget, \"jobs\": $jobs, \"steps\": ["
  awk -F'\t' '{printf "%s{\"step\": \"%s\", \"result\": \"%s\", \"rc\": \"%s\", \"seconds\": %s, \"limit\": %s, \"cpu_seconds\": %s}", (NR>1?",\n  ":"  "), $1, $2, $3, $4, $5, $6}' "$out/steps.tsv"
  echo "]}"
} >"$out/summary.json"
failed="$(awk -F'\t' '$2 != "passed"' "$out/steps.tsv" | wc -l)"
say "total $((SECONDS - t_start)) s; $failed step(s) not passed; results in $out"
[ "$failed" -eq 0 ]
