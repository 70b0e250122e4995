"""What every report of a cfd precision campaign holds: imported by check_cavity.py and
check_taylor_green_3d.py, which add what their own flow must show (the tolerances and their
reasons are in those scripts' docstrings).

The decks run four variants: the fp64 reference, fp32 storage, and two mixed-precision pressure
solves (multigrid fp32, progressive bf16) to the same fp64 residual.
"""
import json
import math
import os

# variant -> the precision its pressure solve reports
SOLVER = {"reference": "fp64", "fp32-storage": "fp32", "mg-fp32": "fp32", "mg-bf16": "bf16"}
MIXED = ("mg-fp32", "mg-bf16")


class Checks:
    """Collects failed checks: check(cond, msg)."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, msg):
        if not cond:
            self.failures.append(msg)

    def finish(self, script):
        if self.failures:
            print(f"{script}: FAILED\n  " + "\n  ".join(self.failures))
            raise SystemExit(1)
        print(f"{script}: ok")


def load(run_dir):
    """report.json (parsed) and report.md (text) of a run directory."""
    with open(os.path.join(run_dir, "report.json")) as f:
        rep = json.load(f)
    with open(os.path.join(run_dir, "report.md")) as f:
        md = f.read()
    return rep, md


def check_variants(rep, check):
    """The variants' accuracy: every one finished, the reference is 0 against itself, the mixed
    solves within 1e-6 (issue 14's rule), fp32 storage in (0, 1e-4). False if a variant is
    missing (nothing else can be checked then)."""
    check(rep["campaign"]["physics"] == "cfd", "physics cfd")
    var = {v["name"]: v for v in rep["variants"]}
    missing = [name for name in SOLVER if name not in var]
    for name in missing:
        check(False, f"variant {name} in the report")
    if missing:
        return False
    for v in var.values():
        check(v["status"] == "ok", f"{v['name']}: status {v['status']}")
    check(var["reference"]["accuracy"]["final_rel_l2"] == 0.0, "reference against itself is 0")
    for name in MIXED:
        e = var[name]["accuracy"]["final_rel_l2"]
        check(e is not None and 0.0 <= e < 1e-6, f"{name}: final rel L2 {e} >= 1e-6")
    e32 = var["fp32-storage"]["accuracy"]["final_rel_l2"]
    check(e32 is not None and 0.0 < e32 < 1e-4, f"fp32-storage: final rel L2 {e32} outside (0, 1e-4)")
    return True


def flow_rows(rep, check, div_bound):
    """Checks each variant's campaign.cfd row (solver precision, finite diagnostics, divergence
    below div_bound(name), at least 2 cycles per step, residual <= 1e-10) and yields
    (name, row) for the flow's own checks."""
    cfd = rep["campaign"].get("cfd", {})
    for name, solver in SOLVER.items():
        c = cfd.get(name)
        check(c is not None, f"campaign.cfd.{name}")
        if c is None:
            continue
        check(c["solver"] == solver, f"{name}: solver {c['solver']}, expected {solver}")
        for k in ("kinetic_energy_final", "enstrophy_final", "divergence_max", "solver_iterations_per_step"):
            check(isinstance(c.get(k), (int, float)) and math.isfinite(c[k]), f"{name}: {k} = {c.get(k)}")
        bound = div_bound(name)
        check(c["divergence_max"] < bound, f"{name}: divergence {c['divergence_max']} above {bound}")
        check(c["solver_iterations_per_step"] >= 2, f"{name}: {c['solver_iterations_per_step']} cycles/step")
        check(c["solver_residual_max"] <= 1e-10, f"{name}: solver residual {c['solver_residual_max']}")
        yield name, c


def check_mixed_energy(rep, md, check):
    """The mixed solves' kinetic energies agree with the reference's to 1e-6, as the fields do,
    and report.md has the cfd columns."""
    cfd = rep["campaign"]["cfd"]
    ke = cfd["reference"]["kinetic_energy_final"]
    for name in MIXED:
        check(abs(cfd[name]["kinetic_energy_final"] - ke) <= 1e-6 * ke, f"{name}: kinetic energy off the reference")
    check("multigrid" in md and "MG cycles/step" in md, "report.md has the cfd columns")
