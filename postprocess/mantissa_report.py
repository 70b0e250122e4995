"""Reading a mantissa run directory (report.json + report.h5), shared by plot_report.py and
compare.py. Schema: docs/report-schema.md."""
import json
import os
import sys

SCHEMA_VERSION = 3
# Version 1 reports read the same way: version 2 added keys (speed.timing, speed.bound,
# subnormals, context.bounds) and made time_per_step_s the median of timed stretches; version 3
# interleaved the stretches and placed surrogates against the timed medians (same keys read here).
READABLE_VERSIONS = (1, 2, 3)


class ReportError(Exception):
    pass


def load(run_dir):
    """Returns (report dict, path of report.h5 or None). Raises ReportError with a remedy."""
    path = os.path.join(run_dir, "report.json")
    if not os.path.isfile(path):
        raise ReportError(f"{run_dir}: no report.json; is this a finished mantissa run directory? "
                          f"(a stopped run has checkpoints/ only: continue it with `mantissa run DECK --resume`)")
    with open(path) as f:
        rep = json.load(f)
    if rep.get("schema") != "mantissa-report":
        raise ReportError(f"{path}: not a mantissa report (schema = {rep.get('schema')!r})")
    if rep.get("schema_version") not in READABLE_VERSIONS:
        raise ReportError(f"{path}: report schema version {rep.get('schema_version')}, this script reads "
                          f"{', '.join(map(str, READABLE_VERSIONS))}; use the postprocess/ of the mantissa that wrote it")
    h5 = os.path.join(run_dir, "report.h5")
    return rep, (h5 if os.path.isfile(h5) else None)


def series(h5file, name):
    """Time series and traces of one variant from report.h5 (numpy arrays)."""
    import h5py
    import numpy as np
    with h5py.File(h5file, "r") as f:
        g = f["variants"][name]
        out = {k: np.asarray(g[k]) for k in ("step", "time", "rel_l2", "max_error", "energy", "energy_drift")}
        nrec = int(g.attrs["num_receivers"])
        tr = np.asarray(g["traces"])
        out["traces"] = tr.reshape(-1, nrec) if nrec > 0 and tr.size else np.zeros((0, 0))
        out["trace_stride"] = int(g.attrs["trace_stride"])
        names = f.attrs["receiver_names"]
        names = names.decode() if isinstance(names, bytes) else str(names)
        out["receiver_names"] = [s for s in names.split("\n") if s]
    return out


def snapshots(h5file):
    import h5py
    import numpy as np
    with h5py.File(h5file, "r") as f:
        if "snapshots" not in f:
            return {}
        return {k: np.asarray(v) for k, v in f["snapshots"].items()}


def label(rep, run_dir):
    c = rep.get("context", {})
    cpu = c.get("cpu") or c.get("backend", "?")
    return f"{os.path.basename(os.path.normpath(run_dir))} ({c.get('hostname', '?')}, {cpu}, {c.get('ranks', '?')} ranks)"


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)
