"""Session 53's open question: does the bundled prefill attention compute wrong outputs when other processes load
the GPU? Under 8 pytest-xdist workers on one H100 (tests/bench/runs/s53_gpu.sh, Triton 3.6), three attention
checks failed that pass alone:
- ``run attention --case all``: prefill B4 H32 N4096 D128 bf16, 49,455,104 of 67,108,864 outputs outside 0.02
  (the tl kernel's autotuned WARP_SPEC=True 128x128 s2 config, raced against the Gluon kernel);
- ``prefill_configs.py``: at least the pinned WARP_SPEC 128x64 w4 s4 config at B1 H4 N512 D128;
- ``steady_state.py``: B2 H8/4 N333 D128 causal bf16 in a (B, N, H, D) layout (no WARP_SPEC config and no Gluon
  kernel serve it).
A correct kernel's output does not depend on what else runs, so either a kernel races with itself (timing-dependent:
Triton 3.6's Hopper warp specialisation has given wrong outputs twice before, see kernels/attention.py) or
something else is shared. This script asks which, in one device call:

    python tests/bench/contended_attention.py [--hogs 6] [--rounds 20] [--seconds 240]

It starts ``--hogs`` processes that keep the GPU busy (bf16 matmuls and copies, ~2 GB each), then, in rounds, runs
every prefill config pinned, the autotuned path and the Gluon kernel on the shapes above (and the (B, N, H, D)
case's third call through the cached launcher), each against the fp32 reference, and prints per entry how many
runs were wrong, then the same counts with no hog running. Exit 1 when any run was wrong. Needs a CUDA GPU.

Answer (session 55, an H100, Triton 3.6; tests/bench/runs/s55_gpu.sh): the kernel's own 4-warp WARP_SPEC configs.
128x64 s3 / s4 were wrong at B4 H32 N4096 D128 alone too (20 of 20), 128x128 s2 under load; the autotuner, timing
under load, picked them. They were taken out of the autotuner's list: 0 wrong in 20 rounds loaded and 20 alone.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _hog(stop_at: float) -> None:
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    while time.time() < stop_at:
        for _ in range(20):
            b = a @ a.T if _ % 2 else b.copy_(a)
        torch.cuda.synchronize()


def _shapes():
    import torch

    return (("B4 H32 N4096 D128", (4, 32, 32, 4096, 128, False, False)),
            ("B1 H4 N512 D128", (1, 4, 4, 512, 128, False, False)),
            ("B1 H4 N512 D128 causal", (1, 4, 4, 512, 128, True, False)),
            ("B2 H8/4 N333 D128 causal bnhd", (2, 8, 4, 333, 128, True, True)),
            ("B2 H4/2 N500 D64 causal", (2, 4, 2, 500, 64, True, False))), torch.bfloat16


def _inputs(B, H, HKV, N, D, bnhd, dtype):
    import torch

    def one(h):
        if bnhd:
            return torch.randn(B, N, h, D, device="cuda").to(dtype).transpose(1, 2)
        return torch.randn(B, h, N, D, device="cuda").to(dtype)
    return one(H), one(HKV), one(HKV)


def _round(wrong: dict, runs: dict) -> None:
    import torch
    from triton.runtime.errors import OutOfResources

    from tritondbg.kernels import attention as A

    shapes, dtype = _shapes()
    for label, (B, H, HKV, N, D, causal, bnhd) in shapes:
        torch.manual_seed(len(runs))
        q, k, v = _inputs(B, H, HKV, N, D, bnhd, dtype)
        ref = A.reference(q, k, v, causal=causal).float()
        tol = 2e-2 * max(1.0, ref.abs().max().item())
        entries = [(f"pinned {cfg}", lambda cfg=cfg: A._attention(q, k, v, causal, None, None, config=cfg))
                   for cfg in A._PREFILL_CONFIGS]
        entries.append(("attention() 1st/2nd/3rd call", lambda: [A.attention(q, k, v, causal=causal)
                                                                 for _ in range(3)][-1]))
        for name, fn in entries:
            key = f"{label} | {name}"
            try:
                out = fn().float()
                torch.cuda.synchronize()
            except OutOfResources:
                continue
            bad = not bool(torch.isfinite(out).all()) or (out - ref).abs().max().item() > tol
            runs[key] = runs.get(key, 0) + 1
            wrong[key] = wrong.get(key, 0) + int(bad)


def _phase(title: str, rounds: int, deadline: float) -> dict:
    wrong, runs = {}, {}
    for i in range(rounds):
        if time.time() > deadline:
            break
        _round(wrong, runs)
    bad = {k: f"{wrong[k]}/{runs[k]}" for k in runs if wrong.get(k)}
    print(f"== {title}: {max(runs.values(), default=0)} rounds, {len(runs)} entries, {len(bad)} ever wrong", flush=True)
    for k, v in sorted(bad.items()):
        print(f"   WRONG {v}  {k}", flush=True)
    return bad


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hogs", type=int, default=6)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--seconds", type=float, default=240.0, help="time for the loaded phase; the quiet one gets half")
    a = p.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    print(torch.cuda.get_device_name(), torch.__version__, __import__("triton").__version__, flush=True)
    ctx = mp.get_context("spawn")
    t0 = time.time()
    hogs = [ctx.Process(target=_hog, args=(t0 + a.seconds + 30,)) for _ in range(a.hogs)]
    for h in hogs:
        h.start()
    time.sleep(10)  # the hogs' CUDA contexts up and busy
    loaded = _phase(f"{a.hogs} hog processes", a.rounds, time.time() + a.seconds)
    for h in hogs:
        h.terminate()
        h.join()
    quiet = _phase("alone", a.rounds, time.time() + a.seconds / 2)
    return 1 if loaded or quiet else 0


if __name__ == "__main__":
    sys.exit(main())
