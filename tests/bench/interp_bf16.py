"""Benchmark: `tritondbg interpret` on the bundled bf16 cases (issue 14: the low-precision arithmetic shim
keeps it within 1.5x of the time before it).

    python tests/bench/interp_bf16.py [--repeat 5] [target[::case] ...]

Runs each case in bfloat16 only, in one process, ``--repeat`` times, with the instruments of a default
`tritondbg interpret` (sanitizers on) and with none (`--no-sanitize`), and prints the median of the summed
launch wall times (``CaseResult.wall_s``: kernel launches only) as a markdown table.
"""
from __future__ import annotations

import argparse
import statistics
import time

DEFAULT = ["attention::tiny", "layernorm::tiny", "gemm::tiny", "softmax::tiny", "add::tiny"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from tritondbg import runner

    runner.set_mode("interpret")
    from tritondbg.interp import instruments

    print("| case (bfloat16) | --no-sanitize (s) | default, sanitizers on (s) | status |")
    print("|---|---|---|---|")
    for target in args.targets:
        name, _, case = target.partition("::")
        runner.run(name, cases=case or None, dtype="bfloat16")  # warm-up: imports, AST rewrites
        times, status = {}, set()
        for mode, sanitize in (("plain", False), ("sanitize", True)):
            samples = []
            for _ in range(args.repeat):
                rec = runner.run(name, cases=case or None, dtype="bfloat16",
                                 instruments=instruments.build(name, sanitize=sanitize))
                status |= {r.status + (f" ({len(r.findings)} finding(s))" if r.findings else "") for r in rec.results}
                samples.append(sum(r.wall_s for r in rec.results))
            times[mode] = statistics.median(samples)
        print(f"| {target} | {times['plain']:.3f} | {times['sanitize']:.3f} | {', '.join(sorted(status))} |")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
