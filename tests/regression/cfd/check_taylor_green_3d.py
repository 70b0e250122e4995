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
import sys

from cfd_report import Checks, check_mixed_energy, check_variants, flow_rows, load

VOLUME = (2.0 * math.pi) ** 3
NU = 1.0 / 1600.0


def main(run_dir, check):
    rep, md = load(run_dir)
    if not check_variants(rep, check):
        return
    steps = {v["name"]: v for v in rep["variants"]}["reference"]["speed"]["steps"]
    t = steps * 2.0 * math.pi / 24.0 * 0.5 / (3.0 + 6.0 * NU * 24.0 / (2.0 * math.pi))  # cfl 0.5 x the limit
    e0 = VOLUME / 8.0
    drop_lo = 0.9 * 2.0 * NU * 0.375 * VOLUME * t
    drop_hi = 3.0 * 2.0 * NU * 0.375 * VOLUME * t
    for name, c in flow_rows(rep, check, lambda name: 1e-5 if name == "fp32-storage" else 1e-8):
        drop = e0 - c["kinetic_energy_final"]
        check(drop_lo < drop < drop_hi,
              f"{name}: kinetic energy fell by {drop} from {e0} by t = {t:.3f}, outside ({drop_lo}, {drop_hi})")
        check(c["enstrophy_final"] > 0.375 * VOLUME, f"{name}: enstrophy {c['enstrophy_final']} has not grown")
    check_mixed_energy(rep, md, check)
    check("3D MAC 24x24x24" in md or "3D MAC 24x24x24" in json.dumps(rep), "the report names the 3D grid")


if __name__ == "__main__":
    checks = Checks()
    main(sys.argv[1], checks)
    checks.finish("check_taylor_green_3d")
