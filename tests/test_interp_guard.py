"""The memory guard (guard.py): in every interpreter run, with or without the sanitizers, no lane of a
load/store/atomic touches memory outside the launch's tensors."""
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
