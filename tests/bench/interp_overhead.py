"""Benchmark: cost of the sanitizers and the stepper over the plain interpreter (issue 3: at most 3x).

    python tests/bench/interp_overhead.py [--repeat 5] [target[::case] ...]

Runs each case's dtypes in one process under the interpreter, ``--repeat`` times per mode, and reports the
median of the summed launch wall times (``CaseResult.wall_s``: the kernel launches only, not input
generation or the torch reference) for: plain (no instrument), sanitize (the default of `tritondbg
interpret`), sanitize + stepper tracing pid (0, 0, 0) with --trace. Prints a markdown table.
"""
from __future__ import annotations

import argparse
import statistics
import time

DEFAULT = ["attention::tiny", "gemm::tiny"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from tritondbg import runner

    runner.set_mode("interpret")
    from tritondbg.interp.attribution import KernelReport
    from tritondbg.interp.sanitize import Sanitizer
    from tritondbg.interp.stepper import Stepper

    modes = {
        "plain": lambda: [],
        "sanitize": lambda: [KernelReport(), Sanitizer()],
        "sanitize+trace": lambda: [KernelReport(), Sanitizer(), Stepper((0, 0, 0), trace=True)],
    }
    print("| case | plain (s) | sanitize (s) | ratio | sanitize + trace pid 0 (s) | ratio |")
    print("|---|---|---|---|---|---|")
    for target in args.targets:
        name, _, case = target.partition("::")
        runner.run(name, cases=case or None)  # warm-up: imports, AST rewrites
        times = {}
        for mode, make in modes.items():
            samples = []
            for _ in range(args.repeat):
                rec = runner.run(name, cases=case or None, instruments=make())
                bad = [r for r in rec.results if not r.passed]
                if bad:
                    raise SystemExit(f"{target} {mode}: {bad[0].status} {bad[0].message}")
                samples.append(sum(r.wall_s for r in rec.results))
            times[mode] = statistics.median(samples)
        p, s, t = times["plain"], times["sanitize"], times["sanitize+trace"]
        print(f"| {target} (dtypes of the case) | {p:.3f} | {s:.3f} | {s / p:.2f}x | {t:.3f} | {t / p:.2f}x |")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
