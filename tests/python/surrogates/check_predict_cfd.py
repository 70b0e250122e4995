#!/usr/bin/env python3
"""`mantissa predict` on a user's flow state, checked against the PyTorch oracle and the discrete
Helmholtz decomposition.

usage: check_predict_cfd.py MPIRUN_PREFIX MANTISSA DECK WEIGHTS WORKDIR

DECK is inputs/cfd_cavity_surrogate.yaml (walls on every side, the lid at y high), WEIGHTS the
surrogate its campaign trained (the mantissa_cfd_surrogate_np2 run's surrogate-trained.h5). The
test writes a velocity state as a user would (h5py: /u and /v on the MAC faces, index-aligned with
the cells, no mantissa attributes), runs `mantissa predict` at 1 and 2 ranks in fp64 and reads
the prediction back. A prediction is the network's state plus its change (the oracle: oracle.py's
model, written independently of mantissa, fed the weights and normalisation of WEIGHTS), then
projected by the flow's pressure projection. Checked, with numpy's own MAC operators:
  the output is divergence-free: every cell's discrete divergence (the walls' and the lid's
        normal velocity 0) at most 1e-9 of max|u| / h (the pressure solve stops at a relative
        residual of 1e-10);
  the output is the projection of the oracle's prediction: their difference is a discrete
        gradient, so its discrete curl at every interior corner is at most 1e-8 of the largest
        curl of the prediction (rounding of the fp64 network and the solve; a projection of
        another field, a wrong face convention or a missing channel gives O(1));
  the projection did something: the oracle's prediction is not divergence-free (its divergence
        is above 1e-6 of max|u| / h), and the file's divergence_before_max is above its
        divergence_after_max;
  2 ranks against 1 rank: 1e-9 relative (the conjugate gradient's dot products sum per rank
        first, so the projections round differently: docs/architecture.md);
  a prediction fed back as the state (2 predictions, then 1 from that file) equals 3 chained
        predictions to 1e-12: the output is a valid input, steps add up;
  a campaign checkpoint's layout (/fields/state.<i> named by the campaign.state attribute, the
        stage potentials after the velocity) gives the same prediction as /u and /v;
  bad input: --fields with one dataset, and a file without u and v, fail naming the file, the
        channels and --fields, and write nothing.
"""
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import finish, predicted_change, rel  # noqa: E402

torch.set_num_threads(1)

def divergence(u, v, h):
    """Cell divergence on the cavity's MAC grid: u[j, i] on cell (i, j)'s low x face, v[j, i] on
    its low y face; the high faces of the last cells are walls (normal velocity 0, not stored)."""
    ue = np.concatenate([u, np.zeros((u.shape[0], 1))], axis=1)
    ve = np.concatenate([v, np.zeros((1, v.shape[1]))], axis=0)
    return (ue[:, 1:] - ue[:, :-1]) / h + (ve[1:, :] - ve[:-1, :]) / h


def curl(u, v, h):
    """Discrete curl at the interior corners (i h, j h), 1 <= i, j < n: only interior faces."""
    return (v[1:, 1:] - v[1:, :-1]) / h - (u[1:, 1:] - u[:-1, 1:]) / h


def main():
    mpirun, exe, deck, weights, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    failures = []

    def run(ranks, args, expect_ok=True):
        cmd = mpirun.split() + [str(ranks), exe, "predict", deck, f"mesh.process_grid=[{ranks},1]", "--weights",
                                weights, "--precision", "fp64"] + args
        r = subprocess.run(cmd, capture_output=True, text=True)
        if expect_ok and r.returncode != 0:
            sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
        return r

    def read(path):
        with h5py.File(path, "r") as f:
            return np.asarray(f["u"]), np.asarray(f["v"]), dict(f.attrs)

    text = open(deck).read()
    nx, ny = (int(v) for v in re.search(r"\n\s*n:\s*\[(\d+),\s*(\d+)\]", text).groups())
    h = float(re.search(r"\n\s*spacing:\s*\[([0-9.eE+-]+)\]", text).group(1))
    # A vortex in the box, as a user's state might be: u on the x faces (x = i h), v on the y
    # faces (y = j h), zero on the walls.
    j, i = np.mgrid[0:ny, 0:nx].astype(np.float64)
    xu, yu = i * h, (j + 0.5) * h
    xv, yv = (i + 0.5) * h, j * h
    u = 0.3 * np.sin(np.pi * xu) ** 2 * np.sin(2 * np.pi * yu)
    v = -0.3 * np.sin(2 * np.pi * xv) * np.sin(np.pi * yv) ** 2
    state = os.path.join(work, "state.h5")
    with h5py.File(state, "w") as f:
        f["u"] = u
        f["v"] = v
        f.attrs["step"] = 200

    outs = {}
    for ranks in (1, 2):
        out = os.path.join(work, f"pred_np{ranks}.h5")
        r = run(ranks, ["--state", state, "--output", out])
        outs[ranks] = read(out)
        if ranks == 1:
            print(r.stdout.strip().splitlines()[-1][:200])
    uo, vo, attrs = outs[1]
    K = int(attrs["steps_per_prediction"])
    if attrs["format"] != "mantissa-prediction" or int(attrs["step"]) != 200 + K or attrs.get("physics") != "cfd":
        failures.append(f"attributes {attrs}")
    if int(attrs.get("projected", 0)) != 1 or not attrs["divergence_before_max"] > attrs["divergence_after_max"]:
        failures.append(f"projection attributes: {attrs}")

    scale = max(np.abs(uo).max(), np.abs(vo).max()) / h
    d = np.abs(divergence(uo, vo, h)).max()
    print(f"output divergence: max |div| {d:.3g} = {d / scale:.3g} of max|u| / h (bound 1e-9)")
    if not d <= 1e-9 * scale:
        failures.append(f"the output is not divergence-free: max |div| {d:.3g} ({d / scale:.3g} of max|u| / h)")

    change = predicted_change(weights, [u, v])
    ur, vr = u + change[0], v + change[1]
    dr = np.abs(divergence(ur, vr, h)).max()
    print(f"the oracle's prediction before the projection: max |div| {dr / scale:.3g} of max|u| / h")
    if not dr > 1e-6 * scale:
        failures.append(f"the oracle's prediction is already divergence-free ({dr / scale:.3g}): the test shows nothing")
    c = np.abs(curl(ur - uo, vr - vo, h)).max()
    c_ref = np.abs(curl(ur, vr, h)).max()
    print(f"curl of (oracle's prediction - output) at the interior corners: {c / c_ref:.3g} of the prediction's "
          f"largest curl (bound 1e-8); |output - oracle's| / |oracle's| = "
          f"{rel(np.stack([uo, vo]), np.stack([ur, vr])):.3g}")
    if not c <= 1e-8 * c_ref:
        failures.append(f"the output is not the projection of the oracle's prediction: curl of the difference "
                        f"{c / c_ref:.3g} of the prediction's")

    e = rel(np.stack(outs[2][:2]), np.stack(outs[1][:2]))
    print(f"2 ranks vs 1 rank: {e:.3g} (bound 1e-9)")
    if not e <= 1e-9:
        failures.append(f"2 ranks differ from 1 rank by {e:.3g}")

    # Chaining: the output is a state file.
    two, three, chained = (os.path.join(work, n) for n in ("pred_two.h5", "pred_three.h5", "pred_chained.h5"))
    run(2, ["--state", state, "--output", two, "--predictions", "2"])
    run(2, ["--state", two, "--output", chained])
    run(2, ["--state", state, "--output", three, "--predictions", "3"])
    a, b = read(chained), read(three)
    e = rel(np.stack(a[:2]), np.stack(b[:2]))
    print(f"2 + 1 predictions vs 3: {e:.3g}; steps {int(a[2]['step'])} / {int(b[2]['step'])}")
    if not e <= 1e-12 or int(a[2]["step"]) != int(b[2]["step"]):
        failures.append(f"2 + 1 predictions differ from 3 by {e:.3g} (steps {a[2]['step']} / {b[2]['step']})")

    # A campaign checkpoint's layout: the running state's fields by name, the velocity after
    # another field to show that names, not positions, decide.
    ck = os.path.join(work, "ckpt-like.h5")
    with h5py.File(ck, "w") as f:
        f["fields/state.0"] = np.zeros_like(u)
        f["fields/state.1"] = u
        f["fields/state.2"] = v
        f.attrs["campaign.state"] = "phi_stage1\nu\nv"
        f.attrs["step"] = 200
    out = os.path.join(work, "pred_ckpt.h5")
    run(2, ["--state", ck, "--output", out])
    e = rel(np.stack(read(out)[:2]), np.stack(outs[2][:2]))
    print(f"campaign checkpoint layout vs /u, /v: {e:.3g}")
    if not e <= 1e-12:
        failures.append(f"the checkpoint layout's prediction differs by {e:.3g}")

    # Bad input: the message names the file (or the option) and the remedy; nothing is written.
    never = os.path.join(work, "never.h5")
    r = run(1, ["--state", state, "--output", never, "--fields", "u"], expect_ok=False)
    if r.returncode == 0 or "--fields 'u' must name 2 datasets" not in r.stderr or os.path.exists(never):
        failures.append(f"--fields with one dataset: rc {r.returncode}, stderr {r.stderr!r}")
    bad = os.path.join(work, "bad.h5")
    with h5py.File(bad, "w") as f:
        f["p"] = u
    r = run(1, ["--state", bad, "--output", never], expect_ok=False)
    if r.returncode == 0 or bad not in r.stderr or "/u, /v" not in r.stderr or "--fields u,v" not in r.stderr \
            or os.path.exists(never):
        failures.append(f"a state without /u and /v: rc {r.returncode}, stderr {r.stderr!r}")
    else:
        line = next((ln for ln in r.stderr.splitlines() if "mantissa predict" in ln), "")
        print("bad state file refused:", line[:200])

    finish(failures)


if __name__ == "__main__":
    main()
