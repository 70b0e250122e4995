#!/usr/bin/env python3
"""PyTorch oracle for mantissa's transformer surrogate.

Runs the C++ driver, which writes (per compute precision, plain and shifted windows) the model
configuration, weights, input fields, targets, outputs, loss and parameter gradients. This script
rebuilds the same model in PyTorch -- written independently: attention over all tokens with a
mask built from window ids instead of mantissa's window lists -- loads the weights with h5py and
compares outputs and gradients (norm-wise relative errors). Each comparison runs in 2D (patches
of p^2 cells, windows of w^2 patches) and in 3D (p^3 cells, w^3 patches, a third position axis).

Bounds:
  fp64: 1e-10 and fp32: 1e-5 (the issue's bounds; both sides round at their unit roundoff,
        1.1e-16 and 6e-8, through a few dozen dependent operations).
  bf16: mantissa's error against the fp64 PyTorch model must be at most 4x the error of
        PyTorch's own bf16 autocast on the same weights and inputs (measured here, in the same
        run): both round the matmul operands to bf16 (u = 2^-8) with fp32 accumulation; the
        factor 4 allows for the different placement of roundings (mantissa also rounds the
        attention operands) without hiding a real error, which is O(1).
  fp16: fp16 has 3 more significand bits than bf16 (u = 2^-11), so the same argument gives
        the bf16 bound divided by 8; PyTorch 1.13 has no fp16 autocast on CPU to measure.
"""
import os
import subprocess
import sys

import h5py
import numpy as np
import torch

torch.set_num_threads(1)


def rel(a, b, floor=0.0):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), floor, 1e-300))


# The model's configuration attributes in a weights file (surrogate-trained.h5).
WEIGHT_KEYS = ("dim", "in_channels", "out_channels", "patch", "embed", "heads", "layers", "mlp_hidden",
               "window", "shifted", "learned_positions", "no_positions", "global_patches_x",
               "global_patches_y", "global_patches_z")


def predicted_change(weights, state, statics=()):
    """The change of the state channels over one prediction of the 2D model in a weights file,
    in fp64 PyTorch: `state` (a list of (ny, nx) arrays, divided by channel 0's RMS under
    amplitude scaling) and `statics` (inputs after them, not scaled), normalised as the file
    says; the change is returned in the state's units."""
    f = h5py.File(weights, "r")
    g = f["surrogate"]
    cfg = {k: int(g.attrs[k]) for k in WEIGHT_KEYS}
    model = Oracle(cfg, torch.float64)
    params = model.named_for_mantissa()
    assert set(params) == set(g["weights"].keys()), set(params) ^ set(g["weights"].keys())
    with torch.no_grad():
        for name, prm in params.items():
            prm.copy_(torch.as_tensor(np.asarray(g["weights"][name], dtype=np.float64)))
    nz = {k: np.asarray(g["normalization"][k], dtype=np.float64) for k in ("in_mean", "in_std", "out_mean", "out_std")}
    amplitude = int(g.attrs.get("scaling", 0)) == 1
    a = float(np.sqrt(np.mean(state[0] * state[0]))) if amplitude else 1.0
    x = np.stack([c / a for c in state] + list(statics))[None]
    x = (x - nz["in_mean"][None, :, None, None]) / nz["in_std"][None, :, None, None]
    with torch.no_grad():
        out = model(torch.as_tensor(x), [(0, 0)]).numpy()[0]
    return (out * nz["out_std"][:, None, None] + nz["out_mean"][:, None, None]) * a


def finish(failures):
    """A check script's end: its failures, one per line, and exit 1; or "ok"."""
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)
    print("ok")


class Oracle(torch.nn.Module):
    def __init__(self, cfg, dtype):
        super().__init__()
        self.cfg = cfg
        self.dtype = dtype
        D, p, dim = cfg["embed"], cfg["patch"], cfg["dim"]
        fin, fout = cfg["in_channels"] * p**dim, cfg["out_channels"] * p**dim
        lin = lambda i, o: torch.nn.Linear(i, o, dtype=dtype)
        self.embed = lin(fin, D)
        if cfg["learned_positions"]:
            gx, gy = cfg["global_patches_x"], cfg["global_patches_y"]
            gz = cfg["global_patches_z"] if dim == 3 else 1
            self.pos_table = torch.nn.Parameter(torch.zeros(gx * gy * gz, D, dtype=dtype))
        blocks = []
        for _ in range(cfg["layers"]):
            b = torch.nn.Module()
            b.ln1 = torch.nn.LayerNorm(D, eps=1e-5, dtype=dtype)
            b.qkv = lin(D, 3 * D)
            b.proj = lin(D, D)
            b.ln2 = torch.nn.LayerNorm(D, eps=1e-5, dtype=dtype)
            b.fc1 = lin(D, cfg["mlp_hidden"])
            b.fc2 = lin(cfg["mlp_hidden"], D)
            blocks.append(b)
        self.blocks = torch.nn.ModuleList(blocks)
        self.head = lin(D, fout)

    def named_for_mantissa(self):
        out = {}
        for name, prm in self.named_parameters():
            out["pos.table" if name == "pos_table" else name] = prm
        return out

    def tokens(self, fields):
        # 2D: fields [B, C, H, W] -> [B * Py * Px, C * p * p], features (c, dy, dx);
        # 3D: fields [B, C, Z, H, W] -> [B * Pz * Py * Px, C * p^3], features (c, dz, dy, dx);
        # tokens row-major (z, y, x) tile by tile.
        p = self.cfg["patch"]
        if fields.dim() == 4:
            B, C, H, W = fields.shape
            x = fields.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5)
            return x.reshape(B * (H // p) * (W // p), C * p * p)
        B, C, Z, H, W = fields.shape
        x = fields.reshape(B, C, Z // p, p, H // p, p, W // p, p).permute(0, 2, 4, 6, 1, 3, 5, 7)
        return x.reshape(B * (Z // p) * (H // p) * (W // p), C * p**3)

    def untokens(self, t, B, C, shape):
        p = self.cfg["patch"]
        if len(shape) == 2:
            H, W = shape
            x = t.reshape(B, H // p, W // p, C, p, p).permute(0, 3, 1, 4, 2, 5)
            return x.reshape(B, C, H, W)
        Z, H, W = shape
        x = t.reshape(B, Z // p, H // p, W // p, C, p, p, p).permute(0, 4, 1, 5, 2, 6, 3, 7)
        return x.reshape(B, C, Z, H, W)

    def coords(self, B, Pz, Py, Px, offsets):
        gx, gy, gz, tile = [], [], [], []
        for b in range(B):
            for z in range(Pz):
                for y in range(Py):
                    for x in range(Px):
                        gx.append(offsets[b][0] + x)
                        gy.append(offsets[b][1] + y)
                        gz.append(offsets[b][2] + z if len(offsets[b]) > 2 else 0)
                        tile.append(b)
        return np.array(gx), np.array(gy), np.array(gz), np.array(tile)

    def forward(self, fields, offsets):
        cfg = self.cfg
        B, C = fields.shape[:2]
        space = tuple(fields.shape[2:])
        dim = len(space)
        p, D, heads, w = cfg["patch"], cfg["embed"], cfg["heads"], cfg["window"]
        Pz, Py, Px = (space[0] // p if dim == 3 else 1), space[-2] // p, space[-1] // p
        gx, gy, gz, tile = self.coords(B, Pz, Py, Px, offsets)
        # Under bf16 autocast the matmul outputs are bf16; the residual stream and the layer norms
        # stay in the model's dtype (what autocast does on GPUs; CPU autocast in 1.13 does not
        # cast layer_norm itself).
        up = lambda t: t.to(self.dtype)
        x = up(self.embed(self.tokens(fields)))
        if cfg["learned_positions"]:
            row = (gz * cfg["global_patches_y"] + gy) * cfg["global_patches_x"] + gx
            x = x + self.pos_table[torch.as_tensor(row)]
        elif cfg.get("no_positions", 0):
            pass  # surrogate.position: none
        else:
            dg = D // dim
            pe = torch.zeros(x.shape, dtype=x.dtype)
            for a, g in enumerate((gx, gy, gz)[:dim]):
                for c in range(dg):
                    i = c // 2
                    freq = np.exp(-(2.0 * i) / dg * np.log(10000.0))
                    arg = torch.as_tensor(g, dtype=x.dtype) * freq
                    pe[:, a * dg + c] = torch.sin(arg) if c % 2 == 0 else torch.cos(arg)
            x = x + pe
        N = x.shape[0]
        dh = D // heads
        for l, b in enumerate(self.blocks):
            s = w // 2 if (cfg["shifted"] and l % 2 == 1) else 0
            key = np.stack([tile] + [np.floor_divide(g + s, w) for g in (gx, gy, gz)[:dim]], axis=1)
            same = torch.as_tensor((key[:, None, :] == key[None, :, :]).all(axis=2))
            h = b.ln1(up(x))
            qkv = b.qkv(h).reshape(N, 3, heads, dh).permute(1, 2, 0, 3)  # [3, heads, N, dh]
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = up(q @ k.transpose(-1, -2)) / np.sqrt(dh)
            scores = scores.masked_fill(~same, float("-inf"))
            att = up(torch.softmax(scores, dim=-1) @ v)  # [heads, N, dh]
            x = x + up(b.proj(att.permute(1, 0, 2).reshape(N, D)))
            x = x + up(b.fc2(torch.nn.functional.gelu(b.fc1(b.ln2(x)))))
        return self.untokens(self.head(x), B, cfg["out_channels"], space)


def load(path, dtype):
    f = h5py.File(path, "r")
    g = f["surrogate"]
    cfg = {k: int(g.attrs[k]) for k in g.attrs if k not in ("master_precision", "description")}
    model = Oracle(cfg, dtype)
    params = model.named_for_mantissa()
    assert set(params) == set(g["weights"].keys()), (set(params) ^ set(g["weights"].keys()))
    with torch.no_grad():
        for name, prm in params.items():
            prm.copy_(torch.as_tensor(np.asarray(g["weights"][name], dtype=np.float64)))
    o = f["oracle"]
    data = {k: np.asarray(o[k]) for k in ("fields", "target", "output", "loss", "tile_offsets")}
    data["grads"] = {k: np.asarray(o["grads"][k]) for k in o["grads"]}
    data["offsets"] = [tuple(int(v) for v in r) for r in data["tile_offsets"]]
    return model, data, params


def run_torch(model, data, dtype, autocast=False):
    model.zero_grad()
    fields = torch.as_tensor(data["fields"], dtype=dtype)
    target = torch.as_tensor(data["target"], dtype=dtype)
    if autocast:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(fields, data["offsets"])
        out = out.to(dtype)
    else:
        out = model(fields, data["offsets"])
    loss = torch.nn.functional.mse_loss(out, target)
    loss.backward()
    grads = {n: p.grad.detach().double().numpy().copy() for n, p in model.named_for_mantissa().items()}
    return out.detach().double().numpy(), float(loss), grads


def errors(data, out, loss, grads):
    scale = max(np.linalg.norm(g) for g in grads.values())
    # A gradient that is zero in exact arithmetic (the key bias: softmax ignores a shift common
    # to a row) is compared relative to the largest gradient norm, not to its own rounding noise.
    g_err = {n: rel(data["grads"][n], grads[n], 1e-3 * scale) for n in grads}
    return rel(data["output"], out), abs(data["loss"][0] - loss) / abs(loss), g_err


def main():
    driver, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    subprocess.run([driver, outdir], check=True)
    failures = []
    for windows in ("plain", "shifted", "3d_plain", "3d_shifted", "nopos"):
        for prec, bound in (("fp64", 1e-10), ("fp32", 1e-5)):
            dtype = torch.float64 if prec == "fp64" else torch.float32
            model, data, _ = load(f"{outdir}/{prec}_{windows}.h5", dtype)
            out, loss, grads = run_torch(model, data, dtype)
            eo, el, eg = errors(data, out, loss, grads)
            worst = max(eg, key=eg.get)
            print(f"{prec:5s} {windows:7s}: output {eo:.2e}, loss {el:.2e}, worst gradient {worst} {eg[worst]:.2e}"
                  f" (bound {bound:g})")
            if max(eo, el, eg[worst]) > bound:
                failures.append(f"{prec} {windows}")
        # Low precision: against the fp64 PyTorch model on the same weights.
        model, data, _ = load(f"{outdir}/bf16_{windows}.h5", torch.float64)
        out64, loss64, grads64 = run_torch(model, data, torch.float64)
        model32, _, _ = load(f"{outdir}/bf16_{windows}.h5", torch.float32)
        out_ac, loss_ac, grads_ac = run_torch(model32, data, torch.float32, autocast=True)
        ac_o = rel(out_ac, out64)
        scale = max(np.linalg.norm(g) for g in grads64.values())
        ac_g = max(rel(grads_ac[n], grads64[n], 1e-3 * scale) for n in grads64)
        bf16_bound_o, bf16_bound_g = 4 * ac_o, 4 * ac_g
        for prec, div in (("bf16", 1.0), ("fp16", 8.0)):
            model, data, _ = load(f"{outdir}/{prec}_{windows}.h5", torch.float64)
            out, loss, grads = run_torch(model, data, torch.float64)
            eo, el, eg = errors(data, out, loss, grads)
            worst = max(eg, key=eg.get)
            bo, bg = bf16_bound_o / div, bf16_bound_g / div
            print(f"{prec:5s} {windows:7s}: output {eo:.2e} (bound {bo:.2e}), worst gradient {worst} {eg[worst]:.2e}"
                  f" (bound {bg:.2e}); PyTorch bf16 autocast: output {ac_o:.2e}, gradient {ac_g:.2e}")
            if eo > bo or eg[worst] > bg:
                failures.append(f"{prec} {windows}")
    if failures:
        print("FAILED:", ", ".join(failures))
        sys.exit(1)
    print("all comparisons within bounds")


if __name__ == "__main__":
    main()
