"""Programs that wait for each other (interp/spins.py ``SpinWatch``): the interpreter runs a launch's programs one
after another, so a grid-wide barrier spins forever there. Under the sanitizers the launch stops with a message
that says why, instead of hanging; a bounded poll loop and a lock the same program takes and gives back are not
stopped. The bundled softmax's coop kernel (one launch with a barrier on a GPU) is one such kernel: its
statistics-then-output form runs under the interpreter, its one-launch form stops with the message."""
from __future__ import annotations

import signal
import sys
import time

import pytest

from conftest import run_sanitized

from tritondbg.interp import spins

pytestmark = [pytest.mark.interpreter, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

KERNELS = '''
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario
from tritondbg.kernels import softmax as SM


@triton.jit
def barrier(x_ptr, out_ptr, count_ptr, POLLS: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(x_ptr + pid) * 2)
    tl.atomic_add(count_ptr, 1)
    seen = tl.atomic_add(count_ptr, 0)
    if POLLS == 0:
        while seen < tl.num_programs(0):
            seen = tl.atomic_add(count_ptr, 0)  # WAIT
    elif POLLS == -1:  # a flag polled with volatile loads
        while tl.load(count_ptr, volatile=True) < tl.num_programs(0):  # VOLATILE
            pass
    else:
        for _ in range(POLLS):  # a bounded poll: ends on its own
            seen = tl.atomic_add(count_ptr, 0)


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(4, generator=generator).to(device), polls=case.params["polls"])


def launch(x, polls):
    out = torch.zeros_like(x)
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    barrier[(4,)](x, out, count, POLLS=polls)
    return out


def reference(x, polls):
    return x * 2


_CASES = [Case("tiny", params=dict(polls=0), dtypes=("float32",))]
waits = Scenario("waits", make_inputs, launch, reference, _CASES, kernels=[barrier])
volatile = Scenario("volatile", make_inputs, launch, reference,
                    [Case("tiny", params=dict(polls=-1), dtypes=("float32",))], kernels=[barrier])
bounded = Scenario("bounded", make_inputs, launch, reference,
                   [Case("tiny", params=dict(polls=50), dtypes=("float32",))], kernels=[barrier])


@triton.jit
def locked_sum(x_ptr, out_ptr, lock_ptr, RELEASE: tl.constexpr):
    pid = tl.program_id(0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:  # TAKE
        pass
    tl.store(out_ptr, tl.load(out_ptr) + tl.load(x_ptr + pid))
    if RELEASE:
        tl.atomic_xchg(lock_ptr, 0)


def lock_launch(x, release):
    out = torch.zeros(1, device=x.device)
    lock = torch.zeros(1, dtype=torch.int32, device=x.device)
    locked_sum[(4,)](x, out, lock, RELEASE=release)
    return out


def lock_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(4, generator=generator).to(device), release=case.params["release"])


held = Scenario("held", lock_inputs, lock_launch, lambda x, release: x.sum(0, keepdim=True),
                [Case("tiny", params=dict(release=False), dtypes=("float32",))], kernels=[locked_sum])
released = Scenario("released", lock_inputs, lock_launch, lambda x, release: x.sum(0, keepdim=True),
                    [Case("tiny", params=dict(release=True), dtypes=("float32",), atol=1e-5)], kernels=[locked_sum])


def coop_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(3, 333, generator=generator).to(device))


def coop_fused(x):
    """softmax_coop_kernel's one-launch form (what a GPU runs, e.g. replayed from a GPU capture)"""
    y = torch.empty_like(x)
    stats, count = SM._coop_scratch(x.device)()
    SM.softmax_coop_kernel[(9,)](x, y, stats, count, 333, 333, 3, 333, BLOCK_N=64, PER=2, CHUNKS=3, CHUNKS_P2=4,
                                 VEC=1, VA=1, PHASE=0)
    return y


def coop_reference(x):
    return torch.softmax(x.float(), -1)


_COOP = [Case("tiny", dtypes=("float32",))]
coop = Scenario("coop", coop_inputs, coop_fused, coop_reference, _COOP, kernels=[SM.softmax_coop_kernel])
coop_two = Scenario("coop_two", coop_inputs, lambda x: SM.softmax(x, config=("coop", 64, 1, 4, 1, 2)), coop_reference,
                    _COOP, kernels=[SM.softmax_coop_kernel])
'''


@pytest.fixture(autouse=True)
def _no_hang():
    """Should the watch ever miss the spin, the test fails after HANG_S instead of hanging the suite."""
    def stop(*_):
        raise TimeoutError("the spin was not stopped")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(HANG_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


HANG_S = 120


@pytest.fixture
def kernels(tmp_path):
    p = tmp_path / "waits.py"
    p.write_text(KERNELS)
    return p


_run = run_sanitized


def _line(tag: str) -> int:
    return next(i for i, ln in enumerate(KERNELS.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


def test_a_grid_barrier_stops_with_a_message_instead_of_hanging(kernels, monkeypatch):
    monkeypatch.setattr(spins, "SPIN_LIMIT", 300)
    t0 = time.monotonic()
    rec = _run(f"{kernels}::waits")
    assert time.monotonic() - t0 < 60
    (r,) = rec.results
    assert r.status == "error" and not rec.passed, (r.status, r.message)
    assert f"at line {_line('WAIT')}" in r.message and "waits for another program of this launch" in r.message
    assert "program (0, 0, 0)" in r.message and "read 1 every time" in r.message, r.message
    (r,) = _run(f"{kernels}::volatile").results
    assert r.status == "error" and "a volatile tl.load" in r.message and f"line {_line('VOLATILE')}" in r.message
    # --no-sanitize: the watch alone (spins.Spins), same message
    from tritondbg import runner
    from tritondbg.interp import instruments

    for name, tag in (("waits", "WAIT"), ("volatile", "VOLATILE")):
        target = f"{kernels}::{name}"
        rec = runner.run(target, mode="interpret", instruments=instruments.build(target, sanitize=False))
        (r,) = rec.results
        assert r.status == "error" and f"at line {_line(tag)}" in r.message, r.message
        assert "waits for another program of this launch" in r.message and "program (0, 0, 0)" in r.message


def test_a_bounded_poll_is_not_stopped(kernels, monkeypatch):
    """The kernel polls 50 times and goes on: under a limit of 60 repeats it passes; under 20 it is stopped (the
    watch counts repeats in a row, it cannot tell a bounded loop from an endless one)."""
    monkeypatch.setattr(spins, "SPIN_LIMIT", 60)
    rec = _run(f"{kernels}::bounded")
    assert rec.passed, rec.results[0].message
    monkeypatch.setattr(spins, "SPIN_LIMIT", 20)
    rec = _run(f"{kernels}::bounded")
    assert rec.results[0].status == "error" and "waits for another program" in rec.results[0].message


def test_the_bundled_coop_softmax_in_one_launch_stops_and_in_two_passes(kernels, monkeypatch):
    monkeypatch.setattr(spins, "SPIN_LIMIT", 300)
    rec = _run(f"{kernels}::coop")
    (r,) = rec.results
    assert r.status == "error" and "softmax_coop_kernel" in r.message and "waits for another program" in r.message
    rec = _run(f"{kernels}::coop_two")
    assert rec.passed and not rec.results[0].findings, rec.results[0].message


def test_a_lock_a_finished_program_never_gave_back_is_named_as_such(kernels, monkeypatch):
    """A helper's report: program 0 took the lock and ended holding it; program 1's spin was explained as "a
    grid-wide barrier ... runs on a GPU only: split it into launches", sending the user after the wrong fix."""
    monkeypatch.setattr(spins, "SPIN_LIMIT", 300)
    (r,) = _run(f"{kernels}::held").results
    assert r.status == "error", r.message
    assert "program (1, 0, 0)" in r.message and f"program (0, 0, 0) took that lock with tl.atomic_cas at line " \
        f"{_line('TAKE')} and ended without giving it back" in r.message, r.message
    assert "grid-wide barrier" not in r.message, r.message
    rec = _run(f"{kernels}::released")
    assert rec.passed and not rec.results[0].findings, rec.results[0].message


def test_a_kernel_error_is_printed_once(kernels, monkeypatch):
    """Every kernel error was printed twice: its finding block, then the same text as the case's message line."""
    import io

    from rich.console import Console

    from tritondbg.render.console import print_case

    monkeypatch.setattr(spins, "SPIN_LIMIT", 300)
    (r,) = _run(f"{kernels}::held").results
    buf = io.StringIO()
    print_case(Console(file=buf, width=400), r)
    assert buf.getvalue().count("ended without giving it back") == 1, buf.getvalue()


BARRIER_PROGRAM = '''
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
    tl.atomic_add(cnt_ptr, 1)
    while tl.atomic_add(cnt_ptr, 0) < tl.num_programs(0):  # SPIN
        pass

x = torch.zeros(1000, device="cuda")
k[(4,)](x, torch.zeros(1, dtype=torch.int32, device="cuda"), 1000, BLOCK=256)
'''


@pytest.mark.parametrize("args", [["capture"], ["interpret", "--no-sanitize"]], ids=["capture", "no_sanitize"])
def test_a_grid_barrier_stops_without_the_sanitizers_too(tmp_path, cli_env, args):
    """helper-141: ``capture`` (no sanitizers) of a kernel whose programs wait for each other hung with no line until
    killed; the spin watch lived in the sanitizer. Now it stops the launch with the same message in seconds."""
    from conftest import run_cli

    (tmp_path / "barrier.py").write_text(BARRIER_PROGRAM)
    t0 = time.monotonic()
    proc = run_cli([*args, "--", sys.executable, "barrier.py"], cli_env, cwd=tmp_path, timeout=240)
    assert time.monotonic() - t0 < 200
    out = proc.stdout + proc.stderr
    line = next(i for i, ln in enumerate(BARRIER_PROGRAM.splitlines(), 1) if ln.rstrip().endswith("# SPIN"))
    assert proc.returncode != 0, out
    assert f"ran tl.atomic_add on cnt_ptr[0] at line {line} 5001 times in a row" in out, out[-3000:]
    assert "waits for another program of this launch" in out
