"""Shifts by the type's width or more (interp/shifts.py): helper-108 planted GPTQModel's unpacking with its shifter
scaled twice (shift amounts up to 56 on int32): no finding, though LLVM makes such a shift poison and PTX clamps it."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def unpack(q_ptr, out_ptr, n, SCALE: tl.constexpr):
    offs = tl.arange(0, 64)
    packed = tl.load(q_ptr + offs // 8, mask=offs < n, other=0)
    shift = (offs % 8) * 4 * SCALE + (offs >= n) * 64  # the padding lanes' amounts are anything
    tl.store(out_ptr + offs, (packed >> shift) & 0xF, mask=offs < n)  # SHIFT

q = torch.randint(0, 2**31 - 1, (4,), dtype=torch.int32, device="cuda")
out = torch.empty(32, dtype=torch.int32, device="cuda")
unpack[(1,)](q, out, 32, SCALE=int(sys.argv[1]))
ref = torch.stack([(q >> (4 * i)) & 0xF for i in range(8)], 1).reshape(-1)
print("match", torch.equal(out, ref))
''')


@pytest.mark.parametrize("scale, told", [(1, False), (2, True)])
def test_a_shift_by_the_width_or_more_is_a_warning_at_its_line(tmp_path, cli_env, scale, told):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", str(scale)], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# SHIFT"))
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: shift in unpack")]
    assert p.returncode == 0, p.stderr[-3000:]
    if not told:  # amounts 0..28 on real lanes; the padding lanes' 64 and more are not told
        assert not warn and "match True" in p.stdout, p.stderr[-3000:]
        return
    assert len(warn) == 1 and f"prog.py:{line}" in warn[0], p.stderr[-3000:]
    assert ">> by 32 on int32 (lane (4,); 16 lane(s) used shift by 32 or more" in warn[0], warn[0]
    assert f"stored at line {line} into out_ptr[4]" in warn[0], warn[0]


DROPPED = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def bits(word_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (tl.load(word_ptr) >> offs) & 1, mask=offs < n)  # lanes 32..63: shifted, not stored

@triton.jit
def guarded(x_ptr, s_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, s = tl.load(x_ptr + offs), tl.load(s_ptr + offs)
    tl.store(out_ptr + offs, tl.where(s < 32, x << s, 0))  # amounts of 32 and more: shifted out, the where's 0

out = torch.empty(32, dtype=torch.int32, device="cuda")
bits[(1,)](torch.tensor([11], dtype=torch.int32, device="cuda"), out, 32, BLOCK=64)
s = torch.tensor([0, 1, 40, 33, 2, 3, 31, 32], dtype=torch.int32, device="cuda")
o = torch.empty(8, dtype=torch.int32, device="cuda")
guarded[(1,)](torch.arange(8, dtype=torch.int32, device="cuda"), s, o, BLOCK=8)
print("ok", out[:4].tolist(), o.tolist())
''')


def test_a_shift_whose_undefined_lanes_are_dropped_is_not_told(tmp_path, cli_env):
    """helper-110: bits past a word's width shifted in lanes a store mask drops, or that a tl.where replaces, are
    right on a GPU; they were told (and failed --strict)."""
    (tmp_path / "prog.py").write_text(DROPPED)
    p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "shift" not in p.stderr and "ok [1, 1, 0, 1]" in p.stdout, p.stderr[-3000:]
