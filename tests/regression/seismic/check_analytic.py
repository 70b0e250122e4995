#!/usr/bin/python3
"""check_analytic.py RUN_DIR: the reference gathers of analytic_2d.yaml against the analytic
solution, built only from gathers.h5's attributes, so that what the attributes say (receiver
rows and coordinates, source position, wavelet, delay, amplitude, sample interval, t0) is what
the data are.

p(x, t) = A / (2 pi) int_0^{acosh(c t / r)} w(t - (r / c) cosh u) du  for t > r / c, else 0
(the 2D Green's function with tau = (r / c) cosh u, as tests/unit/seismic/SeismicTestUtils.hpp),
compared per receiver over t <= r / c + 2.4 / f0 (the direct wavelet has passed; no wall
reflection arrives before).

TOLERANCE = 1e-2, relative L2 per receiver: the issue's bound for 8th order at 10 points per
minimum wavelength, also tstAnalytic.cpp's. Measured (2026-11-30, 2 ranks): 1.1e-3, 1.8e-3,
1.1e-3. The same data read with wrong metadata (tried once): t0 one sample late 6.9e-2;
sample interval 1% too long 0.11..0.13; the first two receiver rows swapped 1.8 and 1.4;
amplitude 1 instead of the deck's 2.5: 1.5. So each of those fails by 7x or more.
"""
import sys

import h5py
import numpy as np

TOLERANCE = 1e-2


def txt(v):
    return v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)


def ricker(t, f, delay):
    a = (np.pi * f * (t - delay)) ** 2
    return (1 - 2 * a) * np.exp(-a)


def analytic_2d(t, r, c, f, delay):
    out = np.zeros_like(t)
    for i, ti in enumerate(t):
        if ti <= r / c:
            continue
        u = np.linspace(0.0, np.arccosh(c * ti / r), 4001)  # Simpson, as the C++ test
        y = ricker(ti - (r / c) * np.cosh(u), f, delay)
        h = u[1] - u[0]
        out[i] = h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum()) / (2 * np.pi)
    return out


def main():
    run_dir = sys.argv[1]
    failures = []
    with h5py.File(f"{run_dir}/gathers.h5", "r") as f:
        c = 1000.0  # the deck's velocity (not an attribute of the gathers)
        g = f["variants/reference/gathers/shot_0000"]
        a = g.attrs
        data = g[()]
        if txt(a["source_wavelet"]) != "ricker" or int(a["num_sources"]) != 1:
            print(f"FAIL: expected one Ricker source, got {txt(a['source_wavelet'])!r}")
            return 1
        src = a["source_positions"][0]
        f0, delay, amp = a["source_frequency"][0], a["source_delay"][0], a["source_amplitude"][0]
        t = a["t0"] + a["sample_interval"] * np.arange(data.shape[1])
        for i, x in enumerate(a["receiver_coordinates"]):
            r = float(np.linalg.norm(x - src))
            w = t <= r / c + 2.4 / f0
            if t[-1] < r / c + 2.4 / f0:
                failures.append(f"receiver {i}: the run ends at {t[-1]:.3f} s, before its window")
            ana = amp * analytic_2d(t[w], r, c, f0, delay)
            e = float(np.linalg.norm(data[i, w] - ana) / np.linalg.norm(ana))
            print(f"receiver {i} at r = {r:.1f} m: relative L2 misfit {e:.3e} over {w.sum()} samples "
                  f"(tolerance {TOLERANCE:g})")
            if not e <= TOLERANCE:
                failures.append(f"receiver {i}: misfit {e:.3e} > {TOLERANCE:g}")
    if failures:
        print("\n".join("FAIL: " + m for m in failures))
        return 1
    print(f"{run_dir}: gathers match the analytic solution")
    return 0


if __name__ == "__main__":
    sys.exit(main())
