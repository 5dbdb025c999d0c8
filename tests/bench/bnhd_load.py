"""Session 56's open question, ready for the next GPU call: the bundled prefill attention's output at B2 H8/4
N333 D128 causal bf16 over q, k, v handed as transposed (B, N, H, D) tensors is NaN on the third call of its
signature when other processes load the GPU (steady_state.py under 4 pytest workers, sessions 53 and 56; 3 of 3
copies beside 3 matmul hogs on an H100, Triton 3.6, ``tests/bench/runs/s56_steady_load.py``), right alone (87 of
87) and right for every config pinned alone (``prefill_configs.py --bnhd``), and the fourth call (new tensors,
same cached launcher) was right every time. The autotuner picked 64x64 w4 s3 (not warp-specialised; no Gluon
kernel takes a non-contiguous q).

This script checks every call of that signature, one child process per variant, beside ``--hogs`` processes:
  plain     calls 1..4 as steady_state.py makes them (1: autotuned, 2-4: the cached launcher; 4 over new tensors)
  sync      the same with torch.cuda.synchronize() after each call (a host / device ordering problem goes away)
  noplan    the cached launcher dropped before each call (every call through the autotuned path)
  contig    q, k, v made contiguous (B, H, N, D): the layout's part
  pinned    the autotuner's pick pinned (``_attention(config=...)``) for every call
  forced    the autotuner given only 64x64 w4 s3 (the pick under load), so the cached launcher holds it: the
            config's part without the load (run it with --hogs 0 too)
  nocache   as forced, with the launcher's expanded host descriptors (CUtensorMaps by base pointer) dropped
            before each call
Usage: python tests/bench/bnhd_load.py [--hogs 3] [--rounds 3] [--variants plain,sync,noplan,contig,pinned]
Prints one line per (variant, round, call): ok / BAD with the max abs error; exit 1 on any BAD."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOG = r'''
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.empty_like(a)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for i in range(20):
        b = a @ a.T if i % 2 else b.copy_(a)
    torch.cuda.synchronize()
'''


def child(variant: str, rounds: int) -> int:
    import torch

    from tritondbg import runner

    runner.set_mode("compiled")
    from tritondbg.kernels import attention as A

    B, H, HKV, N, D = 2, 8, 4, 333, 128
    bad = 0

    def make():
        def one(h):
            if variant == "contig":
                return torch.randn(B, h, N, D, device="cuda").to(torch.bfloat16)
            return torch.randn(B, N, h, D, device="cuda").to(torch.bfloat16).transpose(1, 2)
        return one(H), one(HKV), one(HKV)

    if variant in ("forced", "nocache"):
        A._attn_fwd_kernel.configs = [c for c in A._attn_fwd_kernel.configs
                                      if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages,
                                          c.kwargs["WARP_SPEC"]) == (64, 64, 4, 3, False)]
        assert len(A._attn_fwd_kernel.configs) == 1, A._attn_fwd_kernel.configs
    for r in range(rounds):
        A._PREFILL_PLANS.clear()
        cache = getattr(A._attn_fwd_kernel, "cache", None)
        if cache is not None:
            cache.clear()  # autotune again each round, under the load
        q, k, v = make()
        ref = A.reference(q, k, v, causal=True).float()
        outs = []
        for call in range(1, 5):
            if call == 4:
                q, k, v = make()
                ref4 = A.reference(q, k, v, causal=True).float()
            if variant == "noplan":
                A._PREFILL_PLANS.clear()
            if variant == "nocache":
                for plan in A._PREFILL_PLANS.values():
                    for c in plan.launcher.desc_cache:
                        c.clear()
            plan = next(iter(A._PREFILL_PLANS.values()), None)
            how = "none" if plan is None else ("raw" if plan.launcher.raw is not None else "wrapped") + \
                (" tma" if plan.descs is not None else " ptr")
            if variant == "pinned" and call > 1:
                o = A._attention(q, k, v, True, None, None, config=A._attn_fwd_kernel.best_config)
            else:
                o = A.attention(q, k, v, causal=True)
            if variant == "sync":
                torch.cuda.synchronize()
            outs.append((call, o, ref4 if call == 4 else ref, how))
        for call, o, want, how in outs:
            err = (o.float() - want).abs().max().item()
            ok = bool(torch.isfinite(o.float()).all()) and err <= 2e-2 * max(1.0, want.abs().max().item())
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {variant} round {r} call {call}: max abs err {err:.3g} "
                  f"plan before the call {how}; config {getattr(A._attn_fwd_kernel, 'best_config', None)}", flush=True)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hogs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="plain,sync,noplan,contig,pinned")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.rounds)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    hogs = [subprocess.Popen([sys.executable, "-c", HOG, "400"], env=env) for _ in range(a.hogs)]
    time.sleep(3)
    rc = 0
    try:
        for variant in a.variants.split(","):
            p = subprocess.run([sys.executable, __file__, "--child", variant, "--rounds", str(a.rounds)], env=env,
                               cwd=REPO, capture_output=True, text=True, timeout=500)
            print(p.stdout + (p.stderr[-1500:] if p.returncode not in (0, 1) else ""), end="", flush=True)
            rc |= p.returncode != 0
    finally:
        for h in hogs:
            h.kill()
    return rc


if __name__ == "__main__":
    sys.exit(main())
