#!/usr/bin/env bash
# `mantissa check` refuses what `mantissa run` would refuse, before anything is allocated, with
# the same message; `run` refuses it before it creates the run directory. Through the real
# executable: a process grid too fine for the stencil's ghost width or an image boundary, a
# velocity model file that is missing, of the wrong dimension, with a NaN, a spacing of 0, a NaN
# origin or velocities below the deck's bound; a run name outside run.output_dir; a run.end_time
# past the step counter; experiment lists of the surrogate that name a shot the deck does not
# have or one both trained on and held out; surrogate weights (training: file) that are
# missing, of another K, with a flipped bit (checksum) or a NaN.
# usage: check_refuses.sh MANTISSA SOURCE_DIR WORK_DIR TWIN_RUN_DIR [MPIEXEC [MPIEXEC_FLAGS...]]
# TWIN_RUN_DIR: the campaign e2e test's run directory (its surrogate-trained.h5 is the weights).
set -uo pipefail
exe="$1" src="$2" work="$3" twin_run="$4"
shift 4
mpiexec=("$@")
py=/usr/bin/python3
deck="$src/tests/regression/campaign/campaign_twin.yaml"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
pass=0 fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL: $1"
  echo "  --- stdout:"; sed 's/^/  | /' out.txt | head -20
  echo "  --- stderr:"; sed 's/^/  | /' err.txt | head -20
  fail=$((fail + 1))
}
run() { "$@" >out.txt 2>err.txt; rc=$?; }
# refused NAME PATTERN ARGS...: `check` exits 1 naming PATTERN on stderr.
refused() {
  local name="$1" pattern="$2"
  shift 2
  run "$exe" check "$deck" "$@"
  if [ "$rc" = 1 ] && grep -q -- "$pattern" err.txt && ! grep -q ': ok$' out.txt; then
    ok "check refuses: $name"
  else bad "check refuses: $name (rc=$rc, expected '$pattern')"; fi
}
# run_refused NAME PATTERN NP ARGS...: `run` at NP ranks exits 1 with PATTERN, no run directory.
run_refused() {
  local name="$1" pattern="$2" np="$3"
  shift 3
  rm -rf out-run
  run "${mpiexec[@]}" -n "$np" "$exe" run "$deck" run.output_dir="$work/out-run" run.name=r "$@"
  if [ "$rc" = 1 ] && grep -q -- "$pattern" err.txt && [ ! -e out-run/r ]; then
    ok "run refuses before the run directory: $name"
  else bad "run refuses: $name (rc=$rc, expected '$pattern', run dir: $(ls out-run 2>/dev/null))"; fi
}

# The ghost width: order 8 needs 4 points per rank and axis; 96 / 32 = 3.
refused "process grid too fine for the ghost width" "fewer than the ghost width 4" mesh.process_grid=[32,1]
# An image boundary (the free surface at y_low, a rigid y_high) needs order / 2 + 1 = 5 points:
# 9 points on 2 ranks leave 4 (spacing 20 m along y keeps the source inside).
rigid=(seismic.boundaries.y_high=rigid mesh.n=[96,9] mesh.spacing=[10.0,20.0] campaign.surrogate.enabled=false)
refused "process grid too fine for an image boundary" "image boundary seismic.boundaries.y_low" "${rigid[@]}" \
  mesh.process_grid=[1,2]
run_refused "process grid too fine for an image boundary" "image boundary seismic.boundaries.y_low" 2 "${rigid[@]}" \
  mesh.process_grid=[1,2]
# The surrogate's experiment lists (the twin has one shot): a shot it does not have, a shot both
# trained on and held out (Campaign's own refusals, made by check through workflow::validate_config).
refused "a held-out shot the deck does not have" "shot 1 does not exist" campaign.surrogate.heldout_experiments=[1]
run_refused "a held-out shot the deck does not have" "shot 1 does not exist" 2 campaign.surrogate.heldout_experiments=[1]
refused "a shot both trained on and held out" "is also in campaign.surrogate.train_experiments" \
  campaign.surrogate.heldout_experiments=[0]
run_refused "a shot both trained on and held out" "is also in campaign.surrogate.train_experiments" 2 \
  campaign.surrogate.heldout_experiments=[0]
# The same deck at a process grid that fits passes the same check.
run "$exe" check "$deck" "${rigid[@]}" mesh.process_grid=[2,1]
if [ "$rc" = 0 ] && grep -q ': ok$' out.txt; then ok "check passes the same deck split along x instead"
else bad "check of the rigid deck at [2,1] (rc=$rc)"; fi

# A run name that leads out of run.output_dir; a run.end_time whose steps (at the physics' own
# time step: seismic CFL, the flow's dt) overflow the step counter, for both physics.
refused "run name outside run.output_dir" "leads out of run.output_dir" run.name=../../elsewhere
run_refused "run name outside run.output_dir" "leads out of run.output_dir" 2 run.name=../r
refused "run.end_time past the step counter (seismic)" "more than the 2147483647 steps a run can count" \
  run.end_time=1e30
run "$exe" check "$src/inputs/cfd_cavity.yaml" run.end_time=1e30
if [ "$rc" = 1 ] && grep -q "more than the 2147483647 steps a run can count" err.txt; then
  ok "check refuses: run.end_time past the step counter (cfd)"
else bad "check of cfd_cavity.yaml with run.end_time=1e30 (rc=$rc)"; fi
# What the summary says of checkpoints: the defaults (every phase end, every 600 s) and the last
# word the job scripts read (checkpoint.dir inside the run directory).
run "$exe" check "$deck"
if [ "$rc" = 0 ] && grep -q '^  checkpoint every 600 s of stepping, at every phase end, when stopped; keep 2, in .*/checkpoints$' out.txt
then ok "check states the checkpoint defaults"
else bad "check's checkpoint line (rc=$rc): $(grep '^  checkpoint' out.txt)"; fi

# Velocity model files (h5py): (y, x) = (64, 96) on the twin's grid, 1500 m/s.
"$py" - <<'PYEOF' || { echo "FAIL: could not write the velocity files"; exit 1; }
import h5py, numpy as np
def write(name, values=None, origin=(0.0, 0.0, 0.0), spacing=(10.0, 10.0, 10.0), shape=(64, 96)):
    with h5py.File(name, "w") as f:
        v = np.full(shape, 1500.0) if values is None else values
        d = f.create_dataset("velocity", data=v)
        d.attrs["origin"] = np.array(origin)
        d.attrs["spacing"] = np.array(spacing)
write("good.h5")
v = np.full((64, 96), 1500.0); v[10, 20] = np.nan; write("nan.h5", v)
write("spacing0.h5", spacing=(10.0, 0.0, 10.0))
write("origin_nan.h5", origin=(np.nan, 0.0, 0.0))
v = np.full((64, 96), 1500.0); v[3, 4] = 1e-178; write("tiny.h5", v)
write("three_d.h5", shape=(4, 64, 96))
PYEOF
vfile() { echo seismic.velocity.model=file "seismic.velocity.file=$work/$1"; }
run "$exe" check "$deck" $(vfile good.h5)
if [ "$rc" = 0 ] && grep -q ': ok$' out.txt; then ok "check accepts a good velocity file"
else bad "check of a good velocity file (rc=$rc)"; fi
refused "missing velocity file" "cannot open '$work/missing.h5': it does not exist" $(vfile missing.h5)
refused "velocity file of another dimension" "has 3 dimensions but the grid has 2" $(vfile three_d.h5)
refused "velocity file with a NaN" "holds nan m/s at (x index 20, y index 10)" $(vfile nan.h5)
refused "velocity file with spacing 0" "attribute 'spacing' of dataset 'velocity' is 0 along y" $(vfile spacing0.h5)
refused "velocity file with a NaN origin" "attribute 'origin' of dataset 'velocity' is nan along x" $(vfile origin_nan.h5)
refused "velocity file below the deck's bound" "holds 1e-178 m/s at (x index 4, y index 3)" $(vfile tiny.h5)
run_refused "velocity file with a NaN" "holds nan m/s" 2 $(vfile nan.h5)

# Surrogate weights (training: file): the e2e run's trained surrogate, and damaged copies.
weights="$twin_run/surrogate-trained.h5"
if [ ! -f "$weights" ]; then
  echo "FAIL: $weights is missing (the fixture mantissa_campaign_e2e_np2 did not run)"
  fail=$((fail + 1))
else
  cp "$weights" w-good.h5
  "$py" - <<'PYEOF' || { echo "FAIL: could not write the weights copies"; exit 1; }
import shutil, h5py, numpy as np
for name in ("w-flip.h5", "w-nan.h5", "w-k.h5"):
    shutil.copy("w-good.h5", name)
with h5py.File("w-flip.h5", "r+") as f:
    d = f["surrogate/weights/blocks.0.fc1.weight"]
    a = d[...]
    b = a.view(np.uint32).copy(); b.flat[7] ^= np.uint32(1 << 3)  # one low mantissa bit
    d[...] = b.view(np.float32)
with h5py.File("w-nan.h5", "r+") as f:
    d = f["surrogate/weights/blocks.0.fc2.bias"]
    a = d[...]; a.flat[0] = np.nan; d[...] = a
with h5py.File("w-k.h5", "r+") as f:
    f["surrogate"].attrs["steps_per_prediction"] = np.int64(3)
PYEOF
  wfile() { echo campaign.surrogate.training=file "campaign.surrogate.weights=$work/$1"; }
  run "$exe" check "$deck" $(wfile w-good)
  if [ "$rc" = 0 ] && grep -q ': ok$' out.txt; then ok "check accepts the trained weights"
  else bad "check of the trained weights (rc=$rc)"; fi
  refused "missing weights" "cannot open '$work/w-missing.h5'" $(wfile w-missing)
  refused "weights with a flipped bit" "blocks.0.fc1.weight' does not match the checksum" $(wfile w-flip)
  refused "weights with a NaN" "blocks.0.fc2.bias' holds nan" $(wfile w-nan)
  refused "weights of another K" "surrogate.steps_per_prediction is 3 in the file but 2 in the deck" $(wfile w-k)
  run_refused "weights with a flipped bit" "does not match the checksum" 2 $(wfile w-flip)
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
