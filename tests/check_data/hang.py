"""check_data: a kernel whose loop bound is never reached (it spins forever), and a launch that sleeps (for
interrupt tests: it writes $TRITONDBG_TEST_STARTED first, so a test knows the item is running)."""
import os
import time

import torch
import triton
import triton.language as tl
from _tiny import add_one, launch, make_inputs, reference

from tritondbg import Case, Scenario


@triton.jit
def spin(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    i = 0
    while i < n:  # BUG: i never grows
        x = x + 0.0
    tl.store(y_ptr + offs, x + 1.0, mask=offs < n)


def launch_spin(x):
    y = torch.empty_like(x)
    spin[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


def launch_sleeps(x):
    marker = os.environ.get("TRITONDBG_TEST_STARTED")
    if marker:
        open(marker, "w").close()
    time.sleep(120)
    return launch(x)


_CASES = [Case("tiny", params=dict(n=100))]
loop = Scenario("loop", make_inputs, launch_spin, reference, _CASES, kernels=[spin])
sleeps = Scenario("sleeps", make_inputs, launch_sleeps, reference, _CASES, kernels=[add_one])


def launch_deaf(x):
    """Stuck where no Python handler can run (as a compiled kernel spinning on the GPU keeps the main thread in
    C): SIGALRM is blocked, then the launch sleeps."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(120)
    return launch(x)


deaf = Scenario("deaf", make_inputs, launch_deaf, reference, _CASES, kernels=[add_one])
