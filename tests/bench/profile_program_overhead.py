"""What `tritondbg profile -- CMD` costs a program: run it plain and under `tritondbg profile --`, interleaved.

    python tests/bench/profile_program_overhead.py [--repeat 5] [--program FILE [ARGS...]]

Without ``--program`` a built-in CPU program runs: torch work on the CPU (matmuls, ~0.5 s) and a few launches
of a tiny Triton kernel (under the interpreter when there is no GPU; compiled on a GPU). Any program can be
given instead; if it prints ``main_s=<seconds>`` (its own main()'s time) that is reported too. On the GPU:

    python tests/bench/profile_program_overhead.py --repeat 5 --program tests/gpu/profile_program.py --steps 20

Printed per run (median over the rounds, plain vs attached):
- ``main()``: the program's own figure (``main_s=``), when it prints one;
- ``first line -> exit``: from the program's first line (a ``runpy`` wrapper stamps ``time.monotonic()``
  before the program runs) to the end of its process as the caller sees it;
- ``whole command``: what a user waits for (attached: program + tritondbg's report);
- tritondbg's breakdown, from the run record (``extra.profile.program.overhead``): start (bootstrap, attach,
  profiler start), per launch, exit (profiler stop, trace export), report.
Then, with ``--launches N``, the per-launch cost of the observer (tritondbg/profile/program.py) on a stand-in
launch (no Triton, no GPU): plain call vs observer outside the window vs observer with its session recording.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAM = r'''
import time
T0 = time.perf_counter()
import sys
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main(launches, size):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.randn(size, size, device=dev)
    x = torch.randn(4096, device=dev)
    out = torch.empty_like(x)
    for i in range(launches):
        for _ in range(4):
            a = torch.tanh(a @ a)
        add_kernel[(4,)](x, x, out, x.numel(), BLOCK=1024)
    if dev == "cuda":
        torch.cuda.synchronize()


t = time.perf_counter()
main(int(sys.argv[1]), int(sys.argv[2]))
print(f"main_s={time.perf_counter() - t:.4f}")
'''

WRAPPER = ("import sys, time, runpy; sys.stderr.write(f'BENCH_FIRST_LINE={time.monotonic()}\\n'); "
           "sys.argv = sys.argv[1:]; import os; sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0])); "
           "runpy.run_path(sys.argv[0], run_name='__main__')")


def _run(argv: list[str], env: dict) -> dict:
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    t1 = time.monotonic()
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(argv[:6])}... exited {p.returncode}: {p.stderr[-800:]}")
    first = next((float(line.split("=", 1)[1]) for line in p.stderr.splitlines()
                  if line.startswith("BENCH_FIRST_LINE=")), None)
    m = re.search(r"\bmain_s=([0-9.]+)", p.stdout)
    main_s = float(m.group(1)) if m else None
    return {"whole_s": t1 - t0, "first_line_s": first, "main_s": main_s, "t0": t0, "t1": t1}


def one_round(prog: list[str], env: dict, out: str) -> tuple[dict, dict]:
    plain = _run([sys.executable, "-c", WRAPPER, *prog], env)
    plain["to_exit_s"] = plain["t1"] - plain["first_line_s"]
    js = os.path.join(out, "p.json")
    attached = _run([sys.executable, "-m", "tritondbg", "profile", "--out", out, "--json", js, "--",
                     "python", "-c", WRAPPER, *prog], env)
    info = json.load(open(js))
    o = info.get("overhead") or {"report_s": info.get("report_s")}  # (a tritondbg before the breakdown existed)
    attached["breakdown"] = o
    if "exited_at" not in o:
        attached["to_exit_s"] = None
        return plain, attached
    ph = json.load(open(info["record"]))["extra"]["profile"]["program"]["processes"][0]["overhead"]["phases"]
    attached["to_exit_s"] = o["exited_at"] - attached["first_line_s"]  # the child's exit, as tritondbg saw it
    o["before_s"] = o["started_at"] - attached["t0"]  # tritondbg's process start, up to starting the program
    o["after_s"] = attached["t1"] - o["exited_at"]    # after the program: report, record, console
    attached["bootstrap_to_first_line_s"] = attached["first_line_s"] - ph["bootstrap"]
    return plain, attached


def observer_per_launch(n: int) -> dict[str, float]:
    """us per launch of a stand-in launch: plain, through the observer outside its window, inside it."""
    import torch

    from tritondbg.profile import program
    from tritondbg.program.attach import Launch

    x = torch.zeros(16)
    launch = Launch(fn=object(), name="k", qualname="k", module="m", file="k.py", line=1,
                    args={"x_ptr": x, "y_ptr": x, "n": 16, "BLOCK": 64}, options={}, grid=(1,), config=None)

    def proceed():
        return None

    out = {}
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "tritondbg"))
        cfg = {"run_dir": os.path.join(d, "tritondbg"), "trace_dir": d}
        for label, kw in (("outside window", {"skip": 10 ** 9}), ("in tritondbg's session", {})):
            p = program.ProgramProfiler({**cfg, **kw})
            for _ in range(100):
                p.around(launch, proceed)
            t = time.perf_counter()
            for _ in range(n):
                p.around(launch, proceed)
            out[label] = (time.perf_counter() - t) / n * 1e6
            p.finish()
        t = time.perf_counter()
        for _ in range(n):
            proceed()
        out["plain call"] = (time.perf_counter() - t) / n * 1e6
    return out


def op_cost_under_profiler(n: int, rounds: int = 7) -> dict[str, float]:
    """us per small torch op (CPU): no profiler, tritondbg's session (record_shapes off, its default), with
    record_shapes (TRITONDBG_RECORD_SHAPES=1); min over interleaved rounds."""
    import torch

    x = torch.ones(8)

    def ops():
        y = x
        t = time.perf_counter()
        for _ in range(n):
            y = y + 1
        return (time.perf_counter() - t) / n * 1e6

    best: dict[str, float] = {}
    cpu = [torch.profiler.ProfilerActivity.CPU]
    for _ in range(rounds):
        for label, shapes in (("no profiler", None), ("session", False), ("session + record_shapes", True)):
            if shapes is None:
                v = ops()
            else:
                with torch.profiler.profile(activities=cpu, record_shapes=shapes):
                    v = ops()
            best[label] = min(best.get(label, v), v)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--launches", type=int, default=20, help="Triton launches of the built-in program")
    ap.add_argument("--size", type=int, default=256, help="matmul size of the built-in program")
    ap.add_argument("--observer-launches", type=int, default=20000, help="stand-in launches (0: skip)")
    ap.add_argument("--program", nargs=argparse.REMAINDER, help="FILE [ARGS...] instead of the built-in one")
    args = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # tritondbg pins it in the program (Triton 3.9 warns if unset)
    if not os.path.exists("/dev/nvidiactl"):  # no GPU: the plain run under the interpreter too, as tritondbg does
        env["TRITON_INTERPRET"] = "1"
        env.setdefault("OMP_NUM_THREADS", "1")  # a shared CPU machine: one thread each, less noise
    with tempfile.TemporaryDirectory() as tmp:
        if args.program:
            prog = args.program
        else:
            path = os.path.join(tmp, "bench_program.py")
            with open(path, "w") as f:
                f.write(PROGRAM)
            prog = [path, str(args.launches), str(args.size)]
        rounds = []
        for i in range(args.repeat):
            rounds.append(one_round(prog, env, os.path.join(tmp, "runs")))
            print(f"round {i + 1}/{args.repeat}: whole {rounds[-1][0]['whole_s']:.2f} s plain, "
                  f"{rounds[-1][1]['whole_s']:.2f} s attached", flush=True)

    def med(side: int, key: str, sub: str | None = None):
        vals = [(r[side][sub] if sub else r[side]).get(key) for r in rounds]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    def fmt(v, unit="s"):
        return "-" if v is None else (f"{v:.3f} s" if unit == "s" else f"{v:.1f} us")

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load {load:.1f}, "
          f"median of {args.repeat} interleaved rounds; program: {' '.join(prog[1:]) if not args.program else prog}")
    print("| figure | plain | attached | added |\n|---|---|---|---|")
    for label, key in (("program's main()", "main_s"), ("first line -> exit", "to_exit_s"),
                       ("whole command", "whole_s")):
        a, b = med(0, key), med(1, key)
        added = "-" if a is None or b is None else f"{b - a:+.3f} s ({100 * (b - a) / a:+.1f}%)"
        print(f"| {label} | {fmt(a)} | {fmt(b)} | {added} |")
    print("\ntritondbg's breakdown (attached, median):")
    print(f"tritondbg's process before the program starts {fmt(med(1, 'before_s', 'breakdown'))}, after it "
          f"exits {fmt(med(1, 'after_s', 'breakdown'))} (of which report {fmt(med(1, 'report_s', 'breakdown'))})")
    cols = [("start", "start_s"), ("of which attach", "attach_s"), ("profiler start", "session_start_s"),
            ("per launch", "per_launch_us"), ("launches", "launches"), ("exit", "exit_s"),
            ("profiler stop", "profiler_stop_s"), ("trace export", "export_s"), ("report", "report_s"),
            ("python start", "python_start_s"), ("teardown", "teardown_s")]
    print("| " + " | ".join(c for c, _ in cols) + " | bootstrap -> first line |")
    print("|---" * (len(cols) + 1) + "|")
    cells = [str(med(1, k, "breakdown")) if k == "launches" else fmt(med(1, k, "breakdown"), "us" if k.endswith("us")
                                                                    else "s") for _, k in cols]
    print("| " + " | ".join(cells + [fmt(med(1, "bootstrap_to_first_line_s"))]) + " |")
    if args.observer_launches:
        os.environ.setdefault("KINETO_LOG_LEVEL", "6")
        per = observer_per_launch(args.observer_launches)
        print("\nobserver per launch (stand-in launch, no Triton): "
              + ", ".join(f"{k} {v:.2f} us" for k, v in per.items()))
        ops = op_cost_under_profiler(args.observer_launches // 4)
        print("a small torch op on the CPU (min of 7 rounds): " + ", ".join(f"{k} {v:.2f} us" for k, v in ops.items()))


if __name__ == "__main__":
    main()
