"""Benchmark: `tritondbg interpret` on the bundled bf16 cases (issue 14: the low-precision arithmetic shim
keeps it within 1.5x of the time before it).

    python tests/bench/interp_bf16.py [--repeat 5] [target[::case] ...]

Runs each case in bfloat16 only, in one process, ``--repeat`` times, with the instruments of a default
`tritondbg interpret` (sanitizers on) and with none (`--no-sanitize`), and prints medians as a markdown
table: the summed launch wall times (``CaseResult.wall_s``: kernel launches only) and the process CPU time
of the whole case (inputs, reference, launches, comparison; steadier than wall time on a shared machine).
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

    print("| case (bfloat16) | --no-sanitize: launches wall (s) | CPU (s) | sanitizers on: launches wall (s) "
          "| CPU (s) | status |")
    print("|---|---|---|---|---|---|")
    for target in args.targets:
        name, _, case = target.partition("::")
        runner.run(name, cases=case or None, dtype="bfloat16")  # warm-up: imports, AST rewrites
        times, cpu, status = {}, {}, set()
        for mode, sanitize in (("plain", False), ("sanitize", True)):
            samples, cpus = [], []
            for _ in range(args.repeat):
                c0 = time.process_time()
                rec = runner.run(name, cases=case or None, dtype="bfloat16",
                                 instruments=instruments.build(name, sanitize=sanitize))
                cpus.append(time.process_time() - c0)
                status |= {r.status + (f" ({len(r.findings)} finding(s))" if r.findings else "") for r in rec.results}
                samples.append(sum(r.wall_s for r in rec.results))
            times[mode], cpu[mode] = statistics.median(samples), statistics.median(cpus)
        print(f"| {target} | {times['plain']:.3f} | {cpu['plain']:.3f} | {times['sanitize']:.3f} | "
              f"{cpu['sanitize']:.3f} | {', '.join(sorted(status))} |")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
