#!/usr/bin/env bash
# Set up everything mantissa needs on a fresh Debian 12 (bookworm) machine; a no-op when it is
# already there.
#   1. Debian packages (apt), only those missing.
#   2. Kokkos and Kokkos Kernels 3.4.01 from Debian's `trilinos` source package (only
#      packages/kokkos and packages/kokkos-kernels are extracted), OpenMP + Serial back-ends,
#      installed into a cache prefix outside the checkout, reused by later runs and by CI.
# Prints the prefix to use as CMAKE_PREFIX_PATH on its last line.
#
# Environment:
#   MANTISSA_DEPS   cache prefix (default: $HOME/.cache/mantissa/deps)
#   MANTISSA_SKIP_APT=1   do not call apt (packages provided otherwise)
#   MANTISSA_BOOTSTRAP_TESTS=1   also what only the tests need (slurm-wlm, munge)
set -euo pipefail

DEPS="${MANTISSA_DEPS:-$HOME/.cache/mantissa/deps}"
KOKKOS_VERSION=3.4.01
STAMP="$DEPS/.kokkos-${KOKKOS_VERSION}.done"
log() { printf '[bootstrap] %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PKGS=(
  build-essential cmake ninja-build pkg-config git xz-utils dpkg-dev
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libyaml-cpp-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev liblapack-dev libdnnl-dev
  libhypre-dev
  python3 python3-numpy python3-h5py python3-matplotlib python3-torch python3-yaml
)
# Only for the test suite (scripts/test.sh sets MANTISSA_BOOTSTRAP_TESTS=1): the Slurm daemons
# and munge that tests/slurm starts as a private one-node cluster on loopback.
# And the pinned clang-format / clang-tidy of the `style` test (scripts/check_style.sh).
if [ "${MANTISSA_BOOTSTRAP_TESTS:-0}" = 1 ]; then
  PKGS+=(slurm-wlm munge clang-format-14 clang-tidy-14)
fi

if [ "${MANTISSA_SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

if [ -f "$STAMP" ]; then
  log "Kokkos ${KOKKOS_VERSION} already in $DEPS"
  echo "$DEPS"
  exit 0
fi

# Kokkos + Kokkos Kernels from Debian's trilinos source package.
SRC_LIST=/etc/apt/sources.list.d/mantissa-deb-src.sources
if ! apt-get source --print-uris trilinos >/dev/null 2>&1; then
  log "adding a deb-src entry for bookworm in $SRC_LIST"
  $SUDO tee "$SRC_LIST" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $SUDO apt-get update -qq
fi

WORK="$DEPS/src"
mkdir -p "$WORK"
cd "$WORK"
orig=$(ls trilinos_*.orig.tar.* 2>/dev/null | head -n1 || true)
if [ -z "$orig" ]; then
  log "downloading the trilinos source package (orig tarball only)"
  apt-get source --download-only trilinos >/dev/null
  orig=$(ls trilinos_*.orig.tar.* | head -n1)
fi
if [ ! -d kokkos-src ] || [ ! -d kokkos-kernels-src ]; then
  log "extracting packages/kokkos and packages/kokkos-kernels from $orig"
  rm -rf extract && mkdir extract
  tar -xf "$orig" -C extract --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  top=$(ls extract)
  rm -rf kokkos-src kokkos-kernels-src
  mv "extract/$top/packages/kokkos" kokkos-src
  mv "extract/$top/packages/kokkos-kernels" kokkos-kernels-src
  rm -rf extract
fi

JOBS=$(nproc)
GEN=(-G Ninja)
command -v ninja >/dev/null || GEN=()

log "building Kokkos ${KOKKOS_VERSION} (OpenMP + Serial)"
cmake -S kokkos-src -B build-kokkos "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$DEPS" \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON \
  -DKokkos_ENABLE_TESTS=OFF >/dev/null
cmake --build build-kokkos -j "$JOBS" >/dev/null
cmake --install build-kokkos >/dev/null

log "building Kokkos Kernels ${KOKKOS_VERSION} (explicit instantiation off, BLAS TPL on)"
cmake -S kokkos-kernels-src -B build-kk "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$DEPS" \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DKokkos_ROOT="$DEPS" \
  -DKokkosKernels_ENABLE_TPL_BLAS=ON \
  -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF \
  -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF \
  -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF \
  -DKokkosKernels_INST_LAYOUTRIGHT=OFF -DKokkosKernels_INST_EXECSPACE_OPENMP=OFF \
  -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF \
  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF >/dev/null
cmake --build build-kk -j "$JOBS" >/dev/null
cmake --install build-kk >/dev/null

rm -rf build-kokkos build-kk
touch "$STAMP"
log "done: $DEPS"
echo "$DEPS"
