"""Program mode costs (issue 16): host time added per launch while attached but not capturing, and the
speed at which capture writes tensor data. Results: tests/bench/program.md.

    python tests/bench/program_overhead.py [--launches 5000] [--mb 64]

1. Attached, not capturing (min of 21 interleaved rounds: the dev machine is shared): ``tritondbg capture`` after its per-kernel limit is reached (the Capturer has
   the kernel in its ``done`` set: ``wants`` is False). Measured on the compiled path with a stub launch
   (no GPU here): ``JITFunction.run`` is replaced by a function that returns at once, and ``kernel[grid](...)``
   is timed with and without tritondbg's wrapper around that stub, so the difference is exactly the added
   host time (Triton's own launch cost, ~10-20 us, is not in either). Also under the interpreter with an
   empty kernel (a real launch; the difference is within the interpreter's noise).
2. Capture write speed: a launch with two fp32 tensors of ``--mb`` MB each (one written by the "kernel"),
   snapshot before, copy after, and ``capture.save`` (torch.save of the bytes + the JSON + the scenario
   file) into a temporary folder on local disk; MB/s = tensor bytes written to disk / time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

COMPILED = r"""
import statistics, sys, time
import torch, triton, triton.language as tl
from triton.runtime import jit as J
from tritondbg.program import attach
from tritondbg.program.capture import Capturer

@triton.jit
def k(x_ptr, y_ptr, w_ptr, n, stride, eps, BLOCK: tl.constexpr, FLAG: tl.constexpr):
    pass

def stub(self, *args, grid, warmup, **kwargs):
    return None

x, y, w = torch.zeros(4), torch.zeros(4), torch.zeros(4)
N = int(sys.argv[1])

def loop():
    t0 = time.perf_counter()
    for _ in range(N):
        k[(4,)](x, y, w, 4, 1, 1e-5, BLOCK=64, FLAG=True)
    return (time.perf_counter() - t0) / N * 1e6

orig = J.JITFunction.__dict__["run"]
plain, attached = [], []
cap = Capturer({"run_dir": "/nonexistent", "max_per_kernel": 1})
cap.done.add(id(k))                       # the per-kernel limit is reached
for _ in range(21):
    J.JITFunction.run = stub
    plain.append(loop())
    attach._observers[:] = [cap]
    J.JITFunction.run = attach._wrap_run(stub, False)
    attached.append(loop())
    attach._observers[:] = []
J.JITFunction.run = orig
p, a = min(plain), min(attached)   # min of 21 interleaved rounds: the machine is shared
print(f"compiled path, stub launch: plain {p:.2f} us/launch, attached (limit reached) {a:.2f} us/launch, "
      f"added {a - p:.2f} us (min of 21 rounds; medians {statistics.median(plain):.2f} / "
      f"{statistics.median(attached):.2f})")
"""

INTERPRETED = r"""
import statistics, sys, time
import torch, triton, triton.language as tl
from tritondbg.program import attach
from tritondbg.program.capture import Capturer

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

x = torch.zeros(4)
N = int(sys.argv[1])

def loop():
    t0 = time.perf_counter()
    for _ in range(N):
        k[(1,)](x, 4, BLOCK=64)
    return (time.perf_counter() - t0) / N * 1e6

cap = Capturer({"run_dir": "/nonexistent", "max_per_kernel": 1})
cap.done.add(id(k))
plain, attached = [], []
loop()
for _ in range(5):
    plain.append(loop())
    attach.add_observer(cap)
    attached.append(loop())
    attach.remove_observer(cap)
p, a = statistics.median(plain), statistics.median(attached)
print(f"interpreter, empty kernel: plain {p:.1f} us/launch, attached (limit reached) {a:.1f} us/launch, "
      f"added {a - p:.1f} us")
"""


def write_speed(mb: int, repeat: int) -> None:
    import torch

    from tritondbg.program import attach, capture

    n = mb * 1_000_000 // 4
    x, y = torch.randn(n), torch.zeros(n)
    rates, synced, totals, raw = [], [], [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as out:
            launch = attach.Launch(fn=None, name="k", qualname="k", module="m", file=__file__, line=1,
                                   args={"x": x, "y": y, "n": n}, options={}, grid=(1,))
            t0 = time.perf_counter()
            snap = capture.snapshot(launch)
            capture.copy_before(snap)
            y.add_(1.0)                                   # "the kernel" writes y
            after = capture.copy_after(snap)
            t1 = time.perf_counter()
            entry = capture.save(out, "k_0", launch, snap, after)
            t2 = time.perf_counter()
            os.sync()
            t3 = time.perf_counter()
            on_disk = sum(os.path.getsize(os.path.join(out, "data", f)) for f in os.listdir(os.path.join(out, "data")))
            t4 = time.perf_counter()                      # the same bytes written raw: what the disk gives now
            for i, buf in enumerate(snap.before + list(after)):
                with open(os.path.join(out, f"raw{i}.bin"), "wb") as f:
                    f.write(memoryview(buf.contiguous().numpy()))
            raw.append(on_disk / 1e6 / (time.perf_counter() - t4))
            rates.append(on_disk / 1e6 / (t2 - t1))
            synced.append(on_disk / 1e6 / (t3 - t1))
            totals.append(entry["bytes"] / 1e6 / (t2 - t0))
    print(f"capture write: {on_disk / 1e6:.0f} MB to disk per launch (2 inputs + 1 output of {mb} MB); "
          f"save {statistics.median(rates):.0f} MB/s (page cache), save+os.sync {statistics.median(synced):.0f} MB/s; "
          f"snapshot+copies+save {statistics.median(totals):.0f} MB/s; the same bytes written raw "
          f"{statistics.median(raw):.0f} MB/s (median of {repeat})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=5000)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    with tempfile.TemporaryDirectory() as tmp:   # @triton.jit needs its source in a file
        for name, code, n, extra in (("compiled.py", COMPILED, args.launches, {}),
                                     ("interpreted.py", INTERPRETED, max(args.launches // 20, 200),
                                      {"TRITON_INTERPRET": "1"})):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(code)
            subprocess.run([sys.executable, path, str(n)], check=True, env=dict(env, **extra))
    write_speed(args.mb, args.repeat)


if __name__ == "__main__":
    main()
