"""The memory guard (guard.py): in every interpreter run, with or without the sanitizers, no lane of a
load/store/atomic touches memory outside the launch's tensors."""
import sys
from pathlib import Path

import pytest
import torch

from conftest import run_cli

pytestmark = pytest.mark.interpreter

WILD = Path(__file__).resolve().parent / "interp_data" / "wild_store.py"


def test_store_far_past_the_end_does_not_crash_without_the_sanitizer(cli_env):
    # plain TRITON_INTERPRET=1 writes to an unmapped address here: the process dies with SIGSEGV
    # (the lanes it kept out fail the run: without sanitizers the guard's count is the only word on them)
    p = run_cli(["interpret", f"{WILD}::far", "--no-sanitize"], cli_env, timeout=300)
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "FAIL far" in p.stdout and "the memory guard kept them out (skipped)" in p.stdout, p.stdout[-2000:]
    assert "max abs err 0," in p.stdout  # the output itself matched: only the guard says why it is no pass


def test_sanitizer_still_reports_what_the_guard_masks(cli_env):
    p = run_cli(["interpret", f"{WILD}::far"], cli_env, timeout=300)
    assert p.returncode == 1 and "out_of_bounds" in p.stdout, p.stdout[-2000:]


def test_memory_outside_the_arguments_is_never_written():
    import triton
    import triton.language as tl

    from tritondbg.interp import guard

    @triton.jit
    def poke(y_ptr, delta, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(y_ptr + offs, offs.to(tl.float32))
        tl.store(y_ptr + delta + offs, offs.to(tl.float32) + 100.0)        # lands in `canary`, not an argument
        tl.atomic_add(y_ptr + delta + offs, 1.0)
        tl.atomic_cas(y_ptr + delta + offs, offs.to(tl.float32) * 0.0, offs.to(tl.float32) * 0.0 + 7.0)

    assert guard.installed()
    canary = torch.full((64,), -1.0)
    y = torch.zeros(16)
    delta = (canary.data_ptr() - y.data_ptr()) // 4
    before = guard.masked()
    poke[(1,)](y, delta, N=16)
    assert torch.equal(canary, torch.full((64,), -1.0))  # the plain interpreter writes 100.0 + i here
    assert torch.equal(y, torch.arange(16.0))
    assert guard.masked() - before == 3 * 16
    guard.allow(canary)
    try:
        poke[(1,)](y, delta, N=16)
    finally:
        guard.clear_allowed()
    assert canary[:16].tolist() == [101.0 + i for i in range(16)]  # allowed memory: written as the kernel says


def test_bf16_atomics_emulated_by_the_shims_are_guarded_too():
    import triton
    import triton.language as tl

    @triton.jit
    def poke16(y_ptr, delta, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.atomic_add(y_ptr + delta + offs, tl.full((N,), 1.0, tl.bfloat16))

    canary = torch.full((64,), -1.0, dtype=torch.bfloat16)
    y = torch.zeros(16, dtype=torch.bfloat16)
    poke16[(1,)](y, (canary.data_ptr() - y.data_ptr()) // 2, N=16)
    assert torch.equal(canary, torch.full((64,), -1.0, dtype=torch.bfloat16))
    poke16[(1,)](y, 0, N=16)
    assert torch.equal(y, torch.ones(16, dtype=torch.bfloat16))


def test_program_mode_without_sanitizers_fails_on_lanes_the_guard_kept_out(cli_env, tmp_path):
    """helper-57: `interpret --no-sanitize -- CMD` passed a launch whose unmasked load ran 28 lanes past its tensor
    ("1 launch(es), 0 finding(s)", exit 0) where the kernel form fails it: the guard's count is an error there too."""
    (tmp_path / "prog.py").write_text(
        "import torch, triton, triton.language as tl\n\n"
        "@triton.jit\n"
        "def copy(x, y, n, B: tl.constexpr):\n"
        "    c = tl.program_id(0) * B + tl.arange(0, B)\n"
        "    tl.store(y + c, tl.load(x + c), mask=c < n)\n\n"
        "x = torch.randn(100, device='cuda'); y = torch.empty_like(x)\n"
        "copy[(1,)](x, y, 100, B=128)\n"
        "print('same', bool((x == y).all()))\n")
    p = run_cli(["interpret", "--no-sanitize", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path, timeout=300)
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "same True" in p.stdout  # the program's own check passes: only the guard's count tells
    assert "out_of_bounds in copy at prog.py:6: 28 lane(s) of a load" in p.stderr, p.stderr[-2000:]
    # the summary says the sanitizers were off (helper-66: it read as a full check)
    assert "(--no-sanitize: only the memory guard checked them)" in p.stderr, p.stderr[-2000:]
