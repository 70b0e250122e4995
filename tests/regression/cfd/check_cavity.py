#!/usr/bin/python3
"""check_cavity.py RUN_DIR: checks the report of inputs/cfd_cavity.yaml (tests/regression/cfd).

Every variant finished; the reference against itself is exactly 0; the two mixed-precision
pressure solves (multigrid fp32, progressive bf16, iterative refinement to the same fp64
residual) change the velocity by < 1e-6 relative (issue 14's rule; measured ~4e-13: the solves
agree to their 1e-10 tolerance); fp32 storage changes it by more than 0 (it rounds every
update) and by < 1e-4 (fp32 rounding 6e-8 per step, measured 4.8e-8 after 300 steps); the
divergence norm stays at the solver-tolerance level (< 1e-6, the velocity is O(1) on 32^2);
the solver iterations per step are finite and positive; the diagnostics are in report.json.
"""
import json
import math
import os
import sys

FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)


def main(run_dir):
    with open(os.path.join(run_dir, "report.json")) as f:
        rep = json.load(f)
    check(rep["campaign"]["physics"] == "cfd", "physics cfd")
    var = {v["name"]: v for v in rep["variants"]}
    for name in ("reference", "fp32-storage", "mg-fp32", "mg-bf16"):
        check(name in var, f"variant {name} in the report")
    if FAILURES:
        return
    for v in var.values():
        check(v["status"] == "ok", f"{v['name']}: status {v['status']}")
    check(var["reference"]["accuracy"]["final_rel_l2"] == 0.0, "reference against itself is 0")
    for name in ("mg-fp32", "mg-bf16"):
        e = var[name]["accuracy"]["final_rel_l2"]
        check(e is not None and 0.0 <= e < 1e-6, f"{name}: final rel L2 {e} >= 1e-6")
    e32 = var["fp32-storage"]["accuracy"]["final_rel_l2"]
    check(e32 is not None and 0.0 < e32 < 1e-4, f"fp32-storage: final rel L2 {e32} outside (0, 1e-4)")
    cfd = rep["campaign"].get("cfd", {})
    want_solver = {"reference": "fp64", "fp32-storage": "fp32", "mg-fp32": "fp32", "mg-bf16": "bf16"}
    for name, s in want_solver.items():
        c = cfd.get(name)
        check(c is not None, f"campaign.cfd.{name}")
        if c is None:
            continue
        check(c["solver"] == s, f"{name}: solver {c['solver']}, expected {s}")
        for k in ("kinetic_energy_final", "enstrophy_final", "divergence_max", "solver_iterations_per_step"):
            check(isinstance(c.get(k), (int, float)) and math.isfinite(c[k]), f"{name}: {k} = {c.get(k)}")
        check(c["kinetic_energy_final"] > 0.0, f"{name}: the lid put energy into the flow")
        check(c["divergence_max"] < 1e-6, f"{name}: divergence {c['divergence_max']} above 1e-6")
        check(c["solver_iterations_per_step"] >= 2, f"{name}: {c['solver_iterations_per_step']} cycles/step")
        check(c["solver_residual_max"] <= 1e-10, f"{name}: solver residual {c['solver_residual_max']}")
    # the kinetic energies agree with the reference's as the fields do
    ke = cfd["reference"]["kinetic_energy_final"]
    for name in ("mg-fp32", "mg-bf16"):
        check(abs(cfd[name]["kinetic_energy_final"] - ke) <= 1e-6 * ke, f"{name}: kinetic energy off the reference")
    with open(os.path.join(run_dir, "report.md")) as f:
        md = f.read()
    check("multigrid" in md and "MG cycles/step" in md, "report.md has the cfd columns")


if __name__ == "__main__":
    main(sys.argv[1])
    if FAILURES:
        print("check_cavity: FAILED\n  " + "\n  ".join(FAILURES))
        sys.exit(1)
    print("check_cavity: ok")
