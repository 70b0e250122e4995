#!/usr/bin/env python3
"""Validates mantissa XDMF sidecars: the XML parses, every Grid has a CoRectMesh topology whose
dimensions match every attribute, and every HDF DataItem names an existing dataset with the
stated dimensions and precision. With --values, checks field values against
value = x + 100 y + 10000 z + 1000000 * (index of the field in the Grid) at global (x, y, z).
Usage: check_xdmf.py [--values] file.xmf ... ; prints OK or the first problem and exits 1."""
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np


def fail(msg):
    print("XDMF check failed: " + msg)
    sys.exit(1)


def check_grid(grid, base, values):
    topo = grid.find("Topology")
    if topo is None or topo.get("TopologyType") not in ("3DCoRectMesh", "2DCoRectMesh"):
        fail("grid %s has no CoRectMesh topology" % grid.get("Name"))
    dims = [int(v) for v in topo.get("Dimensions").split()]
    ndim = int(topo.get("TopologyType")[0])
    if len(dims) != ndim:
        fail("topology dimensions %s do not have %d entries" % (dims, ndim))
    geo = grid.find("Geometry")
    want = "ORIGIN_DXDYDZ" if ndim == 3 else "ORIGIN_DXDY"
    if geo is None or geo.get("GeometryType") != want:
        fail("geometry is not %s" % want)
    items = {d.get("Name"): [float(v) for v in d.text.split()] for d in geo.findall("DataItem")}
    if len(items.get("Origin", [])) != ndim or len(items.get("Spacing", [])) != ndim:
        fail("origin/spacing do not have %d entries" % ndim)
    if grid.find("Time") is None:
        fail("grid %s has no Time" % grid.get("Name"))
    attrs = grid.findall("Attribute")
    if not attrs:
        fail("grid %s has no attributes" % grid.get("Name"))
    for index, attr in enumerate(attrs):
        item = attr.find("DataItem")
        if item.get("Format") != "HDF":
            fail("attribute %s is not stored in HDF" % attr.get("Name"))
        adims = [int(v) for v in item.get("Dimensions").split()]
        if adims != dims:
            fail("attribute %s has dimensions %s, topology %s" % (attr.get("Name"), adims, dims))
        fname, path = item.text.strip().split(":", 1)
        full = os.path.join(base, fname)
        if not os.path.exists(full):
            fail("%s does not exist" % full)
        with h5py.File(full, "r") as f:
            if path not in f:
                fail("%s has no dataset %s" % (full, path))
            d = f[path]
            if list(d.shape) != adims:
                fail("%s:%s has shape %s, XDMF says %s" % (full, path, d.shape, adims))
            if d.dtype.itemsize != int(item.get("Precision")) or d.dtype.kind != "f":
                fail("%s:%s is %s, XDMF says Float %s" % (full, path, d.dtype, item.get("Precision")))
            if values:
                data = d[...]
                if ndim == 2:
                    data = data[np.newaxis]
                z, y, x = np.meshgrid(*[np.arange(n) for n in data.shape], indexing="ij")
                expect = x + 100.0 * y + 10000.0 * z + 1000000.0 * index
                if not np.array_equal(data.astype(np.float64), expect):
                    fail("%s:%s does not hold the expected values" % (full, path))


def main(argv):
    values = "--values" in argv
    files = [a for a in argv if a != "--values"]
    for xmf in files:
        root = ET.parse(xmf).getroot()
        if root.tag != "Xdmf":
            fail("%s: root is %s" % (xmf, root.tag))
        domain = root.find("Domain")
        top = domain.find("Grid")
        grids = top.findall("Grid") if top.get("GridType") == "Collection" else [top]
        if top.get("GridType") == "Collection" and top.get("CollectionType") != "Temporal":
            fail("%s: collection is not temporal" % xmf)
        times = [float(g.find("Time").get("Value")) for g in grids if g.find("Time") is not None]
        if times != sorted(times):
            fail("%s: times are not increasing" % xmf)
        for g in grids:
            check_grid(g, os.path.dirname(os.path.abspath(xmf)), values)
        print("OK %s: %d grid(s)" % (xmf, len(grids)))


if __name__ == "__main__":
    main(sys.argv[1:])
