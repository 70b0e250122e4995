#!/usr/bin/env bash
# The campaign twin's physics phases (no surrogate: its training is data parallel, its sums are
# not part of this claim) through `mantissa run` at 1, 2, 3 and 4 ranks: the accuracy numbers of
# report.h5 and report.json agree bit for bit (compare_rank_counts.py).
# usage: run_rank_counts.sh MPIEXEC_AND_FLAGS MANTISSA DECK OUT_DIR
set -euo pipefail
mpi="$1" exe="$2" deck="$3" out="$4"
mkdir -p "$out"
dirs=()
for np in 1 2 3 4; do
  echo "== $np ranks"
  $mpi -n "$np" "$exe" run "$deck" run.output_dir="$out" run.name="ranks-$np" mesh.process_grid=[0,0] \
    campaign.surrogate.enabled=false --overwrite >"$out/ranks-$np.log" 2>&1 || {
    echo "FAIL: the run at $np ranks exited $?"; tail -20 "$out/ranks-$np.log"; exit 1; }
  dirs+=("$out/ranks-$np")
done
/usr/bin/python3 "$(dirname "$0")/compare_rank_counts.py" "${dirs[@]}"
