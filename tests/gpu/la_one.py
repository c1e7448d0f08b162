"""la_one.py KIND T H HV [l2 [slow|lb|steep]]: one forward call (for profilers and sanitizers:
ncu -k gdn_fused ...); l2 turns on the in-kernel q/k l2norm; slow divides the gates by 1000
(heads that barely decay; TILE_LA_GDN_CP=n / TILE_LA_KDA_CP=n force n-chunk segments, the chained
path); lb is KDA's lower-bound gate in kernel (chunk_prep's halves path); steep multiplies the
gates by 20 (chunk_prep's levels path).
From the checkout, with PYTHONPATH=python and TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so
in the environment (or the package installed: pip install --no-build-isolation ./python)."""
import sys

import torch
import torch.nn.functional as F

import la_smoke  # beside this file: the script's folder is on sys.path

kda = sys.argv[1] == "kda"
T, H, HV = (int(x) for x in sys.argv[2:5])
l2 = len(sys.argv) > 5 and sys.argv[5] == "l2"
slow = len(sys.argv) > 6 and sys.argv[6] == "slow"
lb = len(sys.argv) > 6 and sys.argv[6] == "lb"
steep = len(sys.argv) > 6 and sys.argv[6] == "steep"
D, dev, dt = 128, "cuda", torch.bfloat16
q = F.normalize(torch.randn(1, T, H, D, device=dev), dim=-1).to(dt)
k = F.normalize(torch.randn(1, T, H, D, device=dev), dim=-1).to(dt)
v = torch.randn(1, T, HV, D, device=dev).to(dt)
g = F.logsigmoid(torch.randn((1, T, HV, D) if kda else (1, T, HV), device=dev))
if slow:
    g = g / 1000
if steep:
    g = g * 20
beta = torch.rand(1, T, HV, device=dev).sigmoid()
h0 = torch.randn(1, HV, D, D, device=dev)
gate = {}
if lb:
    g, gate = la_smoke.lb_gate_inputs(T, HV, D, dev)
la_smoke._Lib().fwd(kda, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                    use_qk_l2norm_in_kernel=l2, **gate)
torch.cuda.synchronize()
