"""The store-vs-atomic race of tests/zoo/store_atomic_race.py on a real GPU: how often it loses adds.

    python tests/bench/store_atomic_race_gpu.py [--runs 200] [--n 1048576]

Program 0 zeroes the total that every program tl.atomic_adds into (buggy); the twin sums through a ticket counter.
The interpreter runs program 0 first, so the buggy kernel is right there every time; `tritondbg interpret` reports
the race. On a GPU, an add that lands before program 0's store is lost: this counts the runs whose total is off by
more than rounding, for both kernels, and prints one line each. Needs CUDA."""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))


def main() -> int:
    import torch

    import store_atomic_race as z

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--n", type=int, default=1 << 20)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("needs a CUDA GPU")
        return 2
    x = torch.rand(a.n, device="cuda")  # positive: a lost add shows as a smaller total
    want = x.double().sum().item()
    for name, fn in (("buggy (program 0 zeroes, all tl.atomic_add)", z._zeroed), ("twin (ticket counter)", z._ticket)):
        wrong, worst = 0, 0.0
        for _ in range(a.runs):
            got = fn(x).item()
            rel = abs(got - want) / abs(want)
            worst = max(worst, rel)
            wrong += rel > 1e-4
        print(f"{name}: {wrong}/{a.runs} runs off by more than 1e-4 relative (worst {worst:.3g}); "
              f"n={a.n}, {torch.cuda.get_device_name()}, triton {__import__('triton').__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
