#!/usr/bin/env python3
"""compare.py RUN_A RUN_B ... [-o OUT_DIR]: the same campaign on different machines, side by side.

Prints a Markdown table (time per step, speed-up against each run's own reference, final error)
per variant and run, writes it to OUT_DIR/compare.md, and draws bar charts:
compare_time_per_step.png, compare_speedup.png, compare_error.png.
Runs are matched by variant name; a variant missing from a run shows as n/a.
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


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out", default=".", help="output directory (default: current)")
    a = ap.parse_args(argv)
    reports = []
    for r in a.runs:
        try:
            rep, _ = mr.load(r)
        except mr.ReportError as e:
            mr.fail(str(e))
        reports.append((r, rep))
    hashes = {rep["context"]["deck"]["hash"] for _, rep in reports}
    names = []
    for _, rep in reports:
        for v in rep["variants"]:
            if v["name"] not in names:
                names.append(v["name"])
    labels = [mr.label(rep, r) for r, rep in reports]
    short = [os.path.basename(os.path.normpath(r)) for r, _ in reports]
    # Make run labels unique even when directory names repeat (runs/quickstart on two machines).
    if len(set(short)) < len(short):
        short = [f"{s} [{i}]" for i, s in enumerate(short)]

    def get(rep, name, section, key):
        for v in rep["variants"]:
            if v["name"] == name:
                return v[section][key]
        return None

    lines = ["# mantissa: runs compared", ""]
    for s, l in zip(short, labels):
        lines.append(f"- **{s}**: {l}")
    if len(hashes) > 1:
        lines += ["", "Warning: the runs used different decks (deck hashes differ); numbers may not be comparable."]
    lines += ["", "| variant | " + " | ".join(f"{s}: ms/step | {s}: speed-up | {s}: rel. L2" for s in short) + " |",
              "|---|" + "---:|---:|---:|" * len(short)]
    table = {}
    for n in names:
        row = []
        for (_, rep), s in zip(reports, short):
            t = get(rep, n, "speed", "time_per_step_s")
            sp = get(rep, n, "speed", "speedup_vs_reference")
            e = get(rep, n, "accuracy", "final_rel_l2")
            table[(n, s)] = (t, sp, e)
            row += [fmt(None if t is None else t * 1e3, ".4g"), fmt(sp, ".3g"), fmt(e, ".3g")]
        lines.append(f"| {n} | " + " | ".join(row) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "compare.md"), "w") as f:
        f.write(text)

    x = np.arange(len(names))
    width = 0.8 / len(short)
    for idx, (fname, ylabel, log) in enumerate([("compare_time_per_step.png", "time per step [ms]", True),
                                                ("compare_speedup.png", "speed-up vs own reference", False),
                                                ("compare_error.png", "final relative L2 error", True)]):
        fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(names) + 2), 4.5))
        for i, s in enumerate(short):
            vals = []
            for n in names:
                v = table[(n, s)][idx]
                if v is not None and idx == 0:
                    v = v * 1e3
                vals.append(np.nan if v is None or (log and v <= 0) else v)
            ax.bar(x + (i - (len(short) - 1) / 2) * width, vals, width, label=s)
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        if log:
            ax.set_yscale("log")
        ax.set_ylabel(ylabel + (" (zero not shown)" if idx == 2 else ""))
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        p = os.path.join(a.out, fname)
        fig.savefig(p, dpi=110)
        plt.close(fig)
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
