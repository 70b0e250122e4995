#!/usr/bin/env bash
# One prepared run on a lent NVIDIA H200 node (no network, no MPI/HDF5 there): build Kokkos
# with CUDA for sm_90 from a carried source tree, build bench/device against it, run the
# device check and the PyTorch peer. Everything lands in $OUT. Usage (repository root):
#   bench/device/run_h200.sh .ext/kokkos
# Kokkos 4.6 needs the two CUDA 13 fixes described in docs/portability.md.
set -uo pipefail
KOKKOS_SRC="$(realpath "${1:?path to a Kokkos source tree}")"
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
log="$OUT/h200.log"
exec > >(tee "$log") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
nvcc --version | tail -2
cmake --version | head -1
nproc
# nvcc_wrapper defaults to sm_70, which CUDA 13 dropped.
export NVCC_WRAPPER_DEFAULT_ARCH=sm_90
t0=$(date +%s)
cmake -S "$KOKKOS_SRC" -B /tmp/kokkos-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX=/tmp/kokkos -DCMAKE_CXX_COMPILER="$KOKKOS_SRC/bin/nvcc_wrapper" \
  -DCMAKE_CXX_STANDARD=17 -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_SERIAL=ON \
  -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_TESTS=OFF >/tmp/kokkos-cmake.log 2>&1 \
  || { tail -30 /tmp/kokkos-cmake.log; exit 1; }
cmake --build /tmp/kokkos-build -j 16 >/tmp/kokkos-build.log 2>&1 || { tail -30 /tmp/kokkos-build.log; exit 1; }
cmake --install /tmp/kokkos-build >/dev/null
echo "Kokkos with CUDA built in $(( $(date +%s) - t0 )) s"
cmake -S bench/device -B /tmp/device-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT=/tmp/kokkos \
  -DCMAKE_CXX_COMPILER=/tmp/kokkos/bin/nvcc_wrapper >/tmp/device-cmake.log 2>&1 || { tail -30 /tmp/device-cmake.log; exit 1; }
cmake --build /tmp/device-build -j 16 2>&1 | tail -5
echo "built in $(( $(date +%s) - t0 )) s"
/tmp/device-build/mantissa_device_check 512 20 | tee "$OUT/device_check.txt"
rc=${PIPESTATUS[0]}
PYTHONUNBUFFERED=1 python3 bench/device/torch_peer.py | tee "$OUT/torch_peer.txt"
echo "device check exit code $rc; total $(( $(date +%s) - t0 )) s"
exit "$rc"
