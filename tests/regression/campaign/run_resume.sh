#!/usr/bin/env bash
# Resume test: the campaign stops itself with SIGTERM at a random campaign step (the hidden deck
# key campaign.stop_after_step raises the signal on every rank, the same path as Slurm's
# SIGTERM), must exit 75 with a checkpoint, continue with --resume, and end with the same
# accuracy numbers as the uninterrupted run ($4).
#   run_resume.sh MANTISSA_CMD DECK OUTPUT_DIR REFERENCE_RUN_DIR
set -euo pipefail
read -r -a cmd <<<"$1"
deck=$2 out=$3 ref=$4
# Campaign steps of the uninterrupted run: every phase's physics(-equivalent) steps.
total=$(/usr/bin/python3 -c 'import json,sys; print(sum(v["speed"]["steps"] for v in json.load(open(sys.argv[1]))["variants"]))' "$ref/report.json")
step=${STOP_STEP:-$(( (RANDOM % (total - 2)) + 1 ))}  # STOP_STEP=n reproduces a failure
echo "stopping at campaign step $step of $total"
set +e
"${cmd[@]}" run "$deck" run.output_dir="$out" run.name=resume campaign.stop_after_step="$step" --overwrite
rc=$?
set -e
if [ "$rc" -ne 75 ]; then echo "expected exit 75 (stopped with checkpoint), got $rc"; exit 1; fi
test -f "$out/resume/checkpoints/latest" || { echo "no checkpoint written"; exit 1; }
test ! -f "$out/resume/report.json" || { echo "a stopped run must not write report.json"; exit 1; }
# A second start without --resume must refuse the existing run directory.
if "${cmd[@]}" run "$deck" run.output_dir="$out" run.name=resume campaign.stop_after_step="$step" 2>/dev/null; then
  echo "a second run into an existing run directory was not refused"; exit 1
fi
"${cmd[@]}" run "$deck" run.output_dir="$out" run.name=resume campaign.stop_after_step="$step" --resume
/usr/bin/python3 "$(dirname "$0")/check_report.py" "$out/resume" --against "$ref"
