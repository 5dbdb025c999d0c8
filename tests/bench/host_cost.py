"""Where a launch's time goes when do_bench says more than the GPU needs: GPU time (CUDA graph replay) against
host time per call (Python of the wrapper, autotuner, launcher), with a cProfile of the host side.

    python tests/bench/host_cost.py attention prefill_gqa_odd_d128 [--dtype bfloat16] [--calls 300] [--baselines]

``--baselines``: the same three figures for the case's vendor baselines (tests/bench/kernels_h200.py).

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


def _times(fn, calls: int):
    """do_bench (ms), CUDA-graph replay (ms) and host seconds per call (no sync) of ``fn``."""
    fn()
    torch.cuda.synchronize()
    bench = triton.testing.do_bench(fn, warmup=50, rep=200)
    with torch.cuda.stream(torch.cuda.Stream()):
        graph = triton.testing.do_bench_cudagraph(fn, rep=100)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - t0) / calls
    torch.cuda.synchronize()
    return bench, graph, host


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel")
    ap.add_argument("case")
    ap.add_argument("--dtype")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--baselines", action="store_true", help="also time the vendor baselines' host cost")
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
    bench, graph, host = _times(fn, args.calls)
    if args.baselines:
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        import kernels_h200

        for name, base in kernels_h200.baselines(args.kernel, inputs).items():
            b_bench, b_graph, b_host = _times(base, args.calls)
            print(f"{name}: do_bench {b_bench * 1e3:.1f} us, graph (GPU) {b_graph * 1e3:.1f} us, "
                  f"host per call (no sync) {b_host * 1e6:.1f} us")
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
