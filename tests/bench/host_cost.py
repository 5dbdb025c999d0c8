"""Where a launch's time goes when do_bench says more than the GPU needs: GPU time (CUDA graph replay) against
host time per call (Python of the wrapper, autotuner, launcher), with a cProfile of the host side.

    python tests/bench/host_cost.py attention prefill_gqa_odd_d128 [--dtype bfloat16] [--calls 300]

Needs a CUDA GPU."""
import argparse
import cProfile
import io
import pstats
import sys
import time

import torch
import triton

from tritondbg import loader


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel")
    ap.add_argument("case")
    ap.add_argument("--dtype")
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    scenario = loader.load(args.kernel)
    case = scenario.case(args.case)
    dtype = args.dtype or case.dtypes[0]
    inputs = scenario.make_inputs(case, getattr(torch, dtype), "cuda", torch.Generator().manual_seed(0))
    launch = scenario.launch_for(case)
    fn = lambda: launch(**inputs)  # noqa: E731
    fn()
    torch.cuda.synchronize()
    bench = triton.testing.do_bench(fn, warmup=50, rep=200)
    with torch.cuda.stream(torch.cuda.Stream()):
        graph = triton.testing.do_bench_cudagraph(fn, rep=100)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.calls):
        fn()
    host = (time.perf_counter() - t0) / args.calls
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    print(f"{args.kernel} {args.case} {dtype}: do_bench {bench * 1e3:.1f} us, graph (GPU) {graph * 1e3:.1f} us, "
          f"host per call (no sync) {host * 1e6:.1f} us")
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
    print("\n".join(out.getvalue().splitlines()[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
