#!/usr/bin/env bash
# Runs `mantissa check` on a bad deck and checks that it fails the way the deck says:
#   # expect: <text>   every such line's text must appear in the output (fixed string)
#   # args: <k=v> ...  command-line overrides passed after the deck
# usage: run_bad_deck.sh MANTISSA DECK|@binary WORKDIR [NP MPIEXEC...]
# @binary writes a binary file (the start of an ELF executable) and checks the refusal.
set -uo pipefail
exe="$1" deck="$2" work="$3"
shift 3
np="${1:-}"
[ -n "$np" ] && shift
mkdir -p "$work"
if [ "$deck" = "@binary" ]; then
  deck="$work/binary_garbage.yaml"
  printf '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00' > "$deck"
  expects=("binary_garbage.yaml:1:1: not a YAML text file" "0x7f" "is a control character")
  args=()
else
  mapfile -t expects < <(sed -n 's/^# expect: //p' "$deck")
  read -r -a args <<< "$(sed -n 's/^# args: //p' "$deck" | tr '\n' ' ')"
fi
if [ ${#expects[@]} -eq 0 ]; then
  echo "FAIL: $deck has no '# expect:' lines"
  exit 1
fi
if [ -n "$np" ]; then
  out="$("$@" -n "$np" "$exe" check "$deck" "${args[@]}" 2>&1)"
else
  out="$("$exe" check "$deck" "${args[@]}" 2>&1)"
fi
rc=$?
echo "$out"
status=0
if [ $rc -eq 0 ]; then
  echo "FAIL: mantissa check exited 0 on a bad deck"
  status=1
fi
for e in "${expects[@]}"; do
  if ! grep -qF -- "$e" <<< "$out"; then
    echo "FAIL: the output lacks: $e"
    status=1
  fi
done
# One message however many ranks: the error is reported once.
n_err=$(grep -c "^mantissa: error:" <<< "$out")
if [ "$n_err" -ne 1 ]; then
  echo "FAIL: expected exactly one 'mantissa: error:' line, got $n_err"
  status=1
fi
[ $status -eq 0 ] && echo "PASS"
exit $status
