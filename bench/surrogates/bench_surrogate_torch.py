#!/usr/bin/env python3
"""PyTorch peer of bench_surrogate: the identical model (pre-norm ViT blocks, attention in
non-overlapping windows by the usual Swin window partition, no final norm), same sizes, same
threads. Prints one JSON line: seconds per training step and per inference (best of reps), fp32
and bf16 (CPU autocast)."""
import json
import sys
import time

import torch

args = json.loads(sys.argv[1])
torch.set_num_threads(args["threads"])
torch.manual_seed(0)
D, H, L, w, p, n, B = (args[k] for k in ("embed", "heads", "layers", "window", "patch", "n", "batch"))
hidden, cin, cout = args["mlp_hidden"], args["in_channels"], args["out_channels"]
P = n // p


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.qkv, self.proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
        self.fc1, self.fc2 = torch.nn.Linear(D, hidden), torch.nn.Linear(hidden, D)

    def forward(self, x):  # x [B, P, P, D]
        b = x.shape[0]
        h = self.ln1(x).reshape(b, P // w, w, P // w, w, D).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, D)
        qkv = self.qkv(h).reshape(h.shape[0], w * w, 3, H, D // H).permute(2, 0, 3, 1, 4)
        att = torch.softmax((qkv[0] @ qkv[1].transpose(-1, -2)) / (D // H) ** 0.5, dim=-1) @ qkv[2]
        att = att.transpose(1, 2).reshape(-1, w * w, D)
        att = self.proj(att).reshape(b, P // w, P // w, w, w, D).permute(0, 1, 3, 2, 4, 5).reshape(b, P, P, D)
        x = x + att
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(cin * p * p, D)
        self.pos = torch.nn.Parameter(torch.zeros(P, P, D))
        self.blocks = torch.nn.ModuleList([Block() for _ in range(L)])
        self.head = torch.nn.Linear(D, cout * p * p)

    def forward(self, f):
        b = f.shape[0]
        t = f.reshape(b, cin, P, p, P, p).permute(0, 2, 4, 1, 3, 5).reshape(b, P, P, cin * p * p)
        x = self.embed(t) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(B, cin, n, n)
y = torch.randn(B, P, P, cout * p * p)
res = {}
for name, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
    def fwd(inp):
        if dtype is None:
            return model(inp)
        with torch.autocast("cpu", dtype=dtype):
            return model(inp).float()

    def train_step():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(fwd(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    # Best of reps after a warm-up, as bench_surrogate times itself.
    # Process CPU time too: on one thread it is not inflated by other load on the machine.
    def best_of(f, key):
        f()
        wall = cpu = float("inf")
        for _ in range(args["reps"]):
            t0, c0 = time.perf_counter(), time.process_time()
            f()
            wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
        res[name + "_" + key + "_s"], res[name + "_" + key + "_cpu"] = wall, cpu

    best_of(train_step, "train")
    with torch.no_grad():
        best_of(lambda: fwd(x[:1]), "infer")
print(json.dumps(res))
