#!/usr/bin/python3
"""check_report.py RUN_DIR [--against OTHER_RUN_DIR]: checks a campaign's report.

Schema: the keys docs/report-schema.md promises. Plausibility: the reference against itself has
exactly zero error; an fp32 variant has a small but non-zero error; every number is finite (or
null where the schema allows "undefined / not measured"). With --against, the accuracy numbers
of both runs must be identical (resume test): same fields, same metrics, bit for bit.
"""
import argparse
import json
import math
import os
import sys

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
    check(rep.get("schema_version") == 1, "schema_version 1")
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
    if args.against:
        compare(rep, load(args.against))
        check(rep["context"]["resumed"], "the resumed run says it was resumed")
    for f in ("report.md", "report.h5", "snapshots.xmf", "run.log"):
        check(os.path.isfile(os.path.join(args.run_dir, f)), f"{f} written")
    if FAILURES:
        print("\n".join("FAIL: " + m for m in FAILURES))
        return 1
    print(f"{args.run_dir}: report ok ({len(rep['variants'])} variants)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
