#!/usr/bin/python3
"""check_report.py RUN_DIR [--against OTHER_RUN_DIR]: checks a campaign's report.

Schema: the keys docs/report-schema.md promises. Plausibility: the reference against itself has
exactly zero error; an fp32 variant has a small but non-zero error; every number is finite (or
null where the schema allows "undefined / not measured"). With --against, the accuracy numbers
of both runs must be identical (resume test): same fields, same metrics, bit for bit.

Shot gathers (gathers.h5, when the physics has receivers): the layout of docs/report-schema.md,
every gather equal bit for bit to the traces report.h5 holds, one dataset per shot, different
shots giving different gathers, finite energy series. With --against, identical gathers.
"""
import argparse
import json
import math
import os
import sys

import h5py
import numpy as np

FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)


def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def load(run_dir):
    with open(os.path.join(run_dir, "report.json")) as f:
        return json.load(f)


ACCURACY_KEYS = ["final_rel_l2", "max_rel_l2", "final_max_error", "receiver_rel_l2", "xcorr_peak",
                 "xcorr_lag_steps", "final_energy_drift", "max_abs_energy_drift", "threshold_time", "samples"]
SPEED_KEYS = ["phases_s", "steps", "time_per_step_s", "speedup_vs_reference", "cell_updates_per_s",
              "effective_bandwidth_GBps", "gflops", "memory_hwm_MiB", "energy_J", "energy_note"]


def check_schema(rep):
    check(rep.get("schema") == "mantissa-report", "schema name")
    check(rep.get("schema_version") == 3, "schema_version 3")
    for k in ("mantissa", "context", "campaign", "surrogate", "variants", "outputs"):
        check(k in rep, f"top-level key {k}")
    ctx = rep["context"]
    for k in ("hostname", "backend", "kokkos_version", "mpi_version", "ranks", "precisions", "deck",
              "memory_note", "energy_meter"):
        check(k in ctx, f"context.{k}")
    check(len(ctx["deck"]["hash"]) > 0 and "campaign:" in ctx["deck"]["resolved"], "resolved deck and hash")
    for v in rep["variants"]:
        for k in ("name", "kind", "storage", "compute", "precision_support", "status", "accuracy", "speed"):
            check(k in v, f"{v.get('name')}: key {k}")
        for k in ACCURACY_KEYS:
            check(k in v["accuracy"], f"{v['name']}: accuracy.{k}")
        for k in SPEED_KEYS:
            check(k in v["speed"], f"{v['name']}: speed.{k}")
        check(v["precision_support"] in ("native", "emulated"), f"{v['name']}: precision_support")
        check_speed_section(rep, v)
    check_interleaved(rep)


def check_speed_section(rep, v):
    """Issue 11: every physics variant's speed column is a timed median with its spread, the
    measured bound and the fraction of it; the subnormal mode and census are stated."""
    s, name = v["speed"], v["name"]
    for k in ("method", "timing", "in_run_time_per_step_s", "bound", "fixed_step_s", "fixed_step_fraction",
              "warning", "speedup_within_noise"):
        check(k in s, f"{name}: speed.{k}")
    if v["kind"] not in ("reference", "physics"):
        check(s.get("method") in ("in-run", "predictions") and s.get("timing") is None,
              f"{name}: surrogates are timed in-run")
        # Placed against the reference's timed median, never its in-run time (schema 3).
        check(s.get("speedup_method") == s.get("method") + " vs timed reference", f"{name}: speedup_method")
        return
    b = rep["context"].get("bounds")
    check(b is not None and finite(b.get("triad_GBps")) and b["triad_GBps"] > 0, "context.bounds.triad_GBps")
    check(s.get("method") == "timed", f"{name}: speed.method {s.get('method')}")
    t = s.get("timing") or {}
    for k in ("median_s", "q1_s", "q3_s", "min_s", "max_s", "relative_spread"):
        check(finite(t.get(k)), f"{name}: speed.timing.{k} = {t.get(k)}")
    if all(finite(t.get(k)) for k in ("median_s", "min_s", "max_s", "q1_s", "q3_s")):
        check(t["min_s"] <= t["q1_s"] <= t["median_s"] <= t["q3_s"] <= t["max_s"], f"{name}: order statistics")
        check(s["time_per_step_s"] == t["median_s"], f"{name}: time_per_step_s is the timed median")
    check(len(t.get("samples_s", [])) == t.get("repeats", -1) and t.get("repeats", 0) >= 3,
          f"{name}: samples and repeats")
    check(t.get("steps_per_repeat", 0) > 0, f"{name}: steps per repeat")
    bd = s.get("bound") or {}
    check(finite(bd.get("triad_GBps")) and b is not None and bd["triad_GBps"] == b["triad_GBps"],
          f"{name}: speed.bound.triad_GBps is the context's")
    check(finite(bd.get("fraction_of_triad")) and bd["fraction_of_triad"] > 0, f"{name}: fraction of triad")
    if finite(bd.get("fraction_of_triad")) and finite(s.get("effective_bandwidth_GBps")):
        check(abs(bd["fraction_of_triad"] * bd["triad_GBps"] / s["effective_bandwidth_GBps"] - 1) < 1e-12,
              f"{name}: fraction = bandwidth / triad")
    check(finite(s.get("fixed_step_s")) and s["fixed_step_s"] > 0, f"{name}: fixed part of the step measured")
    check((s.get("warning") is not None) == (finite(s.get("fixed_step_fraction")) and s["fixed_step_fraction"] >= 0.5),
          f"{name}: warning exactly when the fixed part is at least half the step")
    if s.get("warning") is not None:
        check(name in s["warning"], f"{name}: the warning names the variant")
    sub = v.get("subnormals") or {}
    check(sub.get("requested") in ("flush", "keep") and sub.get("in_force") in ("flush", "keep", "mixed"),
          f"{name}: subnormal mode stated")
    steps = sub.get("census_steps", [])
    check(len(steps) == v["accuracy"]["samples"], f"{name}: a census at every sample step")
    for f in sub.get("census", []):
        check(len(f["subnormal"]) == len(steps) and f["values"] > 0 and all(0 <= x <= f["values"] for x in f["subnormal"]),
              f"{name}: census of {f.get('field')}")


def check_interleaved(rep):
    """Issue 11: the physics variants' timed stretches ran interleaved (round r: stretch r of every
    variant, the variants' order rotated to start with variant r mod n, so variant i is (i - r) mod n
    in round r), and the surrogate is placed against the timed medians."""
    phys = [v for v in rep["variants"] if v["kind"] in ("reference", "physics")]
    n = len(phys)
    for i, v in enumerate(phys):
        seq = (v["speed"].get("timing") or {}).get("sequence")
        reps = (v["speed"].get("timing") or {}).get("repeats", 0)
        check(seq == [r * n + (i - r) % n for r in range(reps)], f"{v['name']}: timed stretches interleaved: {seq}")
    sp = rep["surrogate"].get("speed_placement")
    if sp is not None and sp.get("rollouts"):
        ref_t = phys[0]["speed"]["timing"]
        check(sp.get("physics_method") == "timed" and sp.get("physics_s_per_step") == ref_t["median_s"],
              f"speed_placement against the reference's timed median: {sp.get('physics_method')}")


def check_numbers(rep):
    vs = {v["name"]: v for v in rep["variants"]}
    ref = rep["variants"][0]
    check(ref["kind"] == "reference" and ref["status"] == "ok", "reference first and ok")
    a = ref["accuracy"]
    # The reference compared with itself: exactly zero, not merely small.
    for k in ("final_rel_l2", "max_rel_l2", "final_max_error", "receiver_rel_l2"):
        check(a[k] == 0.0, f"reference {k} = {a[k]}, expected exactly 0")
    check(a["xcorr_peak"] == 1.0 and a["xcorr_lag_steps"] == 0, "reference x-corr 1 at lag 0")
    for v in rep["variants"]:
        s = v["speed"]
        check(v["status"] == "ok", f"{v['name']}: status {v['status']} ({(v.get('failure') or {}).get('message')})")
        for k in ("final_rel_l2", "max_rel_l2", "final_max_error", "final_energy_drift"):
            check(finite(v["accuracy"][k]) and (k == "final_energy_drift" or v["accuracy"][k] >= 0),
                  f"{v['name']}: accuracy.{k} = {v['accuracy'][k]}")
        check(finite(s["time_per_step_s"]) and s["time_per_step_s"] > 0, f"{v['name']}: time per step")
        check(finite(s["speedup_vs_reference"]) and s["speedup_vs_reference"] > 0, f"{v['name']}: speed-up")
        check(finite(s["memory_hwm_MiB"]) and s["memory_hwm_MiB"] > 0, f"{v['name']}: memory")
        check(finite(s["cell_updates_per_s"]) and s["cell_updates_per_s"] > 0, f"{v['name']}: cell updates/s")
        check((s["energy_J"] is None) == (s["energy_note"] == "not measured"), f"{v['name']}: energy vs note")
        check(all(finite(x) and x >= 0 for x in s["phases_s"].values()), f"{v['name']}: phase times")
        if v["kind"] == "hybrid":
            h = v["hybrid"]
            check(h["handovers"] == len(h["events"]), f"{v['name']}: hand-over count matches the log")
            check(v["speed"]["surrogate_steps"] + v["speed"]["physics_steps"] > 0, "hybrid advanced")
            # Every hand-over is one of the indicator's checks, each beside the true error (null
            # off the sample steps); the verdict is one of true, false, null.
            checks = {c["step"]: c for c in h["checks"]}
            check(all(e["step"] in checks and checks[e["step"]]["action"] == e["reason"] for e in h["events"]),
                  f"{v['name']}: every hand-over is a check")
            check(sum(c["action"] != "continue" for c in h["checks"]) == h["handovers"],
                  f"{v['name']}: checks that handed over")
            check(all(c["true_error"] is None or (finite(c["true_error"]) and c["true_error"] >= 0)
                      for c in h["checks"]), f"{v['name']}: true errors")
            check(h["handed_over_in_time"] in (True, False, None), f"{v['name']}: in-time verdict")
    f32 = [v for v in rep["variants"] if v["kind"] == "physics" and v["storage"] == "fp32"]
    check(len(f32) > 0, "an fp32 physics variant exists")
    for v in f32:
        e = v["accuracy"]["final_rel_l2"]
        # fp32 round-off (6e-8 per operation) grown over a few hundred steps stays around 1e-6;
        # 1e-3 is the fp16-storage level, so fp32 must be clearly below it yet not exactly 0.
        check(0.0 < e < 1e-3, f"{v['name']}: fp32 final rel L2 {e} not in (0, 1e-3)")
    lowp = [v for v in rep["variants"] if v["kind"] == "physics" and v["storage"] in ("bf16", "fp16")]
    for v in lowp:
        check(v["accuracy"]["final_rel_l2"] > f32[0]["accuracy"]["final_rel_l2"],
              f"{v['name']}: 16-bit storage should lose more than fp32")
    if rep["surrogate"]["enabled"]:
        t = rep["surrogate"]["training"]
        check(t["samples"] > 0 and finite(t["final_loss"]), "surrogate trained on samples with a finite loss")
        check(isinstance(rep["surrogate"].get("start_step"), int), "surrogate.start_step")
        if t["mode"] == "online":
            # One prediction from every training state but the last (docs/report-schema.md); a
            # surrogate counts its samples as states or as pairs of them.
            o = t.get("one_step")
            check(o is not None and finite(o["rel_l2"]) and o["rel_l2"] > 0 and
                  t["samples"] - 1 <= o["pairs"] <= t["samples"] and o["pairs"] > 0,
                  f"surrogate one-step error measured on the training pairs: {o}")


def txt(v):
    """A string attribute (mantissa writes fixed-length UTF-8, which h5py returns as bytes)."""
    return v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)


def gather_datasets(path):
    """{variant: {"gathers/shot_NNNN" or "energy/shot_NNNN": array}} of a gathers.h5."""
    with h5py.File(path, "r") as f:
        return {v: {f"{g}/{s}": f[f"variants/{v}/{g}/{s}"][()] for g in ("gathers", "energy")
                    for s in f[f"variants/{v}/{g}"]} for v in f["variants"]}


def check_gathers(run_dir, rep):
    path = os.path.join(run_dir, "gathers.h5")
    out = rep["outputs"].get("gathers", "missing")
    check(out in (None, "gathers.h5"), f"outputs.gathers = {out!r}")
    check((out is None) != os.path.isfile(path), "gathers.h5 written exactly when outputs.gathers names it")
    if out is None or not os.path.isfile(path):
        return
    with h5py.File(os.path.join(run_dir, "report.h5"), "r") as r, h5py.File(path, "r") as f:
        a = f.attrs
        check(txt(a["schema"]) == "mantissa-gathers" and a["schema_version"] == 1, "gathers schema and version")
        dim, nrec, nshots, dt = int(a["dim"]), int(a["num_receivers"]), int(a["num_shots"]), float(a["dt"])
        check(dim in (2, 3) and nrec > 0 and nshots >= 1 and dt > 0, f"root attributes {dict(a)}")
        check(rep["campaign"].get("shots") == nshots, f"report.json campaign.shots = gathers.h5 num_shots {nshots}")
        check(len(txt(a["receiver_names"]).split("\n")) == nrec, "one receiver name per receiver")
        coords = a["receiver_coordinates"]
        check(coords.shape == (nrec, dim), f"receiver_coordinates shape {coords.shape}")
        for k in ("quantity", "unit", "time_unit", "length_unit"):
            check(len(txt(a[k])) > 0, f"root attribute {k} set")
        recorded = [v for v in r["variants"] if r[f"variants/{v}"].attrs["num_receivers"] > 0]
        check(len(recorded) > 0, "some variant recorded receivers")
        check(sorted(recorded) == sorted(f["variants"]), f"gathers for {sorted(f['variants'])}, "
              f"report.h5 traces for {sorted(recorded)}")
        refg = f[f"variants/{rep['variants'][0]['name']}/gathers"]  # the reference comes first
        ref_peak = max(np.max(np.abs(refg[s][()])) for s in refg)
        for v in recorded:
            if v not in f["variants"]:
                continue
            rv, gv = r[f"variants/{v}"], f[f"variants/{v}"]
            stride = int(rv.attrs["trace_stride"])
            check(gv.attrs["record_every"] == stride, f"{v}: record_every = report.h5 trace_stride")
            # The variant's own shot's traces are report.h5's `traces` (shot 0, or the held-out shot
            # a rollout ran: attribute `experiment`), later shots its `extra_shots/<i>/traces`.
            first = int(rv.attrs.get("experiment", 0))
            series = [(rv["traces"][()], rv["step"][()], rv["time"][()], rv["energy"][()])]
            if "extra_shots" in rv:
                for i in range(int(rv["extra_shots"].attrs["count"])):
                    x = rv[f"extra_shots/{i}"]
                    series.append((x["traces"][()], x["step"][()], x["time"][()], x["energy"][()]))
            series = [s for s in series if s[0].size > 0]
            shots = sorted(gv["gathers"])
            check(first == 0 or len(series) == 1, f"{v}: a rollout on held-out shot {first} ran other shots too")
            check(shots == [f"shot_{first + i:04d}" for i in range(len(series))], f"{v}: shot datasets {shots}")
            check(int(gv.attrs["num_shots"]) == len(shots), f"{v}: num_shots attribute")
            if txt(rv.attrs["kind"]) in ("reference", "physics") and txt(rv.attrs["status"]) == "ok":
                check(len(shots) == nshots, f"{v}: {len(shots)} shot gathers, the deck has {nshots} shots")
            gathers = []
            for i, (traces, steps, times, energy) in enumerate(series, start=first):
                name = f"shot_{i:04d}"
                if name not in gv["gathers"]:
                    continue
                ds = gv[f"gathers/{name}"]
                g = ds[()]
                ns = traces.size // nrec
                check(g.dtype == np.float64 and g.shape == (nrec, ns), f"{v}/{name}: shape {g.shape} dtype {g.dtype}")
                # The same numbers as report.h5, transposed to receivers x time, bit for bit.
                check(g.shape == (nrec, ns) and np.array_equal(g, traces.reshape(ns, nrec).T),
                      f"{v}/{name}: gather differs from report.h5's traces")
                da = ds.attrs
                check(da["shot"] == i and da["num_receivers"] == nrec and da["num_samples"] == ns,
                      f"{v}/{name}: shot/num_receivers/num_samples attributes")
                check(da["sample_interval"] == dt * stride and da["t0"] == 0.0 and da["record_every"] == stride,
                      f"{v}/{name}: sampling attributes")
                check(np.array_equal(da["receiver_coordinates"], coords), f"{v}/{name}: receiver_coordinates")
                nsrc = int(da["num_sources"])
                check(nsrc >= 1 and da["source_positions"].shape == (nsrc, dim), f"{v}/{name}: source_positions")
                for k in ("source_frequency", "source_delay", "source_amplitude"):
                    check(da[k].shape == (nsrc,) and np.all(np.isfinite(da[k])), f"{v}/{name}: {k}")
                check(len(txt(da["source_wavelet"]).split("\n")) == nsrc, f"{v}/{name}: source_wavelet")
                if txt(rv.attrs["status"]) == "ok":
                    check(np.all(np.isfinite(g)), f"{v}/{name}: finite")
                    # Not all zero where the wave reaches the receivers: a shot whose wave has not
                    # arrived by the last step holds only numerical precursor noise in the
                    # reference (1e-9 of the pressure where it has), which 16-bit storage rounds to 0.
                    if np.max(np.abs(refg[name][()])) > 1e-6 * ref_peak:
                        check(np.max(np.abs(g)) > 0, f"{v}/{name}: all zero")
                e = gv[f"energy/{name}"][()]
                check(e.shape == (len(steps), 3), f"{v}/energy/{name}: shape {e.shape}")
                if e.shape == (len(steps), 3):
                    check(np.array_equal(e[:, 0], steps) and np.array_equal(e[:, 1], times)
                          and np.array_equal(e[:, 2], energy), f"{v}/energy/{name}: equals report.h5's series")
                    check(e[0, 0] == 0 and np.all(np.diff(e[:, 0]) > 0), f"{v}/energy/{name}: steps from 0, increasing")
                    check(np.all(np.isfinite(e)) and np.max(e[:, 2]) > 0, f"{v}/energy/{name}: finite, positive somewhere")
                    # rtol 1e-12: a physics may accumulate its time step by step (a few ulps per
                    # step) rather than multiply; a wrong sampling is off by whole steps.
                    check(np.allclose(e[:, 1], e[:, 0] * dt, rtol=1e-12, atol=0), f"{v}/energy/{name}: time = step dt")
                gathers.append((name, g, da["source_positions"]))
            # Different shots are different experiments: their sources and gathers must differ, by
            # more than 1e-3 of the peak (a shot that merely repeated another differs by 0, one
            # with a moved source by O(1) near the source).
            for x in range(len(gathers)):
                for y in range(x + 1, len(gathers)):
                    (nx, gx, sx), (ny, gy, sy) = gathers[x], gathers[y]
                    check(not np.array_equal(sx, sy), f"{v}: {nx} and {ny} have the same sources")
                    check(gx.shape == gy.shape and np.max(np.abs(gx - gy)) > 1e-3 * np.max(np.abs(gx)),
                          f"{v}: {nx} and {ny} gathers do not differ")


def compare(rep, other):
    a = {v["name"]: v["accuracy"] for v in rep["variants"]}
    b = {v["name"]: v["accuracy"] for v in other["variants"]}
    check(a.keys() == b.keys(), "same variants")
    for n in a:
        for k in ACCURACY_KEYS:
            check(a[n][k] == b[n].get(k), f"{n}: accuracy.{k} differs: {a[n][k]} vs {b[n].get(k)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--against")
    args = ap.parse_args()
    rep = load(args.run_dir)
    check_schema(rep)
    check_numbers(rep)
    check_gathers(args.run_dir, rep)
    if args.against:
        compare(rep, load(args.against))
        check(rep["context"]["resumed"], "the resumed run says it was resumed")
        if os.path.isfile(os.path.join(args.against, "gathers.h5")):
            a = gather_datasets(os.path.join(args.run_dir, "gathers.h5"))
            b = gather_datasets(os.path.join(args.against, "gathers.h5"))
            check(a.keys() == b.keys(), "same variants in gathers.h5")
            for v in a:
                check(a[v].keys() == b.get(v, {}).keys(), f"{v}: same shots in gathers.h5")
                for s in a[v]:
                    check(s in b.get(v, {}) and np.array_equal(a[v][s], b[v][s]), f"{v}/{s}: differs between the two runs")
    for f in ("report.md", "report.h5", "snapshots.xmf", "run.log"):
        check(os.path.isfile(os.path.join(args.run_dir, f)), f"{f} written")
    if FAILURES:
        print("\n".join("FAIL: " + m for m in FAILURES))
        return 1
    print(f"{args.run_dir}: report ok ({len(rep['variants'])} variants)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
