#!/usr/bin/python3
"""check_surrogate.py RUN_DIR [CASE]: checks the report of a cfd surrogate deck
(tests/regression/cfd): the transformer surrogate on the flow state. CASE is `cavity`
(inputs/cfd_cavity_surrogate.yaml, the default) or `taylor_green_3d`
(inputs/cfd_taylor_green_3d_surrogate.yaml).

Every rollout (fp64 and fp32, in-sample from the hand-over and held out from the split) and the
hybrid finished; each projected every one of its predictions (the windows over K = 4: cavity 85
in-sample and 40 held out, Taylor-Green 30 and 30); a prediction's divergence before the
projection is above 0 (a network does not predict a discretely divergence-free field: measured up
to 1.1e-2 in the cavity, 4.1 in 3D's drifting held-out rollout) and after it at most 1e-9 x
max(1, the largest before) and 1e-6 of the largest before (the pressure solve's relative
tolerance is 1e-10; measured 4.3e-13 in the cavity, 6.0e-11 in 3D), as are the divergence norms
at the samples; the surrogate states' kinetic energy and enstrophy are finite and positive beside the
reference's; every rollout is scored beside the zero field (exactly 1), persistence and linear
extrapolation. How good the surrogate is, is not asserted (the report states it beside the
baselines).
"""
import sys

from cfd_report import Checks, check_surrogate, load

# CASE -> (training pairs, held-out window, variant -> (window, predictions; None: the hybrid))
CASES = {
    "cavity": (85, (440, 600), None),
    "taylor_green_3d": (
        30,
        (140, 260),
        {
            "surrogate-fp64": ("in-sample", 30),
            "surrogate-fp32": ("in-sample", 30),
            "surrogate-fp64-heldout": ("held-out", 30),
            "surrogate-fp32-heldout": ("held-out", 30),
            "hybrid-fp32": ("whole run", None),
        },
    ),
}


if __name__ == "__main__":
    case = sys.argv[2] if len(sys.argv) > 2 else "cavity"
    if case not in CASES:
        raise SystemExit(f"check_surrogate.py: unknown case '{case}'; one of {', '.join(CASES)}")
    samples, heldout, rollouts = CASES[case]
    checks = Checks()
    rep, md = load(sys.argv[1])
    check_surrogate(rep, md, checks, samples, heldout, rollouts)
    checks.finish("check_surrogate")
