"""Program mode on many small launches: what the sanitizers cost per launch (session 36, a helper's report).

    python tests/bench/small_launches.py            # prints three lines: plain, interpret --, --no-sanitize

Runs one program (200 launches of a 3001-element x * sigmoid(x) kernel, 12 programs each) three ways on the
CPU: plain ``TRITON_INTERPRET=1``, ``tritondbg interpret --`` and ``tritondbg interpret --no-sanitize --``, and
prints each one's time for the launch loop (the program times itself: imports and attaching are not in it).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

PROGRAM = '''
import time, torch, triton, triton.language as tl

@triton.jit
def silu(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(o_ptr + offs, x * tl.sigmoid(x), mask=m)

x = torch.randn(3001)
o = torch.empty_like(x)
t = time.perf_counter()
for _ in range(200):
    silu[(triton.cdiv(3001, 256),)](x, o, 3001, BLOCK=256)
print(f"LOOP {time.perf_counter() - t:.2f}")
'''


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "prog.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        ways = [("plain TRITON_INTERPRET=1", [sys.executable, prog], dict(env, TRITON_INTERPRET="1")),
                ("tritondbg interpret --", [sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable,
                                            prog], env),
                ("tritondbg interpret --no-sanitize --", [sys.executable, "-m", "tritondbg", "interpret",
                                                          "--no-sanitize", "--", sys.executable, prog], env)]
        for name, cmd, e in ways:
            out = subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=tmp, timeout=1800)
            m = re.search(r"LOOP ([0-9.]+)", out.stdout)
            print(f"{name}: {m.group(1) + ' s for 200 launches' if m else 'failed: ' + out.stderr[-300:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
