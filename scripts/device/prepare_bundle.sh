#!/usr/bin/env bash
# Prepare what a bare GPU node lacks, as one carried folder (untracked; .gitignore lists it):
#
#   scripts/device/prepare_bundle.sh KOKKOS_GIT_DIR KOKKOS_KERNELS_GIT_DIR [BUNDLE_DIR]
#
# KOKKOS_GIT_DIR / KOKKOS_KERNELS_GIT_DIR: git directories of kokkos/kokkos and
# kokkos/kokkos-kernels (e.g. the mirrors the `fetch` tool brings: /work/.mirror/kokkos+kokkos/repo);
# the tags 4.6.01 and 4.6.02 are packed as tarballs (KOKKOS_TAG / KK_TAG override them).
# BUNDLE_DIR defaults to device-bundle/ in the repository root. It receives:
#   kokkos-<tag>.tar.xz, kokkos-kernels-<tag>.tar.xz   pristine release sources
#   prefix.tar.xz      the Debian 12 packages below, unpacked with dpkg-deb -x into one prefix
#                      (usr/...), pruned (docs, man pages, unused Open MPI transports) and
#                      made relocatable (h5pcc, pkg-config files, CMake files: /usr -> @PREFIX@,
#                      which run.sh replaces with the prefix's real location)
#   MANIFEST.txt       packages with versions, the sonames the prefix provides, sizes
#
# The packages: Open MPI 4.1 (library, headers, mpirun, PMIx, hwloc, libevent), parallel HDF5
# 1.10 (openmpi flavour) with what its shared library needs (libcurl and its TLS/Kerberos
# closure, szip), yaml-cpp, CLI11, fmt, GoogleTest/GoogleMock, Ninja and CMake (with their
# libraries). Every shared library the prefix's ELF files need is added until the set is closed,
# except the C and C++ runtime that comes with any host compiler (glibc, libstdc++, libgcc_s,
# libgomp). Open MPI components for InfiniBand/UCX/libfabric/PSM are dropped: one node, shared
# memory (vader) and TCP only. Needs apt (Debian 12 sources), dpkg-deb, xz and git; runs as any
# user (apt-get download needs no root).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
kgit="${1:?usage: $0 KOKKOS_GIT_DIR KOKKOS_KERNELS_GIT_DIR [BUNDLE_DIR]}"
kkgit="${2:?usage: $0 KOKKOS_GIT_DIR KOKKOS_KERNELS_GIT_DIR [BUNDLE_DIR]}"
bundle="${3:-$here/device-bundle}"
ktag="${KOKKOS_TAG:-4.6.01}"
kktag="${KK_TAG:-4.6.02}"
arch="$(dpkg --print-architecture)"
multi="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
log() { echo "[prepare_bundle] $*" >&2; }

work="$(mktemp -d /tmp/mantissa-bundle.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$bundle" "$work/debs" "$work/root"

# ---- Kokkos sources -------------------------------------------------------------------------
for pair in "$kgit kokkos $ktag" "$kkgit kokkos-kernels $kktag"; do
  read -r g name tag <<<"$pair"
  commit="$(git --git-dir="$g" rev-parse "$tag^{commit}")"
  echo "$name $tag $commit" >>"$work/sources.txt"
  if [ -s "$bundle/$name-$tag.tar.xz" ] && [ "$(xz -dc "$bundle/$name-$tag.tar.xz" | git get-tar-commit-id)" = "$commit" ]; then
    log "$name $tag ($commit): already packed"
    continue
  fi
  log "$name $tag ($commit)"
  git --git-dir="$g" archive --prefix="$name-$tag/" "$tag" | xz -T2 -6 >"$bundle/$name-$tag.tar.xz"
done

# ---- Debian packages -----------------------------------------------------------------------
seed=(
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7
  libhdf5-openmpi-dev libhdf5-openmpi-103-1 libsz2 libaec0
  libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev libfmt-dev libfmt9
  libgtest-dev libgmock-dev
  ninja-build cmake cmake-data
)
# Provided by the node's host compiler / C library (never carried).
skip_re='^(libc6|libc6-dev|libstdc\+\+6|libgcc-s1|libgomp1|libc-bin|gcc-.*-base)$'

download() { (cd "$work/debs" && apt-get download "$@" >/dev/null 2>&1) || {
  log "apt-get download $* failed (apt-get update? Debian 12 sources?)"; exit 1; }; }
have_pkg() { [ -n "$(ls "$work/debs/$1"_*.deb 2>/dev/null)" ]; }

log "downloading ${#seed[@]} packages"
download "${seed[@]}"
for d in "$work"/debs/*.deb; do dpkg-deb -x "$d" "$work/root"; done

# Drop what the run never uses before computing the closure.
prune() {
  local r="$work/root"
  rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/locale" "$r/usr/share/lintian" \
    "$r/usr/share/bash-completion" "$r/usr/share/emacs" "$r/usr/share/vim" "$r/usr/share/aclocal" \
    "$r/usr/share/cmake-"*/Help "$r/usr/share/info" "$r/usr/share/mime"
  # Open MPI transports for fabrics a single GPU node does not have (their libraries are not carried).
  find "$r/usr/lib/$multi/openmpi" -name 'mca_*' \( -name '*ucx*' -o -name '*ofi*' -o -name '*psm*' \
    -o -name '*openib*' -o -name '*verbs*' -o -name '*usnic*' -o -name '*portals*' -o -name '*ucc*' \) \
    -delete 2>/dev/null || true
  find "$r/usr/lib/$multi" -maxdepth 3 \( -name 'libmca_common_ucx*' -o -name 'libmca_common_verbs*' \
    -o -name 'libmca_common_ofi*' -o -name 'libmca_common_ompio*fortran*' \) -delete 2>/dev/null || true
  # Fortran and Java bindings and static archives mantissa does not link (GoogleTest's stay).
  find "$r" \( -name 'libmpi_mpifh*' -o -name 'libmpi_usempi*' -o -name 'libmpi_java*' -o -name '*fortran*.so*' \
    -o -name 'libhdf5*fortran*' -o -name '*.mod' \) -delete 2>/dev/null || true
  find "$r" -name '*.a' ! -name 'libgtest*.a' ! -name 'libgmock*.a' -delete 2>/dev/null || true
}
prune

# Close the set: every DT_NEEDED soname of every ELF file must be in the prefix or be the
# compiler's runtime. Missing ones are mapped to Debian packages through this machine's dpkg
# database (the packages must be installed here for that, or named in seed).
base_sonames='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libgomp\.so\.1|libanl\.so\.1|libcrypt\.so\.1|libnsl\.so\.1)$'
for round in 1 2 3 4 5 6; do
  provided="$(find "$work/root" \( -type f -o -type l \) -name '*.so*' -printf '%f\n' | sort -u)"
  needed="$(find "$work/root" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
    { xargs -0 -r objdump -p 2>/dev/null || true; } | sed -n "s/^ *NEEDED *//p" | sort -u)"
  missing=()
  for so in $needed; do
    [[ "$so" =~ $base_sonames ]] && continue
    grep -qxF "$so" <<<"$provided" && continue
    pkg="$(dpkg -S "*/$so" 2>/dev/null | head -n 1 | cut -d: -f1 || true)"
    if [ -z "$pkg" ]; then log "WARNING: no package provides $so here"; continue; fi
    [[ "$pkg" =~ $skip_re ]] && continue
    have_pkg "$pkg" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && break
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  log "closure round $round: ${missing[*]}"
  download "${missing[@]}"
  for p in "${missing[@]}"; do dpkg-deb -x "$(ls "$work/debs/$p"_*.deb | head -n 1)" "$work/root"; done
  prune
done

# ---- relocation: /usr -> @PREFIX@ in text files that name install paths ----------------------
# (h5pcc, pkg-config files, CMake package files, Open MPI's wrapper data); run.sh substitutes
# the real prefix. ELF files are found through LD_LIBRARY_PATH / OPAL_PREFIX, not rpaths.
r="$work/root"
mapfile -t texts < <(grep -rlIE '(^|[^A-Za-z0-9_./-])/usr/(lib|include|bin|share)' \
  "$r/usr/lib/$multi/pkgconfig" "$r/usr/share/pkgconfig" "$r/usr/lib/$multi/cmake" "$r/usr/share/cmake" \
  "$r/usr/lib/$multi/openmpi/share" "$r/usr/share/openmpi" "$r/usr/bin" "$r/usr/lib/$multi/hdf5" 2>/dev/null || true)
for f in "${texts[@]}"; do
  [ -L "$f" ] && continue
  sed -i -E 's#(^|[^A-Za-z0-9_./-])/usr/(lib|include|bin|share)#\1@PREFIX@/usr/\2#g; s#prefix=/usr$#prefix=@PREFIX@/usr#' "$f"
  echo "${f#"$r"/}" >>"$work/relocate.txt"
done
# h5pcc's own prefix line is "prefix=/usr" (no trailing path).
for f in "$r"/usr/bin/h5pcc* ; do
  [ -f "$f" ] || continue
  sed -i -E 's#^prefix="?/usr"?$#prefix="@PREFIX@/usr"#' "$f"
  grep -qxF "${f#"$r"/}" "$work/relocate.txt" || echo "${f#"$r"/}" >>"$work/relocate.txt"
done
# Absolute symlinks (e.g. .so -> /usr/lib/...) become relative.
find "$r" -type l | while read -r l; do
  t="$(readlink "$l")"
  case "$t" in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$r$t")" "$l" ;; esac
done
cp "$work/relocate.txt" "$r/RELOCATE.txt"

# ---- pack, manifest -------------------------------------------------------------------------
{
  echo "mantissa device bundle, prepared $(date -u +%FT%TZ) on $(. /etc/os-release; echo "$PRETTY_NAME") ($arch)"
  echo "--- sources"; cat "$work/sources.txt"
  echo "--- Debian packages"
  for d in "$work"/debs/*.deb; do dpkg-deb -f "$d" Package Version | paste -sd' '; done
  echo "--- shared libraries provided (sonames)"
  find "$r" -name '*.so.*' -printf '%f\n' | sort -u | paste -sd' '
} >"$bundle/MANIFEST.txt"
cp "$bundle/MANIFEST.txt" "$r/MANIFEST.txt"
log "packing prefix ($(du -sh "$r" | cut -f1) unpacked)"
tar -C "$r" -cf - . | xz -T2 -6 >"$bundle/prefix.tar.xz"
{ echo "--- bundle files"; (cd "$bundle" && du -b ./*.tar.xz); echo "total bytes: $(du -cb "$bundle"/*.tar.xz | tail -n 1 | cut -f1)"; } \
  | tee -a "$bundle/MANIFEST.txt" >&2
total="$(du -cb "$bundle"/*.tar.xz | tail -n 1 | cut -f1)"
if [ "$total" -gt $((64 * 1024 * 1024)) ]; then
  log "ERROR: bundle is $total bytes, over the 64 MiB a device run may carry"
  exit 1
fi
log "bundle ready in $bundle ($((total / 1024 / 1024)) MiB)"
