"""la_slow_gates.py: the "slow" gate regime of docs/benchmarking.md for the GPU tests
(la_cp_exact.py, la_parity.py): gates that context parallelism's warmups cannot bound.

Log-space gates: g = logsigmoid(randn) / 16, and g = 0 exactly on every value head h with
h % 4 == 3. In-kernel gates (KDA's softplus and lower-bound forms): dt_bias per head such that
the mean gate per token equals the log-space one's, the same on every channel of the head, and
-1e4 on the heads h % 4 == 3, where both forms evaluate to exactly 0 in fp32. bench/la_bench.py
draws its slow cells the same way.
"""
import torch
import torch.nn.functional as F

SLOW_DIVISOR = 16          # a power of two: dividing is exact
ZERO_PERIOD = 4            # value heads h with h % ZERO_PERIOD == ZERO_PERIOD - 1 never decay
ZERO_DT_BIAS = -1e4        # in-kernel gate: exp(-1e4) is 0 in fp32, so the gate is exactly 0
LOWER_BOUND = -5.0         # KDA's lower-bound form


def zero_heads(HV):
    """The value heads without decay: 3, 7, 11, ..."""
    return [h for h in range(HV) if h % ZERO_PERIOD == ZERO_PERIOD - 1]


def slow_log_gate(raw):
    """The slow log-space gate from a randn tensor [B, T, HV] (GDN) or [B, T, HV, K] (KDA),
    fp32, on raw's device."""
    g = F.logsigmoid(raw.float()) / SLOW_DIVISOR
    g[:, :, zero_heads(g.shape[2])] = 0.0
    return g


def _normal_points(n=24001, lim=12.0):
    """Points and weights of a quadrature of E[f(x)], x ~ N(0, 1) (float64, CPU)."""
    x = torch.linspace(-lim, lim, n, dtype=torch.float64)
    w = torch.exp(-0.5 * x * x)
    return x, w / w.sum()


def _gate(form, a, y):
    """The in-kernel KDA gate of y = x + dt_bias with exp(A_log) = a (broadcast), float64."""
    if form == "softplus":
        return -a * F.softplus(y)
    return LOWER_BOUND * torch.sigmoid(a * y)


def slow_target():
    """The slow log-space gate's mean per token: E[logsigmoid(x)] / 16, about -0.0504."""
    x, w = _normal_points()
    return float((F.logsigmoid(x) * w).sum()) / SLOW_DIVISOR


def slow_dt_bias(form, A_log, HV, D):
    """dt_bias [HV * D] fp32 for KDA's in-kernel gate ("softplus" or "lb"; A_log [HV] or None,
    taken as 0 like the kernels do for the lower bound without A_log): per head the b whose
    mean gate over x ~ N(0, 1) is slow_target(), found by bisection (more decay as b grows),
    and ZERO_DT_BIAS on zero_heads(HV). On A_log's device (the CPU without A_log)."""
    a = (A_log.detach().double().cpu().exp() if A_log is not None
         else torch.ones(HV, dtype=torch.float64))[:, None]
    x, w = _normal_points()
    target = slow_target()
    lo = torch.full((HV, 1), -60.0, dtype=torch.float64)
    hi = torch.full((HV, 1), 20.0, dtype=torch.float64)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        mean = (_gate(form, a, x[None, :] + mid) * w).sum(-1, keepdim=True)
        too_much = mean < target
        hi = torch.where(too_much, mid, hi)
        lo = torch.where(too_much, lo, mid)
    b = (0.5 * (lo + hi))[:, 0]
    b[zero_heads(HV)] = ZERO_DT_BIAS
    dev = A_log.device if A_log is not None else "cpu"
    return b.float().repeat_interleave(D).to(dev)
