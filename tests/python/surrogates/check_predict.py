#!/usr/bin/env python3
"""`mantissa predict` on a user's state, checked against the PyTorch oracle.

usage: check_predict.py MPIRUN_PREFIX MANTISSA DECK WEIGHTS WORKDIR

WEIGHTS is a campaign's surrogate-trained.h5 (the end-to-end run's, trained on DECK). The test
writes a state file as a user would (h5py: /p and /p_old, no mantissa attributes), runs
`mantissa predict` at 1 and 2 ranks, reads the prediction and its XDMF sidecar back, and
compares the predicted change with the oracle (oracle.py's model, written independently of
mantissa, fed the weights and normalisation of WEIGHTS and the static input the output file
records):
  fp64: 1e-10 and fp32: 1e-5 relative (oracle.py's bounds: both sides round at their unit
        roundoff through a few dozen dependent operations);
  2 ranks against 1 rank: 1e-10 in fp64 (the domain-decomposed inference gathers a halo of
        patches, so it equals the one-rank result up to the order of sums);
  a prediction fed back as the state (2 predictions, then 1 from that file) equals 3 chained
        predictions to 1e-10 in fp64: the output is a valid input, steps add up;
  a state file without the datasets fails with a message naming the file and --fields.
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import finish, predicted_change, rel  # noqa: E402

torch.set_num_threads(1)

def oracle_change(weights, p, p_old, velocity):
    """The change of (p, p_old) over one prediction, in fp64 PyTorch."""
    return predicted_change(weights, [p, p_old], [velocity])


def main():
    mpirun, exe, deck, weights, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    state = os.path.join(work, "state.h5")
    failures = []

    def run(ranks, args, expect_ok=True):
        cmd = mpirun.split() + [str(ranks), exe, "predict", deck, f"mesh.process_grid=[{ranks},1]", "--weights",
                                weights] + args
        r = subprocess.run(cmd, capture_output=True, text=True)
        if expect_ok and r.returncode != 0:
            sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
        return r

    # The grid: mesh.n of the deck (n: [nx, ny]).
    text = open(deck).read()
    nx, ny = (int(v) for v in re.search(r"\n\s*n:\s*\[(\d+),\s*(\d+)\]", text).groups())
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    # A pulse moving to the right, as a user's state might be (two time levels of a wave).
    p = np.exp(-((x - 0.4 * nx) ** 2 + (y - 0.3 * ny) ** 2) / 20.0)
    p_old = np.exp(-((x - 0.4 * nx - 0.3) ** 2 + (y - 0.3 * ny) ** 2) / 20.0)
    with h5py.File(state, "w") as f:
        f["p"] = p
        f["p_old"] = p_old
        f.attrs["step"] = 100

    outs = {}
    for ranks, prec in ((1, "fp64"), (2, "fp64"), (1, "fp32")):
        out = os.path.join(work, f"pred_np{ranks}_{prec}.h5")
        run(ranks, ["--state", state, "--output", out, "--precision", prec])
        with h5py.File(out, "r") as f:
            outs[(ranks, prec)] = {k: np.asarray(f[k]) for k in ("p", "p_old", "static/velocity")}
            attrs = dict(f.attrs)
        if attrs["format"] != "mantissa-prediction" or int(attrs["step"]) != 100 + int(attrs["steps_per_prediction"]):
            failures.append(f"{out}: attributes {attrs}")
        # The sidecar names the file beside it and the grid's shape.
        xmf = ET.parse(out[:-3] + ".xmf").getroot()
        items = [d.text.strip() for d in xmf.iter("DataItem") if d.get("Format") == "HDF"]
        want = [f"{os.path.basename(out)}:/p", f"{os.path.basename(out)}:/p_old",
                f"{os.path.basename(out)}:/static/velocity"]
        if items != want:
            failures.append(f"{out[:-3]}.xmf refers to {items}, expected {want}")
        dims = {d.get("Dimensions") for d in xmf.iter("DataItem") if d.get("Format") == "HDF"}
        if dims != {f"{ny} {nx}"}:
            failures.append(f"{out[:-3]}.xmf dimensions {dims}, expected {ny} {nx}")

    vel = outs[(1, "fp64")]["static/velocity"]
    if not (set(np.unique(vel)) <= {1500.0, 2200.0} and vel[0, 0] == 1500.0 and vel[-1, 0] == 2200.0):
        failures.append(f"static/velocity is not the deck's two layers: {np.unique(vel)}")
    ref = oracle_change(weights, p, p_old, vel)
    for (ranks, prec), bound in (((1, "fp64"), 1e-10), ((2, "fp64"), 1e-10), ((1, "fp32"), 1e-5)):
        o = outs[(ranks, prec)]
        change = np.stack([o["p"] - p, o["p_old"] - p_old])
        e = rel(change, ref)
        print(f"{ranks} rank(s) {prec}: predicted change vs the PyTorch oracle: rel. {e:.3g} (bound {bound:g}); "
              f"|change| / |p| = {np.linalg.norm(change[0]) / np.linalg.norm(p):.3g}")
        if not e <= bound:
            failures.append(f"{ranks} rank(s) {prec}: rel. error {e:.3g} against the oracle > {bound:g}")
    e = rel(outs[(2, "fp64")]["p"], outs[(1, "fp64")]["p"])
    print(f"2 ranks vs 1 rank (fp64): {e:.3g}")
    if not e <= 1e-10:
        failures.append(f"2 ranks differ from 1 rank by {e:.3g}")

    # Chaining: the output is a state file.
    two = os.path.join(work, "pred_two.h5")
    three = os.path.join(work, "pred_three.h5")
    chained = os.path.join(work, "pred_chained.h5")
    run(1, ["--state", state, "--output", two, "--predictions", "2", "--precision", "fp64"])
    run(2, ["--state", two, "--output", chained, "--precision", "fp64"])
    run(2, ["--state", state, "--output", three, "--predictions", "3", "--precision", "fp64"])
    with h5py.File(chained, "r") as a, h5py.File(three, "r") as b:
        e = rel(np.asarray(a["p"]), np.asarray(b["p"]))
        print(f"2 + 1 predictions vs 3: {e:.3g}; steps {int(a.attrs['step'])} / {int(b.attrs['step'])}")
        if not e <= 1e-10 or int(a.attrs["step"]) != int(b.attrs["step"]):
            failures.append(f"2 + 1 predictions differ from 3 by {e:.3g} (steps {a.attrs['step']} / {b.attrs['step']})")

    # A campaign checkpoint's layout (/fields/state.0, /fields/state.1 and a root attribute step),
    # here with fp32 levels: the file's values are the state.
    ck = os.path.join(work, "ckpt-like.h5")
    with h5py.File(ck, "w") as f:
        f["fields/state.0"] = p.astype(np.float32)
        f["fields/state.1"] = p_old.astype(np.float32)
        f.attrs["step"] = 40
    out = os.path.join(work, "pred_ckpt.h5")
    run(2, ["--state", ck, "--output", out, "--precision", "fp64"])
    p32, po32 = p.astype(np.float32).astype(np.float64), p_old.astype(np.float32).astype(np.float64)
    with h5py.File(out, "r") as f:
        change = np.stack([np.asarray(f["p"]) - p32, np.asarray(f["p_old"]) - po32])
        step = int(f.attrs["step"])
    e = rel(change, oracle_change(weights, p32, po32, vel))
    print(f"checkpoint layout, fp32 levels: rel. {e:.3g} against the oracle; step {step}")
    if not e <= 1e-10 or step != 40 + int(attrs["steps_per_prediction"]):
        failures.append(f"checkpoint layout: rel. error {e:.3g}, step {step}")

    # Bad input: the message names the file and the remedy; nothing is written.
    bad = os.path.join(work, "bad.h5")
    with h5py.File(bad, "w") as f:
        f["q"] = p
    out = os.path.join(work, "never.h5")
    r = run(1, ["--state", bad, "--output", out], expect_ok=False)
    if r.returncode == 0 or bad not in r.stderr or "--fields" not in r.stderr or os.path.exists(out):
        failures.append(f"a state without /p and /p_old: rc {r.returncode}, stderr {r.stderr!r}")
    else:
        print("bad state file refused:", r.stderr.strip().splitlines()[0][:160])

    finish(failures)


if __name__ == "__main__":
    main()
