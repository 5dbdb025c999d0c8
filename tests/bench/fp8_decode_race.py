"""Why the perf gate's fp8 1x4096x4096 row (CUDA-graph replay) flips between 5.6 and 7.1 us (session 44).

The decode paths (fp8_gemm and gemm at M <= 64) race the Gluon decode kernel against the tl decode kernel on a
call signature's first call, timing GPU time after do_bench's flush (a 256 MB write, which leaves the L2 full of
dirty lines); the gate times the served kernel under graph replay (L2 warm). Each shape runs in fresh processes
(each its own race, as every user process and the gate's own are), in three modes: ``tl`` (TRITONDBG_GLUON_GEMM=0),
``race`` (the race as bundled) and ``clean`` (the race timed after a read-only flush: ``_race._time(clean=True)``).
Per process: the race's record, then the served kernel timed three ways (dirty flush, clean flush, graph replay)
beside the torch baseline.

    python tests/bench/fp8_decode_race.py [--procs 2] [--shapes fp8:1x4096x4096,bf16:16x4096x4096] [--modes tl,race,clean]
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = "fp8:1x4096x4096,fp8:16x4096x4096,fp8:1x8192x8192,fp8:16x14336x4096,bf16:1x4096x4096,bf16:16x4096x4096"


def child(spec: str, mode: str) -> None:
    import torch

    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    from tritondbg.check.perf import time_ms
    from tritondbg.kernels import _race, fp8_gemm as F8, gemm as G

    if mode == "clean":
        _race._time = functools.partial(_race._time, clean=True)  # noqa: SLF001 - the race's timer, for this probe
    timer = _race._time.func if isinstance(_race._time, functools.partial) else _race._time
    kind, shape = spec.split(":")
    M, N, K = (int(v) for v in shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(0)
    if kind == "fp8":
        one = torch.ones((), device="cuda")
        a = (torch.randn(M, K, device="cuda", generator=gen) / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(N, K, device="cuda", generator=gen) / 4).to(torch.float8_e4m3fn).t()
        ours = lambda: F8.fp8_gemm(a, b, one, one)  # noqa: E731
        base = lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)  # noqa: E731
        decision = lambda: F8.ws_decision(a, b, one, one)  # noqa: E731
    else:
        a = torch.randn(M, K, device="cuda", generator=gen, dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", generator=gen, dtype=torch.bfloat16)
        ours = lambda: G.gemm(a, b)  # noqa: E731
        base = lambda: torch.matmul(a, b)  # noqa: E731
        decision = lambda: G.ws_decision(a, b)  # noqa: E731
    ours()  # the race (mode race / clean)
    rec = decision() or {}
    row = {"spec": spec, "mode": mode, "tl": rec.get("tl"), "ws": rec.get("ws"), "pick": rec.get("pick"),
           "warm": rec.get("warm"), "tie_break": rec.get("tie_break")}
    for name, fn in (("ours", ours), ("torch", base)):
        row[name] = {"dirty": round(timer(fn), 2), "clean": round(timer(fn, clean=True), 2),
                     "graph": round(time_ms(fn, "graph", rep=100) * 1e3, 2)}
    print("ROW " + json.dumps(row))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--modes", default="tl,race,clean")
    p.add_argument("--child")
    p.add_argument("--mode")
    args = p.parse_args()
    if args.child:
        return child(args.child, args.mode)
    for spec in args.shapes.split(","):
        for mode in args.modes.split(","):
            env = dict(os.environ, TRITONDBG_GLUON_GEMM="0" if mode == "tl" else "1")
            for i in range(args.procs):
                r = subprocess.run([sys.executable, __file__, "--child", spec, "--mode", mode], capture_output=True,
                                   text=True, timeout=300, env=env)
                rows = [line[4:] for line in r.stdout.splitlines() if line.startswith("ROW ")]
                print(rows[0] if rows else f"{spec} {mode} proc {i}: rc={r.returncode} {r.stderr[-600:]}", flush=True)


if __name__ == "__main__":
    main()
