#!/usr/bin/env python3
"""The accuracy numbers of runs of one deck at several rank counts, compared bit for bit.

usage: compare_rank_counts.py RUN_DIR [RUN_DIR ...]

Every float dataset of report.h5 under /variants and /snapshots (energy, rel. L2, max error,
diagnostics, probe traces, final fields; not the timings) and every variant's `accuracy` in report.json must be
identical in every run directory: the state is rank-count invariant, and the global sums are exact
(core/ExactSum.hpp). No tolerance. Prints one line per run compared; exits 1 on a difference.
"""
import json
import sys

import h5py
import numpy as np


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            # Timings (timed_seconds_per_step, ...) are measurements, not results.
            if isinstance(obj, h5py.Dataset) and name.split("/")[0] in ("variants", "snapshots") and \
                    "seconds" not in name.split("/")[-1]:
                out[name] = obj[...]
        f.visititems(visit)
    return out


def accuracy(path):
    with open(path) as f:
        report = json.load(f)
    return {v["name"]: v["accuracy"] for v in report["variants"]}


def main(dirs):
    first = dirs[0]
    ref_h5, ref_json = datasets(first + "/report.h5"), accuracy(first + "/report.json")
    if not any(k.endswith("/energy") for k in ref_h5):
        print(f"FAIL: {first}/report.h5 has no energy series")
        return 1
    failed = 0
    for d in dirs[1:]:
        h5, js = datasets(d + "/report.h5"), accuracy(d + "/report.json")
        diffs = []
        if sorted(h5) != sorted(ref_h5):
            diffs.append(f"datasets differ: {sorted(set(h5) ^ set(ref_h5))}")
        for name, a in ref_h5.items():
            b = h5.get(name)
            if b is None:
                continue
            if a.shape != b.shape or a.dtype != b.dtype:
                diffs.append(f"{name}: shape/type {a.shape} {a.dtype} vs {b.shape} {b.dtype}")
            elif a.dtype.kind == "f":
                ua = a.ravel().view(np.uint64 if a.dtype.itemsize == 8 else np.uint32)
                ub = b.ravel().view(np.uint64 if b.dtype.itemsize == 8 else np.uint32)
                bad = np.flatnonzero(ua != ub)
                if bad.size:
                    j = int(bad[0])
                    diffs.append(f"{name}[{j}]: {a.ravel()[j]!r} vs {b.ravel()[j]!r} ({bad.size} differ)")
            elif a.dtype.kind != "f" and not np.array_equal(a, b):
                diffs.append(f"{name}: differs")
        if js != ref_json:
            for v in ref_json:
                if js.get(v) != ref_json[v]:
                    diffs.append(f"report.json {v}.accuracy: {ref_json[v]} vs {js.get(v)}")
        if diffs:
            failed += 1
            print(f"FAIL: {d} against {first}:")
            for line in diffs[:20]:
                print("  " + line)
        else:
            print(f"PASS: {d}: {len(h5)} datasets and {len(js)} variants' accuracy identical to {first}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
