#!/usr/bin/env python3
"""campaign.surrogate.training: file, with the weights of another campaign and their provenance.

usage: check_training_file.py MPIRUN_PREFIX MANTISSA DECK TRAINED_RUN_DIR WORKDIR

TRAINED_RUN_DIR is the end-to-end campaign's run directory (it trained online on DECK). The
test runs DECK again at 2 ranks with its weights (training: file) and checks, in report.json
and report.md of the new run, that the training record is the first campaign's (samples,
optimizer steps, initial and final loss exactly as its report.json has them), that the
surrogate's description names that campaign's deck hash, and that the new run's in-sample
rollout with the same weights reproduces the first run's final error to rounding (the weights
and the normalisation come from the file, not from a new training).
"""
import json
import os
import subprocess
import sys


def main():
    mpirun, exe, deck, trained, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    cmd = mpirun.split() + ["2", exe, "run", deck, f"run.output_dir={work}", "run.name=from-file", "--overwrite",
                            "campaign.surrogate.training=file",
                            f"campaign.surrogate.weights={trained}/surrogate-trained",
                            "campaign.surrogate.rollout=[fp32]", "campaign.surrogate.hybrid.enabled=false"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    a = json.load(open(os.path.join(trained, "report.json")))
    b = json.load(open(os.path.join(work, "from-file", "report.json")))
    md = open(os.path.join(work, "from-file", "report.md")).read()
    failures = []
    ta, tb = a["surrogate"]["training"], b["surrogate"]["training"]
    if tb["mode"] != "file":
        failures.append(f"training mode {tb['mode']!r}")
    for k in ("samples", "iterations", "initial_loss", "final_loss"):
        if tb[k] != ta[k]:
            failures.append(f"training.{k}: {tb[k]} from the file, {ta[k]} in the training run")
    h = a["context"]["deck"]["hash"]
    desc = b["surrogate"]["description"]
    if f"deck hash {h}" not in desc or "Weights loaded from" not in desc:
        failures.append(f"the description does not name the training deck's hash {h}: {desc!r}")
    if f"deck hash {h}" not in md:
        failures.append("report.md does not show the training deck's hash")
    # The same weights on the same hand-over state: the same in-sample rollout.
    va = {v["name"]: v for v in a["variants"]}
    vb = {v["name"]: v for v in b["variants"]}
    ea, eb = va["surrogate-fp32"]["accuracy"]["final_rel_l2"], vb["surrogate-fp32"]["accuracy"]["final_rel_l2"]
    print(f"training record from the file: {tb}; final rel. L2 of surrogate-fp32: {eb} (training run {ea})")
    if not abs(ea - eb) <= 1e-6 * abs(ea):
        failures.append(f"surrogate-fp32 final rel. L2 {eb} differs from the training run's {ea}")
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
