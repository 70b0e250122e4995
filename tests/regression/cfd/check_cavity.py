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
import sys

from cfd_report import Checks, check_mixed_energy, check_variants, flow_rows, load


def main(run_dir, check):
    rep, md = load(run_dir)
    if not check_variants(rep, check):
        return
    for name, c in flow_rows(rep, check, lambda name: 1e-6):
        check(c["kinetic_energy_final"] > 0.0, f"{name}: the lid put energy into the flow")
    check_mixed_energy(rep, md, check)


if __name__ == "__main__":
    checks = Checks()
    main(sys.argv[1], checks)
    checks.finish("check_cavity")
