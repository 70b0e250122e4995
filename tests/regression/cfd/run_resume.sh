#!/usr/bin/env bash
# The cfd campaign stopped by SIGTERM at a random campaign step (campaign.stop_after_step, the
# path of Slurm's SIGTERM) must exit 75 with a checkpoint, continue with --resume, and end with
# the uninterrupted run's numbers bit for bit (report.json's accuracy of every variant and the
# campaign.cfd section: kinetic energy, enstrophy, divergence, iterations, residuals), at the
# same rank count: the checkpoint carries u, v and both stages' potentials exactly
# (apps/cfd/FlowCheckpoint.hpp, tests/mpi/cfd/tstFlowRestart.cpp for the solver alone).
#   run_resume.sh MANTISSA_CMD DECK OUTPUT_DIR REFERENCE_RUN_DIR [overrides...]
set -euo pipefail
read -r -a cmd <<<"$1"
deck=$2 out=$3 ref=$4
shift 4
total=$(/usr/bin/python3 -c 'import json,sys; print(sum(v["speed"]["steps"] for v in json.load(open(sys.argv[1]))["variants"]))' "$ref/report.json")
step=${STOP_STEP:-$(( (RANDOM % (total - 2)) + 1 ))}  # STOP_STEP=n reproduces a failure
echo "stopping at campaign step $step of $total"
set +e
"${cmd[@]}" run "$deck" "$@" run.output_dir="$out" run.name=resume campaign.stop_after_step="$step" --overwrite
rc=$?
set -e
if [ "$rc" -ne 75 ]; then echo "expected exit 75 (stopped with checkpoint), got $rc"; exit 1; fi
test -f "$out/resume/checkpoints/latest" || { echo "no checkpoint written"; exit 1; }
"${cmd[@]}" run "$deck" "$@" run.output_dir="$out" run.name=resume campaign.stop_after_step="$step" --resume
/usr/bin/python3 - "$out/resume/report.json" "$ref/report.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
va = {v["name"]: v for v in a["variants"]}
vb = {v["name"]: v for v in b["variants"]}
if sorted(va) != sorted(vb):
    bad.append(f"variants {sorted(va)} vs {sorted(vb)}")
for name in vb:
    if name in va and va[name]["accuracy"] != vb[name]["accuracy"]:
        bad.append(f"{name}: accuracy {va[name]['accuracy']} vs uninterrupted {vb[name]['accuracy']}")
    if name in va and va[name]["status"] != vb[name]["status"]:
        bad.append(f"{name}: status {va[name]['status']} vs {vb[name]['status']}")
if a["campaign"]["cfd"] != b["campaign"]["cfd"]:
    bad.append(f"campaign.cfd {a['campaign']['cfd']} vs uninterrupted {b['campaign']['cfd']}")
for m in bad:
    print("FAIL:", m)
if bad:
    sys.exit(1)
print(f"resumed run: the numbers of {len(vb)} variants and campaign.cfd bit for bit as the uninterrupted run")
PY
