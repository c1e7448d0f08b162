"""timing.py: CUDA-event timing shared by the examples' benchmarks (gemm_bench.py,
attention_bench.py); the ctypes side of those is tile_la._abi.Runtime."""
import torch


def timed(fn, iters, warmup=5):
    """Milliseconds per call of fn: CUDA events around `iters` calls after a warm-up."""
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters
