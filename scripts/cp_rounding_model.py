#!/usr/bin/env python3
"""cp_rounding_model.py: how far segmented runs of the chunked GDN/KDA chain sit from the
unsegmented one when every segment start is exact, on the CPU (torch, no GPU).

A model, not the kernels: the chunk's input-only terms (A = (I + L)^-1, W, U, the gated q and k,
AQK) are formed in fp64 and rounded to bf16 once, as chunk_prep / gdn_kkt store them; the chain
keeps the state in f32 and rounds the state-dependent operands for its products (v_new = U -
W S, S = decay S + KG^T v_new: S and v_new; o = QG S + AQK v_new), the rounding points that
depend on the state. --terms 2 (the kernels): S in W S and v_new in the update as bf16 hi + lo
(about 16 bits), o's operands rounded once; --terms 1: every operand rounded once. Slow
gates as la_slow_gates.py draws them (logsigmoid(randn) / 16, head 3 of 4 with g = 0),
l2-normalised q and k, randn h0. Each segment length runs these segment starts:
  perturb  the unsegmented chain's state, each element moved by one f32 ulp (the best any
           scheme that is not bitwise can do)
  maps     S_{j+1} = P_j S_j + B_j, B_j the chain from 0 and P_j the chain of the identity's
           columns with U = 0, both with the chain's roundings, P_j as bf16 hi + lo
  warmup   (GDN) the chain from 0 over the fewest w <= 8 chunks whose summed log2 decay is
           <= -32, else the unsegmented chain's state (the rerun of a failed warmup)
and prints, against the unsegmented chain, rel o and rel ht (||x - y|| / ||y|| over the whole
tensor, and ht per head), and each one's error against the fp64 chain without roundings.

usage: python3 scripts/cp_rounding_model.py [--op gdn|kda] [--T 4096] [--D 128] [--seed 0]
                                            [--segments 1,2,7,16] [--terms 2]
(la_cp_exact.py's choice of criterion rests on it: kernels/README.md, Correctness.)
"""
import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", choices=("gdn", "kda"), default="gdn")
    ap.add_argument("--T", type=int, default=4096, help="tokens, a multiple of 64")
    ap.add_argument("--D", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--segments", default="1,2,7,16")
    ap.add_argument("--terms", type=int, choices=(1, 2), default=2,
                    help="terms of the state-dependent operands on the chain")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    C, HV, D, kda = 64, 4, args.D, args.op == "kda"
    NC = args.T // C
    f64 = torch.float64

    def bf(x):
        return x.bfloat16().float()

    def operand(x):   # a state-dependent operand as the chain's products see it
        hi = bf(x)
        return hi + bf(x - hi) if args.terms == 2 else hi

    q = bf(F.normalize(torch.randn(NC * C, HV, D), dim=-1))
    k = bf(F.normalize(torch.randn(NC * C, HV, D), dim=-1))
    v = bf(torch.randn(NC * C, HV, D))
    g = F.logsigmoid(torch.randn(NC * C, HV, D if kda else 1)) / 16
    g[:, 3] = 0.0
    g = g.expand(NC * C, HV, D)
    beta = torch.randn(NC * C, HV).sigmoid()
    h0 = torch.randn(HV, D, D)
    scale = D ** -0.5

    # per chunk and head: the input-only terms, rounded once, and their fp64 originals
    chunk, exact = {}, {}
    for c in range(NC):
        s = slice(c * C, (c + 1) * C)
        for h in range(HV):
            kk, qq, vv = k[s, h].double(), q[s, h].double(), v[s, h].double()
            bb, G = beta[s, h].double(), g[s, h].double().cumsum(0)
            E = torch.exp(G)   # slow gates: no overflow in e^G or e^-G within a chunk
            A = torch.linalg.inv(torch.eye(C, dtype=f64)
                                 + (bb[:, None] * ((kk * E) @ (kk / E).T)).tril(-1))
            w, u = A @ (bb[:, None] * E * kk), A @ (bb[:, None] * vv)
            kg, qg = kk * torch.exp(G[-1] - G), scale * qq * E
            aqk = (scale * ((qq * E) @ (kk / E).T)).tril()
            dec = torch.exp(G[-1])
            exact[c, h] = (w, u, kg, qg, aqk, dec)
            chunk[c, h] = tuple(bf(t.float()) for t in (w, u, kg, qg, aqk)) + (
                dec.float(), float(G[-1].max()) / math.log(2))

    def step(S, c, h, with_u=True):
        w, u, kg, qg, aqk, dec, _ = chunk[c, h]
        vn = (u if with_u else 0.0) - w @ operand(S)
        return dec[:, None] * S + kg.T @ operand(vn), bf(qg @ bf(S) + aqk @ bf(vn))

    def chain(S, c0, c1, h):
        out = []
        for c in range(c0, c1):
            S, o = step(S, c, h)
            out.append(o)
        return S, out

    def rel(a, b):
        return float((a.double() - b.double()).norm() / b.double().norm())

    # the fp64 chain without roundings, and the unsegmented one with them
    tru_o, tru_ht = [], []
    for h in range(HV):
        S, out = h0[h].double(), []
        for c in range(NC):
            w, u, kg, qg, aqk, dec = exact[c, h]
            vn = u - w @ S
            out.append(qg @ S + aqk @ vn)
            S = dec[:, None] * S + kg.T @ vn
        tru_o.append(torch.cat(out))
        tru_ht.append(S)
    tru_o, tru_ht = torch.stack(tru_o, 1), torch.stack(tru_ht)
    seq_o, seq_ht, starts = [], [], {}
    for h in range(HV):
        S, out = h0[h].clone(), []
        for c in range(NC):
            starts[c, h] = S
            S, o = step(S, c, h)
            out.append(o)
        seq_o.append(torch.cat(out))
        seq_ht.append(S)
    seq_o, seq_ht = torch.stack(seq_o, 1), torch.stack(seq_ht)
    print(f"{args.op} T {NC * C} HV {HV} (head 3: g = 0) D {D}, seed {args.seed}, "
          f"{args.terms} term(s); unsegmented "
          f"against fp64: o {rel(seq_o, tru_o):.2e} ht {rel(seq_ht, tru_ht):.2e}")

    modes = ["perturb", "maps"] + ([] if kda else ["warmup"])
    for L in (int(x) for x in args.segments.split(",")):
        for mode in modes:
            outs, hts = [], []
            for h in range(HV):
                out, S0 = [], h0[h].clone()
                for c0 in range(0, NC, L):
                    c1 = min(NC, c0 + L)
                    if c0 > 0 and mode == "perturb":
                        S0 = starts[c0, h] * (1 + 2.0 ** -23 * torch.randn(D, D).sign())
                    elif c0 > 0 and mode == "warmup":
                        bound, n = 0.0, 0
                        while n < min(8, c0) and bound > -32:
                            n += 1
                            bound += chunk[c0 - n, h][6]
                        ok = bound <= -32 and n < c0
                        S0 = chain(torch.zeros(D, D), c0 - n, c0, h)[0] if ok else starts[c0, h]
                    S1, o = chain(S0, c0, c1, h)   # the segment's outputs and end state
                    out += o
                    if mode == "maps" and c0 > 0:  # the next start from the maps instead
                        B = chain(torch.zeros(D, D), c0, c1, h)[0]
                        P = torch.eye(D)
                        for c in range(c0, c1):
                            P = step(P, c, h, with_u=False)[0]
                        hi = bf(P)
                        S0 = (hi + bf(P - hi)) @ S0 + B
                    else:
                        S0 = S1
                outs.append(torch.cat(out))
                hts.append(S1)
            o, ht = torch.stack(outs, 1), torch.stack(hts)
            heads = " ".join(f"{rel(ht[h], seq_ht[h]):.1e}" for h in range(HV))
            print(f"L {L:3} {mode:8} rel o {rel(o, seq_o):.2e} ht {rel(ht, seq_ht):.2e} "
                  f"(per head {heads}); against fp64 o {rel(o, tru_o):.2e} "
                  f"ht {rel(ht, tru_ht):.2e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
