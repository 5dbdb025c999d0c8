"""Issue 18: where the coop softmax's time goes. For one config per shape, CUDA-graph GPU time of
softmax_coop_kernel launched as: fused under a cooperative launch (what the wrapper does), fused under a plain
launch (safe only while every program is resident anyway), statistics then output as two launches, and the
statistics launch alone.

    python tests/bench/coop_modes.py [--shapes 1x32000:1024:1:4,...]   (M x N : block_n : per : warps)
"""
from __future__ import annotations

import argparse
import sys

SHAPES = "1x32000:1024:1:4,1x128256:2048:1:8,8x32768:4096:1:8,16x16384:4096:1:8,4x256000:2048:1:4"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    args = ap.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from explore_rows_coop import graph_us
    from tritondbg.kernels import softmax as SM

    for spec in args.shapes.split(","):
        shape, block, per, warps = spec.split(":")
        M, N = map(int, shape.split("x"))
        block, per, warps = int(block), int(per), int(warps)
        x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        chunks = triton.cdiv(N, block * per)
        stats, count = SM._coop_scratch(x.device)()
        consts = dict(BLOCK_N=block, PER=per, CHUNKS=chunks, CHUNKS_P2=triton.next_power_of_2(chunks),
                      VEC=SM.vec(N, N, N, elem_size=2))
        grid = (M * chunks,)

        def run(phase, coop):
            return lambda: SM.softmax_coop_kernel[grid](x, y, stats, count, N, N, M, N, **consts, VA=1, PHASE=phase,
                                                          num_warps=warps, launch_cooperative_grid=coop)
        res = {}
        for name, fns in (("fused coop", [run(0, True)]), ("fused plain", [run(0, False)]),
                          ("two launches", [run(1, False), run(2, False)]), ("stats only", [run(1, False)]),
                          ("output only", [run(2, False)])):
            res[name] = graph_us(lambda: [f() for f in fns])
        ok = (y.float() - SM.reference(x)).abs().max().item()
        copy = graph_us(lambda: y.copy_(x))
        print(f"{M}x{N} {block}x{per} w{warps} ({grid[0]} programs) copy {copy:.2f}: "
              + ", ".join(f"{k} {v:.2f}" for k, v in res.items())
              + f"  (err {ok:.3g}, counters {int(count.count_nonzero())})",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
