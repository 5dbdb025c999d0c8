"""Does a compute-bound kernel's do_bench time depend on what the GPU did just before? (GPU only)

    python tests/bench/gemm_power_state.py [--rounds 3] [--idle 8]

Times gemm bf16 4096^3 (pinned to its H200 winner) with triton.testing.do_bench in rounds: right after
another do_bench of the same kernel ("hot"), and after the GPU sat idle for --idle seconds ("after idle").
Why: `tritondbg profile` (a fresh process) reported 183 us where a bare do_bench in a long-running process
reported 194-204 us on the H200 (tests/bench/profile.md); memory-bound kernels agreed within 1.2%.
"""
from __future__ import annotations

import argparse
import sys
import os
import statistics
import time

os.environ.setdefault("TRITON_INTERPRET", "0")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=8.0)
    a = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        sys.exit(2)
    import triton
    import triton.testing

    from tritondbg import loader, runner
    from tritondbg.configs import parse_config
    from tritondbg.pinning import plan

    runner.set_mode("compiled")
    sc = loader.load("gemm")
    case = sc.case("square_4096")
    inputs = sc.make_inputs(case, torch.bfloat16, "cuda", torch.Generator().manual_seed(0))
    launch = sc.launch_for(case)
    cfg = parse_config("BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,GROUP_M=8,num_warps=8,num_stages=4")
    hot, idle = [], []
    with plan(sc.kernels, None, cfg, interpret=False).active():
        launch(**inputs)
        torch.cuda.synchronize()
        for _ in range(a.rounds):
            time.sleep(a.idle)
            idle.append(triton.testing.do_bench(lambda: launch(**inputs)))
            hot.append(triton.testing.do_bench(lambda: launch(**inputs)))
    f = lambda xs: f"{statistics.median(xs) * 1e3:.1f} us ({min(xs) * 1e3:.1f}..{max(xs) * 1e3:.1f})"  # noqa: E731
    print(f"{torch.cuda.get_device_name()}, Triton {triton.__version__}, torch {torch.__version__}")
    print(f"gemm bf16 4096^3 do_bench median over {a.rounds} rounds: after {a.idle:.0f} s idle {f(idle)}; "
          f"right after (hot) {f(hot)}")


if __name__ == "__main__":
    main()
