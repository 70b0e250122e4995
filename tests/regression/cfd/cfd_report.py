"""What every report of a cfd precision campaign holds: imported by check_cavity.py and
check_taylor_green_3d.py, which add what their own flow must show (the tolerances and their
reasons are in those scripts' docstrings).

check_surrogate.py (inputs/cfd_cavity_surrogate.yaml and inputs/cfd_taylor_green_3d_surrogate.yaml)
uses Checks, load and check_surrogate only.

The precision decks run four variants: the fp64 reference, fp32 storage, and two mixed-precision
pressure solves (multigrid fp32, progressive bf16) to the same fp64 residual.
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


# The rollouts of inputs/cfd_cavity_surrogate.yaml: variant -> (window, predictions from the
# hand-over: (end - start) / K with K = 4; None: the hybrid, whose count the report gives).
ROLLOUTS = {
    "surrogate-fp64": ("in-sample", 85),
    "surrogate-fp32": ("in-sample", 85),
    "surrogate-fp64-heldout": ("held-out", 40),
    "surrogate-fp32-heldout": ("held-out", 40),
    "hybrid-fp32": ("whole run", None),
}


def check_surrogate(rep, md, check, samples=85, heldout=(440, 600), rollouts=None):
    """The surrogate on the flow: every rollout finished, projected every prediction (the
    projection's divergence before and after in campaign.cfd.<variant>.projection, its words in
    the description and report.md), its kinetic energy and enstrophy beside the reference's,
    and its scores beside the three baselines (check_surrogate.py has the bounds' reasons).
    samples: the training pairs; heldout: the held-out window's steps; rollouts: variant ->
    (window, predictions), ROLLOUTS (inputs/cfd_cavity_surrogate.yaml's) by default."""
    rollouts = ROLLOUTS if rollouts is None else rollouts
    check(rep["campaign"]["physics"] == "cfd", "physics cfd")
    var = {v["name"]: v for v in rep["variants"]}
    cfd = rep["campaign"].get("cfd", {})
    ref = cfd.get("reference")
    check(ref is not None and var.get("reference", {}).get("status") == "ok", "the reference finished")
    tr = rep["surrogate"]["training"]
    check(tr["mode"] == "online" and tr["samples"] == samples,
          f"training on {samples} pairs: {tr['mode']}, {tr['samples']}")
    ev = rep["surrogate"]["evaluation"]["heldout_steps"]
    check(ev == list(heldout), f"held-out window {heldout[0]}-{heldout[1]}: {ev}")
    check("div L2 predicted (max)" in md, "report.md has the predicted-divergence column")
    for name, (window, predictions) in rollouts.items():
        v = var.get(name)
        c = cfd.get(name)
        check(v is not None and c is not None, f"variant {name} in the report")
        if v is None or c is None:
            continue
        check(v["status"] == "ok", f"{name}: status {v['status']}")
        n = v["speed"]["surrogate_steps"] if predictions is None else predictions
        check(v["speed"]["surrogate_steps"] == n and n > 0, f"{name}: {v['speed']['surrogate_steps']} predictions")
        check("projected to a divergence-free velocity" in v["description"], f"{name}: the description says so")
        check(f"{name}: " in md and "projected to a divergence-free velocity" in md, f"{name}: report.md says so")
        p = c.get("projection")
        check(p is not None and p.get("projected") is True, f"{name}: campaign.cfd.{name}.projection")
        if p is None:
            continue
        check(p["predictions"] == n, f"{name}: {p['predictions']} projections for {n} predictions")
        b, a = p["divergence_before_max"], p["divergence_after_max"]
        check(0.0 < p["divergence_before_mean"] <= b, f"{name}: divergence before {p['divergence_before_mean']}, {b}")
        # the solve's 1e-10 relative residual bounds the remainder; 1e-6 of the largest is slack
        # for a prediction with a smaller divergence than the largest. The absolute 1e-9 scales
        # with a largest divergence above 1 (the solve's tolerance is relative to what it
        # removes: a rollout that drifts, as the 3D held-out one does, predicts larger ones)
        floor = 1e-9 * max(1.0, b)
        check(a <= floor and a <= 1e-6 * b, f"{name}: divergence after projection {a} (before {b})")
        check(c["divergence_max"] <= floor, f"{name}: divergence at the samples {c['divergence_max']}")
        for k in ("kinetic_energy_final", "enstrophy_final"):
            check(math.isfinite(c[k]) and c[k] > 0.0, f"{name}: {k} = {c[k]}")
        r = v.get("rollout")
        check(r is not None and r["window"] == window, f"{name}: window {r and r['window']}, expected {window}")
        if r is None or r.get("end") is None:
            continue
        end = r["end"]
        for k in ("surrogate", "zero", "persistence", "linear"):
            check(isinstance(end.get(k), (int, float)) and math.isfinite(end[k]), f"{name}: end.{k} = {end.get(k)}")
        # the zero field's error against a flow that moves is exactly 1
        check(abs(end["zero"] - 1.0) < 1e-12, f"{name}: zero field {end['zero']}")
        if predictions is not None:
            check(r.get("mean_13_30") is not None, f"{name}: mean over predictions 13-30")
