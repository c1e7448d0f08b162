#!/usr/bin/env python3
"""train_kda.py: a small KDA language model trained with tile_la.chunk_kda and with FLA's; with
--op gdn, the same model with Gated DeltaNet layers (tile_la.chunk_gated_delta_rule).

A two-layer model (token embedding; per layer RMSNorm, a KDA block with the in-kernel gate
(A_log, dt_bias), beta logits through the in-kernel sigmoid, the in-kernel q/k l2norm, an
output projection, then an MLP; a tied head) learns a fixed synthetic task: each sequence is
drawn from one of TOPICS "topics", each a fixed random subset of SUBSET tokens (overlapping,
so one token says little about the topic), tokens uniform within it; the loss counts every
token after the first PERIOD. Chance is ln(VOCAB) = 4.16; a model that infers the topic from
the context held in its state approaches ln(SUBSET) = 2.48. Every run starts from the same
initial weights
and sees the same batches, in bf16 activations with fp32 master weights (AdamW).

Runs: FLA; FLA again (its run-to-run difference); FLA from weights perturbed at bf16's
rounding (2^-9 relative: the size of the difference two correct kernels make, so the spread
that rounding alone causes over the run); ours; ours under torch.compile. Prints the loss
curves every 25 steps and the largest differences, and writes them as markdown with --out.

GDN: FLA refuses its GDN backward on Hopper with Triton below 3.7.1 (wrong results there), so
the reference runs are an fp32 torch recurrence of the same layer (autograd through it: slow,
exact to fp32): it, it again from perturbed weights, ours, ours under torch.compile.

usage: PYTHONPATH=python:<fla> python3 bench/train_kda.py [--op kda|gdn] [--steps 300]
                                                          [--out FILE.md]
"""
import argparse
import datetime
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, HEADS, HEAD_DIM, LAYERS = 64, 256, 4, 64, 2
SEQ, BATCH, PERIOD = 256, 16, 32
TOPICS, SUBSET = 16, 12


def torch_gdn(q, k, v, g, beta, use_qk_l2norm_in_kernel, use_gate_in_kernel,
              use_beta_sigmoid_in_kernel, A_log, dt_bias):
    """GDN's recurrence in fp32 torch, token by token (the GDN runs' reference): the in-kernel
    gate -exp(A_log) softplus(g + dt_bias), beta = sigmoid(logits), q and k l2-normalised."""
    with torch.autocast("cuda", enabled=False):
        return _torch_gdn(q, k, v, g, beta, A_log, dt_bias)


def _torch_gdn(q, k, v, g, beta, A_log, dt_bias):
    q, k, v = F.normalize(q.float(), dim=-1), F.normalize(k.float(), dim=-1), v.float()
    gate = -A_log.exp() * F.softplus(g.float() + dt_bias)
    beta = torch.sigmoid(beta.float())
    B, T, H, D = q.shape
    S = q.new_zeros(B, H, D, D)   # [keys, values]
    out = []
    for t in range(T):
        S = S * gate[:, t].exp()[..., None, None]
        kt = k[:, t]
        u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhk,bhkv->bhv", kt, S))
        S = S + kt[..., None] * u[..., None, :]
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, t], S) * D ** -0.5)
    return torch.stack(out, 1).to(torch.bfloat16), None


class KDABlock(nn.Module):
    """A KDA (gdn = False: a gate per key channel) or GDN (one per head) layer."""

    def __init__(self, op, gdn=False):
        super().__init__()
        self.op, self.gdn = op, gdn
        inner = HEADS * HEAD_DIM
        self.q = nn.Linear(DIM, inner, bias=False)
        self.k = nn.Linear(DIM, inner, bias=False)
        self.v = nn.Linear(DIM, inner, bias=False)
        self.g = nn.Linear(DIM, HEADS if gdn else inner, bias=False)
        self.b = nn.Linear(DIM, HEADS, bias=False)
        self.o = nn.Linear(inner, DIM, bias=False)
        self.A_log = nn.Parameter(torch.log(torch.empty(HEADS).uniform_(1, 16)))
        self.dt_bias = nn.Parameter(torch.zeros(HEADS if gdn else HEADS * HEAD_DIM))

    def forward(self, x):
        B, T, _ = x.shape
        shp = (B, T, HEADS, HEAD_DIM)
        q = self.q(x).view(shp).to(torch.bfloat16)
        k = self.k(x).view(shp).to(torch.bfloat16)
        v = self.v(x).view(shp).to(torch.bfloat16)
        g = self.g(x).view(shp[:3] if self.gdn else shp).float()
        beta = self.b(x).float()
        o, _ = self.op(q, k, v, g, beta, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                       use_beta_sigmoid_in_kernel=True, A_log=self.A_log, dt_bias=self.dt_bias)
        return self.o(o.reshape(B, T, -1).to(x.dtype))


class Model(nn.Module):
    def __init__(self, op, gdn=False):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList()
        for _ in range(LAYERS):
            self.layers.append(nn.ModuleDict(dict(
                n1=nn.RMSNorm(DIM), attn=KDABlock(op, gdn), n2=nn.RMSNorm(DIM),
                mlp=nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM)))))
        self.norm = nn.RMSNorm(DIM)
        nn.init.normal_(self.emb.weight, std=0.02)

    def forward(self, tokens):
        x = self.emb(tokens)
        for layer in self.layers:
            x = x + layer["attn"](layer["n1"](x))
            x = x + layer["mlp"](layer["n2"](x))
        return self.norm(x) @ self.emb.weight.t()


def batches(steps, device):
    gen = torch.Generator(device="cpu").manual_seed(1234)
    subsets = torch.stack([torch.randperm(VOCAB, generator=gen)[:SUBSET] for _ in range(TOPICS)])
    out = []
    for _ in range(steps):
        topic = torch.randint(0, TOPICS, (BATCH, 1), generator=gen)
        pick = torch.randint(0, SUBSET, (BATCH, SEQ), generator=gen)
        out.append(subsets[topic.expand(-1, SEQ), pick].to(device))
    return out


def train(op, init, data, compile_model=False, perturb=0.0, gdn=False):
    torch.manual_seed(0)
    model = Model(op, gdn).cuda()
    model.load_state_dict(init)
    if perturb:
        gen = torch.Generator(device="cuda").manual_seed(7)
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 + perturb * torch.randn(p.shape, generator=gen, device="cuda"))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    step_fn = torch.compile(model) if compile_model else model
    losses = []
    t0 = time.time()
    for tokens in data:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = step_fn(tokens[:, :-1])
        loss = F.cross_entropy(logits[:, PERIOD - 1:].float().reshape(-1, VOCAB),
                               tokens[:, PERIOD:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--out")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--op", choices=["kda", "gdn"], default="kda")
    args = ap.parse_args()
    os.environ.setdefault("FLA_DISABLE_BACKEND_DISPATCH", "1")
    import tile_la
    gdn = args.op == "gdn"
    if gdn:
        ours, theirs, name = tile_la.chunk_gated_delta_rule, torch_gdn, "torch fp32"
    else:
        from fla.ops.kda import chunk_kda as theirs
        ours, name = tile_la.chunk_kda, "FLA"
    torch.manual_seed(0)
    init = {k: v.clone() for k, v in Model(ours, gdn).cuda().state_dict().items()}
    data = batches(args.steps, "cuda")
    runs = {}
    runs[name] = train(theirs, init, data, gdn=gdn)
    if not gdn:   # (the torch recurrence repeats itself bitwise)
        runs[f"{name} again"] = train(theirs, init, data, gdn=gdn)
    runs[f"{name}, weights x (1 + 2^-9 noise)"] = train(theirs, init, data, perturb=2.0 ** -9,
                                                        gdn=gdn)
    runs["ours"] = train(ours, init, data, gdn=gdn)
    if not args.no_compile:
        runs["ours, torch.compile"] = train(ours, init, data, compile_model=True, gdn=gdn)
    names = list(runs)
    ref = runs[name][0]
    lines = ["| step | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for s in list(range(0, args.steps, 25)) + [args.steps - 1]:
        lines.append(f"| {s + 1} | " + " | ".join(f"{runs[n][0][s]:.4f}" for n in names) + " |")
    lines.append("")
    lines.append(f"| run | max abs loss difference from {name} | mean over the last 50 steps | "
                 "final loss | seconds |")
    lines.append("|---|---|---|---|---|")
    for n in names:
        ls, sec = runs[n]
        diff = max(abs(a - b) for a, b in zip(ls, ref))
        tail = sum(abs(a - b) for a, b in zip(ls[-50:], ref[-50:])) / 50
        lines.append(f"| {n} | {diff:.4f} | {tail:.4f} | {ls[-1]:.4f} | {sec:.1f} |")
    head = (f"train_kda.py --op {args.op} --steps {args.steps}: {LAYERS} layers, dim {DIM}, "
            f"{HEADS} {args.op.upper()} heads of "
            f"{HEAD_DIM}, batch {BATCH} x {SEQ - 1} tokens; {torch.cuda.get_device_name()}, "
            f"{datetime.date.today()}")
    text = head + "\n\n" + "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
