"""Host time per steady-state call of the bundled launch paths that keep per-stream scratch (kernels/_scratch.py):
what looking up the launching stream's workspace and counters costs on each call.

    python tests/bench/scratch_host.py [--calls 2000] [--old DIR] [--out scratch_host.json]

Shapes whose GPU time is a few microseconds, so the host is the bottleneck; each call is timed without
synchronising, the median of rounds. ``--old DIR``: a copy of an earlier ``kernels/`` folder (e.g. ``git archive
<commit> kernels | tar x -C DIR``), imported beside the current kernels, its rounds interleaved with theirs (the
H200 VM's host speed drifts by 10% from minute to minute). Needs a CUDA GPU."""
import argparse
import importlib
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _runs import meta, save  # noqa: E402


def _host_us(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return us


def cases(pkg: str) -> dict:
    """name -> steady-state call through the kernels of package ``pkg``."""
    A, F8, G, SM = (importlib.import_module(f"{pkg}.{m}") for m in ("attention", "fp8_gemm", "gemm", "softmax"))
    dev = torch.device("cuda")
    a = torch.randn(1, 1024, device=dev, dtype=torch.bfloat16)
    b = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t().contiguous().t()
    sa, sb = torch.tensor(1.0, device=dev), torch.tensor(1.0, device=dev)
    q = torch.randn(1, 8, 128, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(1, 8, 512, 128, device=dev, dtype=torch.bfloat16) for _ in range(2))
    x = torch.randn(256, 1024, device=dev, dtype=torch.float16)
    return {"gemm 1x1024x1024 (split-K decode kernel)": lambda: G.gemm(a, b),
            "fp8_gemm 1x1024x1024 (split-K decode kernel)": lambda: F8.fp8_gemm(a8, b8, sa, sb),
            "attention_decode B1 H8 KV512, 4 splits": lambda: A.attention_decode(q, k, v, num_splits=4),
            "softmax 256x1024 (no scratch: the control)": lambda: SM.softmax(x)}


def main(argv=None) -> int:
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--old", default=None, help="a folder holding an earlier kernels/ folder's files")
    ap.add_argument("--out", default="scratch_host.json")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    versions = {"current": cases("tritondbg.kernels")}
    if args.old:
        import types

        pkg = types.ModuleType("oldkernels")
        pkg.__path__ = [args.old]
        sys.modules["oldkernels"] = pkg
        versions["old"] = cases("oldkernels")
    times = {(v, n): [] for v, cs in versions.items() for n in cs}
    for fns in versions.values():  # first calls: compile, autotune, cache the launchers
        for fn in fns.values():
            fn(), fn()
    torch.cuda.synchronize()
    for _ in range(args.rounds):
        for name in versions["current"]:
            for v, fns in versions.items():
                times[(v, name)].append(_host_us(fns[name], args.calls))
    rows = [dict(version=v, name=n, host_us=statistics.median(t), rounds=t) for (v, n), t in times.items()]
    for r in rows:
        print(f"{r['host_us']:7.2f} us  {r['version']:8s} {r['name']}")
    save(args.out, meta(t0, "tests/bench/scratch_host.py", argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
