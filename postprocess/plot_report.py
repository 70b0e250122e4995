#!/usr/bin/env python3
"""plot_report.py RUN_DIR [-o OUT_DIR]: PNG figures of a mantissa campaign report.

  error_vs_time.png   relative L2 error against the reference over time, per variant; below it
                      every surrogate rollout (in-sample and held-out) beside its free baselines
  rollouts.png        one panel per surrogate rollout: error against predictions since the
                      hand-over, beside the zero field, persistence and linear extrapolation,
                      titled with its window and marked when a baseline beats it
  energy_drift.png    energy drift over time, per variant
  tradeoff.png        speed-up against final error (the precision/speed trade-off)
  receivers.png       receiver traces of every variant overlaid on the reference
  snapshots.png       final field: reference, variant, difference (one row per variant)

Needs numpy, h5py and matplotlib (Debian: python3-numpy python3-h5py python3-matplotlib).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mantissa_report as mr  # noqa: E402

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

STYLE = {"reference": "k-", "physics": "-", "surrogate": "--", "hybrid": "-."}


def positive(v, floor):
    """Log axes cannot show 0 (the reference against itself): plot it at `floor`."""
    v = np.asarray(v, dtype=float)
    return np.where(v > 0, v, floor)


def _num(values):
    """JSON nulls (NaN) as NaN."""
    return np.asarray([np.nan if x is None else x for x in values], dtype=float)


def _dt(data, variants):
    """Physics time per step, from the reference's samples."""
    ref = data[variants[0]["name"]]
    if ref["step"].size and ref["step"][-1] > 0:
        return float(ref["time"][-1]) / float(ref["step"][-1])
    return 1.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("-o", "--out", help="output directory (default RUN_DIR/figures)")
    a = ap.parse_args(argv)
    try:
        rep, h5 = mr.load(a.run_dir)
    except mr.ReportError as e:
        mr.fail(str(e))
    if h5 is None:
        mr.fail(f"{a.run_dir}: report.h5 is missing; the run did not finish writing its report")
    out = a.out or os.path.join(a.run_dir, "figures")
    os.makedirs(out, exist_ok=True)
    variants = rep["variants"]
    data = {v["name"]: mr.series(h5, v["name"]) for v in variants}
    thr = rep["campaign"]["error_threshold"]
    written = []

    # Error against time (top); the rollouts beside their baselines (bottom, when there are any).
    rollouts = [v for v in variants if isinstance(v.get("rollout"), dict) and v["rollout"].get("series")]
    if rollouts:
        fig, (ax, axb) = plt.subplots(2, 1, figsize=(8, 9))
    else:
        fig, ax = plt.subplots(figsize=(8, 5))
    floor = 1e-17
    for v in variants:
        d = data[v["name"]]
        if d["time"].size == 0:
            continue
        style = STYLE.get(v["kind"], "-")
        lab = v["name"] + (" (failed)" if v["status"] == "failed" else "")
        ax.semilogy(d["time"], positive(d["rel_l2"], floor), style, marker="o", ms=3, label=lab)
    ax.axhline(thr, color="r", lw=0.8, ls=":", label=f"threshold {thr:g}")
    ax.set_xlabel("time")
    ax.set_ylabel("relative L2 error vs reference (0 plotted at 1e-17)")
    ax.set_title(f"{rep['campaign']['physics']}: error against time")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if rollouts:
        dt = _dt(data, variants)
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, v in enumerate(rollouts):
            ser, col = v["rollout"]["series"], colors[i % len(colors)]
            t = np.asarray(ser["step"], dtype=float) * dt
            axb.semilogy(t, positive(_num(ser["surrogate"]), floor), "-", color=col, marker="o", ms=3,
                         label=f"{v['name']} ({v['rollout']['window']})")
            for key, ls in (("zero", ":"), ("persistence", "--"), ("linear", "-.")):
                axb.semilogy(t, positive(_num(ser[key]), floor), ls, color=col, lw=0.8, alpha=0.7)
        axb.plot([], [], "k:", lw=0.8, label="zero field")
        axb.plot([], [], "k--", lw=0.8, label="persistence")
        axb.plot([], [], "k-.", lw=0.8, label="linear extrapolation")
        axb.set_xlabel("time")
        axb.set_ylabel("relative L2 error vs reference")
        axb.set_title("surrogate rollouts (solid) beside the free baselines from the same hand-over state")
        axb.grid(True, which="both", alpha=0.3)
        axb.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    written.append(os.path.join(out, "error_vs_time.png"))
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    # One panel per rollout: error against predictions, beside the baselines.
    if rollouts:
        ncol = 2 if len(rollouts) > 1 else 1
        nrow = (len(rollouts) + ncol - 1) // ncol
        fig, axes = plt.subplots(nrow, ncol, figsize=(6.5 * ncol, 3.6 * nrow), squeeze=False)
        for i, v in enumerate(rollouts):
            ax = axes[i // ncol, i % ncol]
            ro, ser = v["rollout"], v["rollout"]["series"]
            steps = np.asarray(ser["step"], dtype=float) - ro["handover_step"]
            x, xlab = (steps / ro["stride"], "predictions since the hand-over") if ro.get("stride") else \
                (steps, "physics steps since the hand-over")
            # From the first prediction on (after 0 predictions persistence and the surrogate are
            # exact, which a log axis cannot show).
            keep = steps > 0
            x = x[keep]
            ser = {k: [y for y, m in zip(ser[k], keep) if m] for k in ("surrogate", "zero", "persistence", "linear")}
            ax.semilogy(x, positive(_num(ser["surrogate"]), floor), "k-", marker="o", ms=3, label="surrogate")
            ax.semilogy(x, positive(_num(ser["zero"]), floor), ":", label="zero field")
            ax.semilogy(x, positive(_num(ser["persistence"]), floor), "--", label="persistence")
            ax.semilogy(x, positive(_num(ser["linear"]), floor), "-.", label="linear extrapolation")
            # every baseline that ends below the surrogate (on a slowly changing flow linear
            # extrapolation can, inputs/cfd_cavity_surrogate.yaml's held-out window)
            names = {"zero": "zero field", "persistence": "persistence", "linear": "linear extrapolation"}
            beaten = [b for b in ro.get("beaten_at_end_by", []) if b in names]
            title = f"{v['name']} ({ro['window']}, hand-over at step {ro['handover_step']})"
            if beaten:
                title += "\nLOSES to " + " and ".join(names[b] for b in beaten)
            ax.set_title(title, fontsize=9, color="r" if beaten else "k")
            ax.set_xlabel(xlab)
            ax.set_ylabel("relative L2 error")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        for j in range(len(rollouts), nrow * ncol):
            axes[j // ncol, j % ncol].axis("off")
        fig.tight_layout()
        written.append(os.path.join(out, "rollouts.png"))
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)

    # Energy drift.
    fig, ax = plt.subplots(figsize=(8, 5))
    for v in variants:
        d = data[v["name"]]
        if d["time"].size:
            ax.plot(d["time"], d["energy_drift"], STYLE.get(v["kind"], "-"), marker=".", label=v["name"])
    ax.set_xlabel("time")
    ax.set_ylabel("(E(t) - E(0)) / |E(0)|")
    ax.set_title("energy drift")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    written.append(os.path.join(out, "energy_drift.png"))
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    # Trade-off: speed-up against error.
    fig, ax = plt.subplots(figsize=(7, 5))
    points = []
    for v in variants:
        sp = v["speed"]["speedup_vs_reference"]
        err = v["accuracy"]["final_rel_l2"]
        if sp is None or err is None:
            continue
        x = err if err > 0 else floor
        ax.scatter([x], [sp], s=40, marker={"reference": "s", "physics": "o", "surrogate": "^", "hybrid": "D"}
                   .get(v["kind"], "o"))
        points.append((v["name"], x, sp))
    ax.set_xscale("log")
    # Labels of points that lie close together (the surrogates: similar error, similar cost) are
    # stacked upwards instead of printed over each other.
    fig.canvas.draw()
    placed = []
    for name, x, sp in sorted(points, key=lambda p: p[2]):
        px, py = ax.transData.transform((x, sp))
        dy = 4.0
        while any(abs(px - qx) < 90 and abs(py + dy - qy) < 12 for qx, qy in placed):
            dy += 12.0
        placed.append((px, py + dy))
        ax.annotate(name, (x, sp), textcoords="offset pixels", xytext=(5, dy), fontsize=8,
                    arrowprops=dict(arrowstyle="-", lw=0.4, color="0.5") if dy > 4.0 else None)
    ax.axvline(thr, color="r", lw=0.8, ls=":")
    ax.axhline(1.0, color="k", lw=0.5)
    ax.set_xlabel("final relative L2 error (reference plotted at 1e-17)")
    ax.set_ylabel(f"speed-up vs {rep['campaign']['reference']} reference (time per step)")
    ax.set_title("what precision buys and costs")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    written.append(os.path.join(out, "tradeoff.png"))
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    # Receivers.
    ref = data[variants[0]["name"]]
    nrec = ref["traces"].shape[1] if ref["traces"].ndim == 2 else 0
    if nrec > 0:
        dt = ref["time"][-1] / ref["step"][-1] if ref["step"].size and ref["step"][-1] > 0 else 1.0
        fig, axes = plt.subplots(nrec, 1, figsize=(9, 2.2 * nrec + 0.8), sharex=True, squeeze=False)
        names = ref["receiver_names"] or [f"r{i}" for i in range(nrec)]
        for v in variants:
            d = data[v["name"]]
            if d["traces"].size == 0:
                continue
            t = np.arange(d["traces"].shape[0]) * d["trace_stride"] * dt
            for r in range(nrec):
                axes[r, 0].plot(t, d["traces"][:, r], "k-" if v["kind"] == "reference" else STYLE.get(v["kind"], "-"),
                                lw=1.6 if v["kind"] == "reference" else 0.9, label=v["name"])
        for r in range(nrec):
            axes[r, 0].set_ylabel(names[r] if r < len(names) else f"r{r}")
            axes[r, 0].grid(True, alpha=0.3)
        axes[0, 0].legend(fontsize=7, ncol=3)
        axes[-1, 0].set_xlabel("time")
        fig.suptitle("receiver traces")
        fig.tight_layout()
        written.append(os.path.join(out, "receivers.png"))
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)

    # Snapshot panel.
    snaps = mr.snapshots(h5)
    refname = variants[0]["name"]
    others = [v["name"] for v in variants[1:] if v["name"] in snaps]
    if refname in snaps and others:
        def plane(a):
            return a[a.shape[0] // 2] if a.ndim == 3 else a

        r = plane(snaps[refname])
        vmax = float(np.max(np.abs(r))) or 1.0
        fig, axes = plt.subplots(len(others), 3, figsize=(11, 3.2 * len(others)), squeeze=False)
        for i, name in enumerate(others):
            s = plane(snaps[name])
            diff = s - r
            dmax = float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 1.0
            for j, (img, title, lim) in enumerate([(r, refname, vmax), (s, name, vmax),
                                                   (diff, f"{name} - {refname}", dmax or 1.0)]):
                im = axes[i, j].imshow(img, origin="upper", cmap="seismic", vmin=-lim, vmax=lim, aspect="auto")
                axes[i, j].set_title(title, fontsize=9)
                fig.colorbar(im, ax=axes[i, j], fraction=0.046)
        fig.suptitle("final primary field (z middle plane in 3D)")
        fig.tight_layout()
        written.append(os.path.join(out, "snapshots.png"))
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)

    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
