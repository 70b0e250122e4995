#!/usr/bin/python3
"""check_surrogate.py RUN_DIR: checks the report of inputs/cfd_cavity_surrogate.yaml
(tests/regression/cfd): the transformer surrogate on the flow state.

Every rollout (fp64 and fp32, in-sample from step 100 and held out from step 440) and the hybrid
finished; each projected every one of its predictions (85 in-sample and 40 held out: the
windows over K = 4); a prediction's divergence before the projection is above 0 (a network does
not predict a discretely divergence-free field: measured up to 1.1e-2) and after it at most 1e-9
and 1e-6 of the largest before (the pressure solve's relative tolerance is 1e-10; measured
4.3e-13), as are the divergence norms at the samples; the surrogate states' kinetic energy and
enstrophy are finite and positive beside the reference's; every rollout is scored beside the
zero field (exactly 1), persistence and linear extrapolation. How good the surrogate is, is not
asserted (the report states it beside the baselines).
"""
import sys

from cfd_report import Checks, check_surrogate, load


if __name__ == "__main__":
    checks = Checks()
    rep, md = load(sys.argv[1])
    check_surrogate(rep, md, checks)
    checks.finish("check_surrogate")
