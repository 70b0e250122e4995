#!/usr/bin/env bash
# CPU rehearsal of the GPU run: scripts/device/run.sh in a clean Debian 12 root that has only
# what a bare GPU node has (a C library, g++/make, python3-minimal, xz, binutils; no CMake, Ninja,
# git, MPI, HDF5, yaml-cpp, CLI11, fmt, GoogleTest, BLAS), so that every library, header and
# tool the build and the runs use must come from the carried bundle.
#
#   scripts/device/rehearse.sh [run.sh arguments]       (as root; default backend openmp)
#
# ROOT (default /work/ext/cleanroot) is made with debootstrap --variant=minbase bookworm the
# first time (needs the Debian mirror; ~3 minutes), then g++ make python3-minimal xz-utils
# binutils are installed into it. Like the device tool's `run`, the working tree (tracked and
# untracked-but-not-ignored files) plus the carried device-bundle/ is copied to ROOT/work/repo;
# run.sh then runs there under chroot in a private mount namespace (proc and dev mounted only
# for it) with an empty environment but PATH/HOME/JOBS/BUDGET_S/STEPS/THREADS. Results:
# OUT (default <repo>/rehearsal-out), also proof.txt: the root's package list and a search of
# the whole root for the headers and libraries that must not be there outside the bundle.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
root="${ROOT:-/work/ext/cleanroot}"
out="${OUT:-$here/rehearsal-out}"
[ "$(id -u)" -eq 0 ] || { echo "rehearse.sh needs root (chroot, mount namespace)" >&2; exit 2; }
[ -f "$here/device-bundle/prefix.tar.xz" ] || { echo "no device-bundle/ (scripts/device/prepare_bundle.sh first)" >&2; exit 2; }
if [ ! -x "$root/usr/bin/g++" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
  cp /etc/resolv.conf "$root/etc/"
  unshare -m bash -c "mount -t proc proc '$root/proc' && mount --rbind /dev '$root/dev' &&
    chroot '$root' /bin/bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends g++ make python3-minimal xz-utils binutils'"
fi
# The working tree as the device tool carries it: tracked + untracked non-ignored + device-bundle.
rm -rf "$root/work/repo" "$root/out"
# KEEP_BUILD=1 keeps the builds of the last rehearsal (run.sh reuses the Kokkos install).
[ "${KEEP_BUILD:-0}" = 1 ] || rm -rf "$root/tmp/mantissa-device"
mkdir -p "$root/work/repo" "$root/out" "$out"
rm -rf "${out:?}"/*  # no result of an earlier rehearsal may be mistaken for this one's
(cd "$here" && { git ls-files -co --exclude-standard; find device-bundle -type f; } | sort -u |
  while IFS= read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done | tar --null -T - -cf -) | tar -C "$root/work/repo" -xf -
{
  echo "clean root: $root ($(. "$root/etc/os-release"; echo "$PRETTY_NAME"))"
  echo "packages installed in it: $(chroot "$root" dpkg-query -W -f='${Package}\n' | wc -l)"
  chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' | paste -sd' '
  # /tmp/mantissa-device is where run.sh unpacks the bundle and builds (kept by KEEP_BUILD=1):
  # everything in it came from the bundle, so the search leaves it out with the tree itself.
  echo "--- must be absent outside the bundle (search of the whole root, minus /work/repo and /tmp/mantissa-device):"
  for pat in mpi.h hdf5.h yaml.h CLI.hpp format.h gtest.h cblas.h 'libmpi.so*' 'libhdf5*.so*' 'libyaml-cpp.so*' \
    'libfmt.so*' 'libgtest*' 'libblas.so*' 'libopenblas*' cmake ninja mpirun git; do
    hits="$(find "$root" -path "$root/work/repo" -prune -o -path "$root/tmp/mantissa-device" -prune -o -path "$root/proc" -prune -o -name "$pat" -print 2>/dev/null | grep -v '/usr/include/linux/' || true)"
    printf '%-18s %s\n' "$pat" "${hits:-absent}"
  done
} >"$out/proof.txt"
cat "$out/proof.txt" >&2
pass_env=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 OUT=/out)
for v in JOBS BUDGET_S STEPS THREADS RANKS TIME_SCALE MAIN_TARGETS; do [ -n "${!v:-}" ] && pass_env+=("$v=${!v}"); done
t0=$SECONDS
rc=0
unshare -m bash -c "mount -t proc proc '$root/proc' && mount --rbind /dev '$root/dev' && mount --rbind /sys '$root/sys' &&
  mount --bind '$out' '$root/out' &&
  exec chroot '$root' /usr/bin/env -i $(printf '%q ' "${pass_env[@]}") /bin/bash /work/repo/scripts/device/run.sh ${*:-openmp}" || rc=$?
echo "rehearsal: rc=$rc in $((SECONDS - t0)) s; results in $out" | tee -a "$out/proof.txt" >&2
exit $rc
