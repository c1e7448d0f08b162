"""la_debug.py [kda] [D]: one chunk of KDA through the C API, with every workspace
intermediate of chunk_prep (W, U, QG, KG, AQK, DEC; layout in kernels/src/la.c) compared
against torch fp64, worst rows shown. For kernel work: it tells which stage is wrong. (GDN
runs gdn_kkt + gdn_fused, whose workspace holds other things: use la_parity.py there.)
From the checkout, with PYTHONPATH=python and TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so
in the environment (or the package installed: pip install --no-build-isolation ./python)."""
import sys

import torch
import torch.nn.functional as F

import la_smoke  # beside this file: the script's folder is on sys.path


def expected(q, k, v, g, beta, scale):
    """Per-chunk intermediates of spec 3.0 for one chunk of 64 rows (fp64)."""
    q, k, v, g, beta = (x.double().cpu() for x in (q, k, v, g, beta))
    T, D = q.shape
    G = g.cumsum(0) * 1.4426950216          # [T, D] log2 units
    e = lambda x: torch.exp2(x)
    diff = G[:, None, :] - G[None, :, :]      # [i, j, d]
    mask_l = torch.tril(torch.ones(T, T, dtype=torch.bool), -1)
    mask_q = torch.tril(torch.ones(T, T, dtype=torch.bool), 0)
    ediff = torch.where(mask_q[..., None], e(diff.clamp(max=0)), torch.zeros_like(diff))
    L = (k[:, None, :] * k[None, :, :] * ediff).sum(-1) * beta[:, None]
    L = torch.where(mask_l, L, torch.zeros_like(L))
    Aqk = (q[:, None, :] * k[None, :, :] * ediff).sum(-1) * scale
    Aqk = torch.where(mask_q, Aqk, torch.zeros_like(Aqk))
    A = torch.linalg.inv(torch.eye(T, dtype=torch.float64) + L)
    W = A @ (beta[:, None] * e(G) * k)
    U = A @ (beta[:, None] * v)
    QG = scale * q * e(G)
    KG = k * e(G[-1] - G)
    DEC = e(G[-1])
    return dict(W=W, U=U, QG=QG, KG=KG, AQK=Aqk, DEC=DEC)


def main():
    if len(sys.argv) > 1 and sys.argv[1] != "kda":
        sys.exit("la_debug.py: only KDA goes through chunk_prep (GDN: tests/gpu/la_parity.py)")
    kda = True
    D = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    torch.manual_seed(0)
    T, dt = 64, torch.bfloat16
    q = F.normalize(torch.randn(1, T, 1, D, device="cuda"), dim=-1).to(dt)
    k = F.normalize(torch.randn(1, T, 1, D, device="cuda"), dim=-1).to(dt)
    v = torch.randn(1, T, 1, D, device="cuda").to(dt)
    g = F.logsigmoid(torch.randn((1, T, 1, D) if kda else (1, T, 1), device="cuda"))
    beta = torch.rand(1, T, 1, device="cuda").sigmoid()
    lib = la_smoke._Lib()
    o, ht, ws = lib.fwd(kda, q, k, v, g, beta, output_final_state=True, keep_workspace=True)
    torch.cuda.synchronize()
    gf = g[0, :, 0] if kda else g[0, :, 0][:, None].expand(T, D)
    want = expected(q[0, :, 0], k[0, :, 0], v[0, :, 0], gf, beta[0, :, 0], D ** -0.5)
    mat = (T * D * 2 + 255) // 256 * 256
    off = dict(W=0, U=mat, QG=2 * mat, KG=3 * mat, AQK=4 * mat)
    for name in ("W", "U", "QG", "KG", "AQK"):
        cols = 64 if name == "AQK" else D
        got = ws[off[name]:off[name] + T * cols * 2].view(dt).view(T, cols).double().cpu()
        ref = want[name].cpu()
        err = la_smoke.rel_rms(ref, got)
        bad = (got - ref).abs().max(dim=1).values
        print(f"{name:4s} rel_rms {err:.3e} nan {got.isnan().sum().item()} "
              f"worst rows {bad.topk(3).indices.tolist()} {bad.topk(3).values.tolist()}")
    dec_off = 4 * mat + (T * 64 * 2 + 255) // 256 * 256
    got = ws[dec_off:dec_off + D * 4].view(torch.float32).double().cpu()
    print(f"DEC  rel_rms {la_smoke.rel_rms(want['DEC'].cpu(), got):.3e}")
    print("o nan", o.isnan().sum().item(), "ht nan", ht.isnan().sum().item())


if __name__ == "__main__":
    main()
