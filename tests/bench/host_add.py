"""Issue 18, host cost: add's steady-state call piece by piece, with a count of cached-launcher hits and a cProfile
of 20000 calls (where the Python of the wrapper goes).

    python tests/bench/host_add.py [--calls 20000]

Each timed line: min over 7 rounds of the mean host time per call (no sync inside a round). Needs a CUDA GPU.
"""
from __future__ import annotations

import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from host_breakdown import cuda_args, per_call  # noqa: E402


def main(argv=None) -> int:
    args = cuda_args(argv, __doc__.splitlines()[0])
    if args is None:
        return 2
    import torch

    from tritondbg.kernels import _launch
    from tritondbg.kernels import add as ADD

    x = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    y = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    ADD.add(x, x)
    ADD.add(x, y)
    hits = [0, 0]
    plan = ADD._LAUNCHES.plan

    def counting(sig, *tensors):
        p = plan(sig, *tensors)
        hits[p is None] += 1
        return p
    ADD._LAUNCHES.plan = counting
    for _ in range(100):
        ADD.add(x, x)
    ADD._LAUNCHES.plan = plan
    launcher = next(iter(ADD._LAUNCHES.plans.values()))
    print(f"cached launcher hit/miss {hits}, plans {len(ADD._LAUNCHES.plans)}, hooks idle {_launch.hooks_idle()}, "
          f"pristine {_launch.pristine(launcher.kernel)}, direct C entry {launcher.direct is not None}")
    for name, fn in (("add(x, x)", lambda: ADD.add(x, x)), ("add(x, y)", lambda: ADD.add(x, y)),
                     ("x + y", lambda: x + y),
                     ("empty_like(contiguous_format)", lambda: torch.empty_like(x, memory_format=torch.contiguous_format)),
                     ("empty_like", lambda: torch.empty_like(x)),
                     ("launcher(x, y, empty_like(x))", lambda: launcher(x, y, torch.empty_like(x)))):
        print(f"{per_call(fn, args.calls):8.2f} us  {name}", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        ADD.add(x, y)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
