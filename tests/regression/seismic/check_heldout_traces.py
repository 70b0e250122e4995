#!/usr/bin/python3
"""check_heldout_traces.py RUN_DIR: the receivers of a rollout on a held-out shot.

RUN_DIR is a campaign of two_shots.yaml with the surrogate trained on shot 0 and rolled out on
shot 1 (campaign.surrogate.heldout_experiments: [1], see CMakeLists.txt beside this file). The
held-out rollout records its receivers as shot 1's gather, and its receiver misfit is against
the reference's shot 1:

- gathers.h5 holds the rollout's gather as shot_0001 only, with shot 1's sources;
- up to the hand-over the solver (in the reference's precision) ran shot 1, so those samples
  equal the reference's shot 1 samples at the same steps bit for bit, and differ from shot 0's;
- report.json's receiver_rel_l2 of the rollout is the relative L2 misfit of the rollout's gather
  against the reference's shot 1 gather at the same steps, recomputed here from gathers.h5 (to
  1e-10), and not the misfit against shot 0's.
"""
import json
import os
import sys

import h5py
import numpy as np


def main():
    run = sys.argv[1]
    failures = []

    def check(cond, msg):
        if not cond:
            failures.append(msg)

    with open(os.path.join(run, "report.json")) as f:
        rep = json.load(f)
    held = [v for v in rep["variants"] if (v.get("rollout") or {}).get("experiment") == 1]
    check(len(held) >= 1, "a rollout with rollout.experiment = 1 in report.json")
    with h5py.File(os.path.join(run, "gathers.h5"), "r") as g:
        ref = g["variants/reference"]
        kr = int(ref.attrs["record_every"])
        ref0, ref1 = ref["gathers/shot_0000"][()], ref["gathers/shot_0001"][()]
        for v in held:
            name = v["name"]
            check(v["rollout"]["window"] == "held-out shot 1", f"{name}: window {v['rollout']['window']!r}")
            gv = g[f"variants/{name}"]
            check(sorted(gv["gathers"]) == ["shot_0001"], f"{name}: gathers {sorted(gv['gathers'])}")
            ds = gv["gathers/shot_0001"]
            check(ds.attrs["shot"] == 1, f"{name}: shot attribute {ds.attrs['shot']}")
            check(np.array_equal(ds.attrs["source_positions"], ref["gathers/shot_0001"].attrs["source_positions"]),
                  f"{name}: not shot 1's sources")
            k = int(gv.attrs["record_every"])
            check(k % kr == 0, f"{name}: record_every {k} not a multiple of the reference's {kr}")
            m = k // kr
            a = ds[()]
            ns = a.shape[1]
            b1, b0 = ref1[:, ::m][:, :ns], ref0[:, ::m][:, :ns]
            check(b1.shape == a.shape, f"{name}: {a.shape} samples against the reference's {b1.shape}")
            if b1.shape != a.shape:
                continue
            h = int(v["rollout"]["handover_step"])
            lead = np.arange(ns) * k <= h
            check(lead.sum() >= 2, f"{name}: {lead.sum()} samples before the hand-over at step {h}")
            check(np.array_equal(a[:, lead], b1[:, lead]), f"{name}: lead-in samples differ from shot 1's reference")
            check(not np.array_equal(a[:, lead], b0[:, lead]), f"{name}: lead-in samples equal shot 0's")
            mis1 = float(np.sqrt(np.sum((a - b1) ** 2) / np.sum(b1 ** 2)))
            mis0 = float(np.sqrt(np.sum((a - b0) ** 2) / np.sum(b0 ** 2)))
            got = v["accuracy"]["receiver_rel_l2"]
            check(got is not None and abs(got - mis1) <= 1e-10 * mis1,
                  f"{name}: receiver_rel_l2 {got} against {mis1} recomputed from shot 1's gathers")
            check(abs(mis0 - mis1) > 1e-6 * mis1, f"{name}: the misfits against shot 0 and 1 agree ({mis0})")
    if failures:
        for f in failures:
            print("FAIL:", f)
        return 1
    print(f"{run}: held-out traces ok ({len(held)} rollout(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
