#!/usr/bin/python3
"""compare_reference.py RUN_DIR REFERENCE.h5: the fp64 reference gathers of a run of two_shots.yaml
against the committed reference (make_reference.py).

Geometry and sampling (receiver and source coordinates, sample interval, shapes) must be equal.
Values: for every shot, the relative L2 misfit of the gather and of the energy series must stay
below TOLERANCE.

Why TOLERANCE = 1e-9: the run is fp64 and the scheme is linear, so two correct builds differ
only by rounding: another compiler or FMA contraction of a*b+c (GPU compilers contract by
default), another summation order in a rewritten kernel, another rank count (the energy is an
MPI sum). Each step adds relative rounding of a few 1e-16 to the field; over 400 steps that
stays below ~1e-13 (measured below: 3e-15). 1e-9 leaves a factor 1e4 over that bound, and sits
far below what any change of the physics does.
Tried once (2026-11-30, this deck, deck overrides; rel L2 of the gathers, shot 0 / shot 1):
    seismic.order=6 (same dt)                      3.4e-4 / 3.4e-4   fails
    seismic.order=4 (same dt)                      3.8e-3 / 3.8e-3   fails
    seismic.pml.reflection=1e-4 (CPML profile)     1.8e-3 / 5.7e-3   fails
    seismic.pml.cells=10 (instead of 12)           5.5e-3 / 1.6e-2   fails
    lower layer 2500 -> 2500.000001 m/s (4e-10)    6.1e-9 / 6.1e-9   fails
    dt * (1 + 1e-12)                               1.5e-11           passes
    dt one ulp larger (a rounding-level change)    3.8e-15           passes
    3 ranks instead of 1                           0 (gathers), 1.9e-15 (energy)
    a build with FMA contraction (-march=native -ffp-contract=fast instead of the project's
      -ffp-contract=off; 7591 vfmadd in the binary, as a GPU compiler would contract)
                                                   2.8e-15 / 2.8e-15 passes
So a change of the scheme's order or of the CPML fails by five orders of magnitude, while
rounding-level differences pass by five.

Also checked, as physics rather than regression: the deck is nearly mirror-symmetric about
x = 500 m (sources at 250 and 750 m, receivers 100..900 m; the grid spans 0..990 m, so the
mirror is off by 5 m), so shot 1's gather with its receivers reversed must match shot 0's to
MIRROR_TOLERANCE = 5e-2 (measured 1.2e-2; a shot that did not start from rest, or that fired
the wrong source, is off by O(1)).
"""
import sys

import h5py
import numpy as np

TOLERANCE = 1e-9
MIRROR_TOLERANCE = 5e-2
FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    run_dir, ref_path = sys.argv[1], sys.argv[2]
    worst = 0.0
    with h5py.File(f"{run_dir}/gathers.h5", "r") as run, h5py.File(ref_path, "r") as ref:
        g = run["variants/reference"]
        check(sorted(g["gathers"]) == sorted(ref["gathers"]),
              f"shots {sorted(g['gathers'])}, the reference has {sorted(ref['gathers'])}")
        for shot in sorted(ref["gathers"]):
            if shot not in g["gathers"]:
                continue
            a, b = g[f"gathers/{shot}"], ref[f"gathers/{shot}"]
            check(a.shape == b.shape, f"{shot}: shape {a.shape}, reference {b.shape}")
            for k in ("receiver_coordinates", "source_positions", "num_samples", "record_every"):
                check(np.array_equal(a.attrs[k], b.attrs[k]), f"{shot}: attribute {k} differs from the reference")
            check(abs(a.attrs["sample_interval"] / b.attrs["sample_interval"] - 1) < 1e-14,
                  f"{shot}: sample interval {a.attrs['sample_interval']} vs {b.attrs['sample_interval']}")
            if a.shape != b.shape:
                continue
            e = rel_l2(a[()], b[()])
            ee = rel_l2(g[f"energy/{shot}"][:, 2], ref[f"energy/{shot}"][:, 2])
            worst = max(worst, e, ee)
            print(f"{shot}: gather rel L2 {e:.3e}, energy rel L2 {ee:.3e} (tolerance {TOLERANCE:g})")
            check(e <= TOLERANCE, f"{shot}: gather rel L2 misfit {e:.3e} > {TOLERANCE:g}")
            check(ee <= TOLERANCE, f"{shot}: energy series rel L2 misfit {ee:.3e} > {TOLERANCE:g}")
        if "shot_0000" in g["gathers"] and "shot_0001" in g["gathers"]:
            m = rel_l2(g["gathers/shot_0001"][()][::-1, :], g["gathers/shot_0000"][()])
            print(f"shot_0001 mirrored against shot_0000: rel L2 {m:.3e} (tolerance {MIRROR_TOLERANCE:g})")
            check(m <= MIRROR_TOLERANCE, f"shot 1 mirrored differs from shot 0 by {m:.3e}")
    if FAILURES:
        print("\n".join("FAIL: " + m for m in FAILURES))
        print("If the physics changed on purpose, regenerate the reference (make_reference.py).")
        return 1
    print(f"{run_dir}: gathers match the reference (worst rel L2 {worst:.3e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
