#!/usr/bin/python3
"""Runs postprocess/plot_report.py or compare.py on real run directories and checks that every
promised file is written, is a PNG, and is not blank; and that a missing report gives a clear
error, not a traceback."""
import os
import subprocess
import sys

PNG = b"\x89PNG\r\n\x1a\n"


def check_png(path):
    assert os.path.isfile(path), f"{path} not written"
    with open(path, "rb") as f:
        head = f.read(8)
    assert head == PNG, f"{path} is not a PNG"
    import matplotlib.image as mpimg
    import numpy as np
    img = mpimg.imread(path)
    # A figure with axes and curves has many distinct colours; a blank canvas has one.
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 10, f"{path} looks blank"


def run(args):
    r = subprocess.run([sys.executable] + args, capture_output=True, text=True)
    print(r.stdout, r.stderr)
    return r


def main():
    mode, pp = sys.argv[1], sys.argv[2]
    if mode == "plot":
        run_dir, out = sys.argv[3], sys.argv[4]
        r = run([os.path.join(pp, "plot_report.py"), run_dir, "-o", out])
        assert r.returncode == 0, "plot_report.py failed"
        for f in ("error_vs_time.png", "energy_drift.png", "tradeoff.png", "receivers.png", "snapshots.png"):
            check_png(os.path.join(out, f))
        import json
        rep = json.load(open(os.path.join(run_dir, "report.json")))
        if any(isinstance(v.get("rollout"), dict) for v in rep["variants"]):
            check_png(os.path.join(out, "rollouts.png"))  # the rollouts beside their baselines
        bad = run([os.path.join(pp, "plot_report.py"), out])  # a directory without a report
        assert bad.returncode != 0 and "report.json" in bad.stderr and "Traceback" not in bad.stderr
    else:
        a, b, out = sys.argv[3], sys.argv[4], sys.argv[5]
        r = run([os.path.join(pp, "compare.py"), a, b, "-o", out])
        assert r.returncode == 0, "compare.py failed"
        for f in ("compare_time_per_step.png", "compare_speedup.png", "compare_error.png"):
            check_png(os.path.join(out, f))
        text = open(os.path.join(out, "compare.md")).read()
        assert "| reference |" in text and "speed-up" in text
    print("ok")


if __name__ == "__main__":
    main()
