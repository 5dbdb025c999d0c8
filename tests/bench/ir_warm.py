"""Benchmark: `tritondbg ir gemm --stage ptx` end to end, cold (empty cache) vs warm (cache hit).

Targets (issue 4): warm <= 2 s wall on the dev machine and >= 5x faster than a cold compile.

Each measurement is a fresh `python -m tritondbg ...` process (what a user types), timed from spawn to exit,
output to a pipe. Cold: a new empty TRITON_CACHE_DIR. Warm: the same command again (the tritondbg index finds
the cache entry without importing torch). Also timed: the same hit with --no-index (Triton's own key recomputed
from the real arguments: imports torch, builds the inputs, hashes the kernel source), to show what the index
saves. Prints a Markdown section for tests/bench/ir.md.

    python tests/bench/ir_warm.py [--repeat 5] [--case tiny] [--arch sm_90]
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run(args: list[str], env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "tritondbg", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed: tritondbg {' '.join(args)}\n{p.stderr}")
    return wall, p.stderr


def import_breakdown(args: list[str], env: dict, top: int = 8) -> list[tuple[float, str]]:
    """Cumulative import time (s) of the slowest top-level imports of one warm call (python -X importtime)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "tritondbg", *args], env=env, capture_output=True,
                       text=True)
    rows = []
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if m and not m.group(2).startswith(" "):
            rows.append((int(m.group(1)) / 1e6, m.group(2).strip()))
    return sorted(rows, reverse=True)[:top]


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def versions(env: dict) -> str:
    code = ("import importlib.metadata as m\n"
            "print(', '.join(f'{p} {m.version(p)}' for p in ('torch', 'triton')))")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--case", default=None, help="default: the scenario's default (tiny)")
    ap.add_argument("--arch", default=None, help="default: the local GPU, else sm_90")
    a = ap.parse_args()
    cmd = ["ir", "gemm", "--stage", "ptx"] + (["--case", a.case] if a.case else []) + \
        (["--arch", a.arch] if a.arch else [])
    with tempfile.TemporaryDirectory(prefix="tritondbg-ir-bench-") as tmp:
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        env.update(TRITON_CACHE_DIR=os.path.join(tmp, "cache"), TRITONDBG_OUT=os.path.join(tmp, "traces"))
        cold, err = run(cmd, env)
        assert "cache miss" in err, err
        compile_s = float(re.search(r"compiled for \S+ in ([\d.]+) s", err).group(1))
        warm = []
        for _ in range(a.repeat):
            wall, err = run(cmd, env)
            assert "cache hit" in err and "tritondbg index" in err, err
            warm.append(wall)
        rekey = []
        for _ in range(max(1, a.repeat // 2)):
            wall, err = run(cmd + ["--no-index"], env)
            assert "cache hit" in err and "Triton cache)" in err, err
            rekey.append(wall)
        imports = import_breakdown(cmd, env)
    w = statistics.median(warm)
    print(f"## {dt.date.today()}: {platform.node()}, {os.cpu_count()} cores ({cpu_model()}), "
          f"Python {platform.python_version()}, {versions(env)}\n")
    print(f"Command: `tritondbg {' '.join(cmd)}` (output piped), each a new process; "
          f"`python tests/bench/ir_warm.py{' --case ' + a.case if a.case else ''}`\n")
    print("| run | wall (s) |\n|---|---|")
    print(f"| cold: empty cache (torch import + capture + compile {compile_s:.2f} s) | {cold:.2f} |")
    print(f"| warm: cache hit through the tritondbg index, median of {len(warm)} "
          f"(min {min(warm):.2f}, max {max(warm):.2f}) | **{w:.2f}** |")
    print(f"| warm with --no-index: Triton's key recomputed (imports torch), median of {len(rekey)} | "
          f"{statistics.median(rekey):.2f} |")
    print(f"\nWarm vs cold: **{cold / w:.1f}x** faster (target >= 5x); warm {w:.2f} s (target <= 2 s).\n")
    print("Slowest imports of a warm call (`python -X importtime`, cumulative s):\n")
    print("| module | s |\n|---|---|")
    for secs, mod in imports:
        print(f"| {mod} | {secs:.3f} |")


if __name__ == "__main__":
    main()
