"""Issue 18, host cost: where a bundled row kernel's steady-state call spends its host time, piece by piece,
beside torch's own op and an empty Triton launch.

    python tests/bench/host_breakdown.py [--calls 20000]

Each line: min over 7 rounds of the mean host time per call (no sync inside a round). Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import sys
import time

import triton
import triton.language as tl


@triton.jit
def empty_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pass


def per_call(fn, calls: int, rounds: int = 7) -> float:
    import torch

    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
        torch.cuda.synchronize()
    return best * 1e6


def cuda_args(argv, description: str):
    """``--calls`` parsed, or None (after one line on stderr) without a CUDA GPU: the preamble of the host-time
    scripts (this one, explore_static_launch.py)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return None
    return args


def main(argv=None) -> int:
    args = cuda_args(argv, __doc__.splitlines()[0])
    if args is None:
        return 2
    import torch

    from tritondbg.kernels import _launch
    from tritondbg.kernels import layernorm as LN
    from tritondbg.kernels import softmax as SM

    x = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    w = torch.ones(512, device="cuda", dtype=torch.float16)
    b = torch.zeros(512, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    SM.softmax(x)
    LN.layernorm(x, w, b)
    sig = (x.shape, x.stride(), x.dtype, x.device, SM.MAX_FUSED_BLOCK_N, None)
    launcher = SM._SINGLE.plan(sig, x)
    empty_kernel[(1,)](x, y, 1, BLOCK=16)
    from tritondbg.kernels import add as ADD
    from tritondbg.kernels import gemm as G

    a1 = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    bw = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    G.gemm(a1, bw)
    a127 = torch.randn(127, 4096, device="cuda", dtype=torch.bfloat16)
    G.gemm(a127, bw)  # Hopper: the Gluon kernel's race (kernels/_gemm_ws.py) on this first call
    race = G.ws_decision(a127, bw)
    ADD.add(x, x)
    stream = torch._C._cuda_getCurrentRawStream
    dev = torch._C._cuda_getDevice
    pieces = {
        "torch.softmax(x)": lambda: torch.softmax(x, dim=-1),
        "F.layer_norm(x)": lambda: torch.nn.functional.layer_norm(x, (512,), w, b),
        "torch.empty_like(x)": lambda: torch.empty_like(x),
        "torch.empty(shape, dtype, device)": lambda: torch.empty(x.shape, dtype=x.dtype, device=x.device),
        "signature tuple": lambda: (x.shape, x.stride(), x.dtype, x.device, 16384, None),
        "_SINGLE.plan(sig, x)": lambda: SM._SINGLE.plan(sig, x),
        "hooks_idle()": _launch.hooks_idle,
        "current raw stream": lambda: stream(dev()),
        "cached launcher(x, y)": lambda: launcher(x, y),
        "softmax(x) (ours, whole call)": lambda: SM.softmax(x),
        "layernorm(x, w, b) (ours, whole call)": lambda: LN.layernorm(x, w, b),
        "empty kernel: JITFunction kernel[grid](...)": lambda: empty_kernel[(1,)](x, y, 1, BLOCK=16),
        "torch.empty_like(x, contiguous)": lambda: torch.empty_like(x, memory_format=torch.contiguous_format),
        "x.new_empty(shape)": lambda: x.new_empty((512, 512)),
        "gemm(a1, b) M=1 4096x4096 (ours, whole call)": lambda: G.gemm(a1, bw),
        "a1 @ b (torch)": lambda: a1 @ bw,
        f"gemm(a, b) M=127 4096x4096 (ours, whole call; {(race or {}).get('pick') or 'tl kernels'})":
            lambda: G.gemm(a127, bw),
        "a @ b M=127 (torch)": lambda: a127 @ bw,
        "add(x, x) (ours, whole call)": lambda: ADD.add(x, x),
        "x + x (torch)": lambda: x + x,
    }
    direct = getattr(launcher, "direct", None)
    print(f"cached launcher direct entry: {direct is not None}; hooks idle: {_launch.hooks_idle()}; "
          f"Triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for name, fn in pieces.items():
        print(f"{per_call(fn, args.calls):8.2f} us  {name}", flush=True)
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(2000):
        SM.softmax(x)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
