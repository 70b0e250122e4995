#!/usr/bin/env bash
# The command line of the real executable: what a user reads and the exit codes.
# usage: check_cli.sh MANTISSA SOURCE_DIR WORK_DIR [MPIEXEC [MPIEXEC_FLAGS...]]
# Prints one PASS/FAIL line per check and "N passed, N failed" at the end; exits 1 on a failure.
set -uo pipefail
exe="$1" src="$2" work="$3"
shift 3
mpiexec=("$@")
unset OMP_PROC_BIND OMP_PLACES KOKKOS_DISABLE_WARNINGS
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL: $1"
  echo "  --- stdout:"; sed 's/^/  | /' out.txt | head -20
  echo "  --- stderr:"; sed 's/^/  | /' err.txt | head -20
  fail=$((fail + 1))
}
# run CMD...: stdout in out.txt, stderr in err.txt, exit code in $rc
run() { "$@" >out.txt 2>err.txt; rc=$?; }
# Kokkos' start-up noise that a user must not see unasked: its option banner and its warnings.
noise() { grep -l -E "Kokkos command line arguments|WARNING|OMP_PROC_BIND environment" out.txt err.txt; }

# --help and every subcommand's --help: mantissa's text only, on stdout, exit 0, nothing run.
run "$exe" --help
if [ "$rc" = 0 ] && head -n1 out.txt | grep -q '^mantissa: ' && grep -q '^Subcommands:' out.txt &&
   grep -q -- '--kokkos-help' out.txt && [ ! -s err.txt ] && ! noise >/dev/null; then
  ok "mantissa --help"
else bad "mantissa --help (rc=$rc)"; fi

for sub in run check info deck-doc; do
  run "$exe" "$sub" --help
  if [ "$rc" = 0 ] && grep -q "^Usage: .* $sub" out.txt && [ ! -s err.txt ] && ! noise >/dev/null; then
    ok "mantissa $sub --help"
  else bad "mantissa $sub --help (rc=$rc)"; fi
done

# --help wins over a deck: nothing is read, run or created (before: "no such deck file", exit 1).
for sub in run check; do
  run "$exe" "$sub" missing-deck.yaml --help
  if [ "$rc" = 0 ] && grep -q "^Usage: .* $sub" out.txt && [ ! -s err.txt ] && [ ! -e output ]; then
    ok "mantissa $sub DECK --help prints help and runs nothing"
  else bad "mantissa $sub DECK --help (rc=$rc)"; fi
done
run "$exe" run "$src/inputs/quickstart.yaml" run.output_dir="$work/output" -h
if [ "$rc" = 0 ] && [ ! -e "$work/output" ]; then ok "mantissa run REAL_DECK -h creates no run directory"
else bad "mantissa run REAL_DECK -h (rc=$rc)"; fi

# --version: exactly one line, the version, exit 0.
run "$exe" --version
if [ "$rc" = 0 ] && [ "$(wc -l <out.txt)" = 1 ] && grep -q -E '^[0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]+' out.txt &&
   [ ! -s err.txt ]; then
  ok "mantissa --version"
else bad "mantissa --version (rc=$rc)"; fi

# Kokkos' own help under its own flag, exit 0.
run "$exe" --kokkos-help
if [ "$rc" = 0 ] && grep -q "Kokkos command line arguments" out.txt && grep -q -- "--kokkos-help" out.txt; then
  ok "mantissa --kokkos-help prints Kokkos' options"
else bad "mantissa --kokkos-help (rc=$rc)"; fi

# info starts Kokkos: no warning with the binding unset, and it says what is in effect.
run "$exe" info
if [ "$rc" = 0 ] && ! noise >/dev/null && [ ! -s err.txt ] &&
   grep -q "OpenMP binding: *OMP_PROC_BIND=false OMP_PLACES=(unset) (mantissa's default" out.txt; then
  ok "mantissa info: no Kokkos warning with OMP_PROC_BIND unset; binding reported"
elif [ "$rc" = 0 ] && ! noise >/dev/null && ! grep -q "back-ends enabled:.*OpenMP" out.txt; then
  ok "mantissa info: no Kokkos warning (no OpenMP back-end)"
else bad "mantissa info with OMP_PROC_BIND unset (rc=$rc)"; fi

# A binding the user chose is kept as it is and not called mantissa's.
OMP_PROC_BIND=close run "$exe" info
if [ "$rc" = 0 ] && { grep -q "OMP_PROC_BIND=close OMP_PLACES=(unset)$" out.txt ||
                      ! grep -q "back-ends enabled:.*OpenMP" out.txt; }; then
  ok "mantissa info keeps the user's OMP_PROC_BIND"
else bad "mantissa info with OMP_PROC_BIND=close (rc=$rc)"; fi
# OMP_PLACES alone: the runtime binds (spec: bind-var true), mantissa adds nothing.
OMP_PLACES=cores run "$exe" info
if [ "$rc" = 0 ] && ! grep -q "mantissa's default" out.txt; then
  ok "mantissa info with only OMP_PLACES set adds no default"
else bad "mantissa info with OMP_PLACES=cores (rc=$rc)"; fi

# Kokkos arguments reach Kokkos (the thread count shows in info), CLI11 does not reject them.
kv=$(grep -o -E '^Kokkos [0-9]+' out.txt | awk '{print $2}')
if [ "${kv:-0}" -ge 4 ]; then kthreads=--kokkos-num-threads=1; else kthreads=--kokkos-threads=1; fi
if grep -q "back-ends enabled:.*OpenMP" out.txt; then
  OMP_NUM_THREADS=2 run "$exe" info "$kthreads"
  if [ "$rc" = 0 ] && grep -q "default space: *OpenMP (concurrency 1)" out.txt; then
    ok "mantissa info $kthreads reaches Kokkos"
  else bad "mantissa info $kthreads (rc=$rc)"; fi
fi

# check starts no back-end: a valid deck prints its summary only.
run "$exe" check "$src/inputs/quickstart.yaml"
if [ "$rc" = 0 ] && grep -q ": ok$" out.txt && [ ! -s err.txt ] && ! noise >/dev/null; then
  ok "mantissa check DECK: summary only"
else bad "mantissa check DECK (rc=$rc)"; fi

# Usage errors: one message in the project's form with the remedy, non-zero exit.
run "$exe"
if [ "$rc" != 0 ] && grep -q "^mantissa: error: " err.txt && grep -q "mantissa --help" err.txt && [ ! -s out.txt ]; then
  ok "mantissa (no subcommand): usage error"
else bad "mantissa without subcommand (rc=$rc)"; fi
run "$exe" run deck.yaml --no-such-flag
if [ "$rc" != 0 ] && grep -q "^mantissa: error: .*--no-such-flag" err.txt && grep -q "mantissa run --help" err.txt; then
  ok "mantissa run --no-such-flag: usage error naming the flag"
else bad "mantissa run --no-such-flag (rc=$rc)"; fi
run "$exe" check missing-deck.yaml
if [ "$rc" = 1 ] && grep -q "^mantissa: error: missing-deck.yaml: no such deck file" err.txt; then
  ok "mantissa check MISSING: the deck error, exit 1"
else bad "mantissa check MISSING (rc=$rc)"; fi

# At 2 ranks: printed once, no warning from any rank.
if [ "${#mpiexec[@]}" -gt 0 ]; then
  run "${mpiexec[@]}" -n 2 "$exe" --version
  if [ "$rc" = 0 ] && [ "$(wc -l <out.txt)" = 1 ] && ! noise >/dev/null; then
    ok "2 ranks: --version once"
  else bad "2 ranks: --version (rc=$rc)"; fi
  run "${mpiexec[@]}" -n 2 "$exe" info
  if [ "$rc" = 0 ] && ! noise >/dev/null && [ "$(grep -c '^mantissa ' out.txt)" = 1 ] && grep -q "ranks: 2" out.txt; then
    ok "2 ranks: info once, no warning"
  else bad "2 ranks: info (rc=$rc)"; fi
  run "${mpiexec[@]}" -n 2 "$exe" --kokkos-help
  if [ "$rc" = 0 ] && [ "$(grep -c 'Kokkos command line arguments' out.txt)" = 1 ]; then
    ok "2 ranks: --kokkos-help once"
  else bad "2 ranks: --kokkos-help (rc=$rc)"; fi
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
