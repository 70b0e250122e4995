#!/usr/bin/env bash
# Make a Kokkos <= 4.6 source tree build with CUDA 13 (in place, idempotent):
#  - cudaGraphAddDependencies gained an edge-data argument, cudaMemPrefetchAsync and
#    cudaMemAdvise take a cudaMemLocation: #if CUDART_VERSION >= 13000 branches are added to
#    core/src/Cuda/Kokkos_Cuda_Instance.hpp, so older CUDA still takes the original calls;
#  - nvcc_wrapper's built-in default arch sm_70 (used by CMake's compiler checks, which pass
#    no -arch) was dropped by CUDA 13: NVCC_WRAPPER_DEFAULT_ARCH may now override it.
# Trees that already have the new calls are left alone.
#   scripts/device/patch_kokkos_cuda13.sh KOKKOS_SRC
set -euo pipefail
kokkos_src="$(cd "${1:?usage: $0 KOKKOS_SRC}" && pwd)"
log() { echo "[patch_kokkos_cuda13] $*"; }
py="$(command -v /usr/bin/python3 || command -v python3)"
w="$kokkos_src/bin/nvcc_wrapper"
if [ -f "$w" ] && grep -q '^default_arch="sm_70"' "$w"; then
  sed -i 's/^default_arch="sm_70"/default_arch="${NVCC_WRAPPER_DEFAULT_ARCH:-sm_70}"/' "$w"
fi
f="$kokkos_src/core/src/Cuda/Kokkos_Cuda_Instance.hpp"
[ -f "$f" ] || exit 0
grep -q "MANTISSA_CUDA13_PATCH" "$f" && exit 0
grep -q "return cudaGraphAddDependencies(graph, from, to, numDependencies);" "$f" || exit 0
log "patching $f for the CUDA 13 runtime API"
"$py" - "$f" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
loc = ("    cudaMemLocation loc{};\n"
     "    loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;\n"
     "    loc.id = device;\n")
subs = [
  ("    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n",
   "#if CUDART_VERSION >= 13000  // MANTISSA_CUDA13_PATCH: edge data argument\n"
   "    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);\n"
   "#else\n"
   "    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n"
   "#endif\n"),
  ("    return cudaMemAdvise(devPtr, count, advice, device);\n",
   "#if CUDART_VERSION >= 13000  // MANTISSA_CUDA13_PATCH: cudaMemLocation\n" + loc +
   "    return cudaMemAdvise(devPtr, count, advice, loc);\n"
   "#else\n"
   "    return cudaMemAdvise(devPtr, count, advice, device);\n"
   "#endif\n"),
  ("    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n                                get_input_stream(stream));\n",
   "#if CUDART_VERSION >= 13000  // MANTISSA_CUDA13_PATCH: cudaMemLocation + flags\n" +
   loc.replace("device", "dstDevice") +
   "    return cudaMemPrefetchAsync(devPtr, count, loc, 0, get_input_stream(stream));\n"
   "#else\n"
   "    return cudaMemPrefetchAsync(devPtr, count, dstDevice, get_input_stream(stream));\n"
   "#endif\n"),
]
for old, new in subs:
  if old not in s:
      sys.exit("pattern not found in %s: %s" % (p, old.strip()))
  s = s.replace(old, new)
open(p, "w").write(s)
EOF
