#!/usr/bin/python3
"""make_reference.py RUN_DIR OUT.h5: the committed reference of the seismic regression.

Copies the fp64 reference variant's shot gathers and energy series (with their attributes) from
RUN_DIR/gathers.h5 into OUT.h5, plus the code version and deck hash that produced them.

Regenerate (only when a physics change is intended, and say so in the commit message):
    build/apps/mantissa/mantissa run tests/regression/seismic/two_shots.yaml \\
        run.output_dir=/tmp/seis run.name=ref --overwrite
    /usr/bin/python3 tests/regression/seismic/make_reference.py /tmp/seis/ref \\
        tests/regression/seismic/reference_gathers.h5
"""
import json
import os
import sys

import h5py


def main():
    run_dir, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(run_dir, "report.json")) as f:
        rep = json.load(f)
    with h5py.File(os.path.join(run_dir, "gathers.h5"), "r") as src, h5py.File(out + ".tmp", "w") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        dst.attrs["made_by"] = "tests/regression/seismic/make_reference.py"
        dst.attrs["mantissa_version"] = json.dumps(rep["mantissa"])
        for group in ("gathers", "energy"):
            src.copy(src[f"variants/reference/{group}"], dst, name=group)
    os.replace(out + ".tmp", out)
    print(f"{out}: reference gathers of {run_dir}")


if __name__ == "__main__":
    main()
