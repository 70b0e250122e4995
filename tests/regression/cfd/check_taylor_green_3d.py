#!/usr/bin/python3
"""check_taylor_green_3d.py RUN_DIR: checks the report of inputs/cfd_taylor_green_3d.yaml
(tests/regression/cfd: 40 steps at 2 ranks, t = 1.74).

Every variant finished; the reference against itself is exactly 0; the two mixed-precision
pressure solves (multigrid fp32, progressive bf16, fp64 CG to the same 1e-10 residual) change the
velocity by < 1e-6 relative (issue 14's rule; measured ~1e-15 and ~1e-13 at 100 steps); fp32
storage changes it by more than 0 and by < 1e-4 (fp32 rounding 6e-8 per step; measured 5.5e-7 at
100 steps); the divergence norm is at the solver tolerance with fp64 velocity (< 1e-8; measured
1.8e-11) and at fp32 rounding with fp32 velocity (< 1e-5: 6e-8 x |u| / h x sqrt(volume) = 3.6e-6;
measured 1.2e-6); the kinetic energy starts at (2 pi)^3 / 8 and falls by between 0.9 and 3 times
2 nu zeta_0 t, zeta_0 = 3/8 x volume the initial enstrophy (the rate 2 nu zeta only grows over
t < 9 as the vortices stretch, and the 24^3 Laplacian's zeta_0 is 1.7 % low); the enstrophy has
grown; the mixed solves' energies agree with the reference's to 1e-6; report.md has the columns.
"""
import json
import math
import os
import sys

FAILURES = []
VOLUME = (2.0 * math.pi) ** 3
NU = 1.0 / 1600.0


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
    steps = var["reference"]["speed"]["steps"]
    t = steps * 2.0 * math.pi / 24.0 * 0.5 / (3.0 + 6.0 * NU * 24.0 / (2.0 * math.pi))  # cfl 0.5 x the limit
    e0 = VOLUME / 8.0
    drop_lo = 0.9 * 2.0 * NU * 0.375 * VOLUME * t
    drop_hi = 3.0 * 2.0 * NU * 0.375 * VOLUME * t
    for name, s in want_solver.items():
        c = cfd.get(name)
        check(c is not None, f"campaign.cfd.{name}")
        if c is None:
            continue
        check(c["solver"] == s, f"{name}: solver {c['solver']}, expected {s}")
        for k in ("kinetic_energy_final", "enstrophy_final", "divergence_max", "solver_iterations_per_step"):
            check(isinstance(c.get(k), (int, float)) and math.isfinite(c[k]), f"{name}: {k} = {c.get(k)}")
        div_bound = 1e-5 if name == "fp32-storage" else 1e-8
        check(c["divergence_max"] < div_bound, f"{name}: divergence {c['divergence_max']} above {div_bound}")
        check(c["solver_iterations_per_step"] >= 2, f"{name}: {c['solver_iterations_per_step']} cycles/step")
        check(c["solver_residual_max"] <= 1e-10, f"{name}: solver residual {c['solver_residual_max']}")
        drop = e0 - c["kinetic_energy_final"]
        check(drop_lo < drop < drop_hi,
              f"{name}: kinetic energy fell by {drop} from {e0} by t = {t:.3f}, outside ({drop_lo}, {drop_hi})")
        check(c["enstrophy_final"] > 0.375 * VOLUME, f"{name}: enstrophy {c['enstrophy_final']} has not grown")
    ke = cfd["reference"]["kinetic_energy_final"]
    for name in ("mg-fp32", "mg-bf16"):
        check(abs(cfd[name]["kinetic_energy_final"] - ke) <= 1e-6 * ke, f"{name}: kinetic energy off the reference")
    with open(os.path.join(run_dir, "report.md")) as f:
        md = f.read()
    check("multigrid" in md and "MG cycles/step" in md, "report.md has the cfd columns")
    check("3D MAC 24x24x24" in md or "3D MAC 24x24x24" in json.dumps(rep), "the report names the 3D grid")


if __name__ == "__main__":
    main(sys.argv[1])
    if FAILURES:
        print("check_taylor_green_3d: FAILED\n  " + "\n  ".join(FAILURES))
        sys.exit(1)
    print("check_taylor_green_3d: ok")
