"""Two programs storing the same quantity, computed in another summation order, into one element (helper-112:
modded-nanogpt's XXT stores its tile and the tile's mirror; with a 64x128 tile overlapping tiles meet, and the
interpreter's tl.dot sums with numpy in an order that depends on the element's place in the tile: 6e-8 apart in
fp32, 1 ulp in bf16). That was a race error, and `check`'s sanitize gate failed correct upstream code. Floats
apart by rounding only (ROUNDING_EPS epsilons of the largest value written there, never 0 against a value) are a warning that says so;
values further apart stay an error."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from conftest import run_cli

from tritondbg.interp import races

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def near(v_ptr, out_ptr):
    tl.store(out_ptr + tl.arange(0, 2), tl.load(v_ptr + tl.program_id(0) * 2 + tl.arange(0, 2)))  # NEAR

@triton.jit
def far(v_ptr, out_ptr):
    tl.store(out_ptr + tl.arange(0, 2), tl.load(v_ptr + tl.program_id(0) * 2 + tl.arange(0, 2)))  # FAR

one = 1.0
up = torch.nextafter(torch.tensor(one), torch.tensor(2.0)).item()
for dt in (torch.float32, torch.bfloat16):
    step = up - one if dt == torch.float32 else 2.0 ** -7  # one unit in the last place of 1.0
    # programs 0 and 1 store [1.0, 1e-3] and [1.0 + 1 ulp, 1e-3 + 3 ulps of 1.0]: a sum that cancels near 0 differs
    # by many units in its own last place, not in the last place of the terms
    v = torch.tensor([one, 1e-3, one + step, 1e-3 + 3 * step], dtype=dt)
    out = torch.zeros(2, device="cuda", dtype=dt)
    near[(2,)](v.to("cuda"), out)
    far[(2,)](torch.tensor([one, 0.0, 1.5, 0.0], dtype=dt).to("cuda"), out)
print("done")
''')


def _line(tag):
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


def test_values_apart_by_rounding_are_a_warning_and_values_apart_more_an_error(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    lines = p.stderr.splitlines()
    near = [ln for ln in lines if ln.startswith(f"tritondbg: warning: race in near at prog.py:{_line('NEAR')}")]
    far = [ln for ln in lines if ln.startswith(f"tritondbg: race in far at prog.py:{_line('FAR')}")]
    assert len(near) == 1 and "with values apart by rounding only (at most" in near[0], p.stderr[-3000:]
    assert "where the values written reach 1" in near[0] and "the same quantity computed twice" in near[0], near[0]
    assert len(far) == 1 and "different values" in far[0], p.stderr[-3000:]
    assert not [ln for ln in lines if ln.startswith("tritondbg: race in near")], p.stderr[-3000:]
    assert p.returncode == 1, p.stderr[-2000:]  # far's race is an error


def _writes(bits_a, bits_b, code):
    addrs = np.arange(len(bits_a), dtype=np.uint64)
    return [(addrs, 0, 0, np.asarray(bits_a, np.uint64), 1, code), (addrs, 1, 0, np.asarray(bits_b, np.uint64), 2, code)]


def test_rounding_needs_floats_of_one_kind_within_eps_of_the_largest_value():
    one, up = np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2.0))
    bits = lambda *xs: [int(np.float32(x).view(np.uint32)) for x in xs]  # noqa: E731
    r = races.race_conflict(_writes(bits(one, 0.5), bits(up, 0.5), 4))
    assert r is not None and not r["same_value"] and r["rounding"] == (float(up - one), 1.0000001192092896)
    # the same bits as integers: no rounding, an error
    assert races.race_conflict(_writes(bits(one, 0.5), bits(up, 0.5), 0))["rounding"] is None
    # 5 epsilons of the largest value apart: past ROUNDING_EPS
    far = np.float32(1.0) + np.float32(5 * 2.0 ** -23)
    assert races.race_conflict(_writes(bits(one, 0.5), bits(far, 0.5), 4))["rounding"] is None
    # a small element far apart in its own terms, within rounding of the largest value written (cancellation)
    small, near = np.float32(1e-3), np.float32(1e-3) + np.float32(2.0 ** -24)
    assert races.race_conflict(_writes(bits(one, small), bits(one, near), 4))["rounding"] is not None
    # helper-113: 0.0 against a value is never rounding, however large the values written elsewhere
    assert races.race_conflict(_writes(bits(1e5, 0.0), bits(1e5, 0.05), 4))["rounding"] is None
    assert races.race_conflict(_writes(bits(one, 0.0), bits(one, np.float32(-1e-30)), 4))["rounding"] is None
    # 0.01 against 0.07 beside 1e5: 0.06 is past 4 epsilons of 1e5 (0.048)
    assert races.race_conflict(_writes(bits(1e5, 0.01), bits(1e5, 0.07), 4))["rounding"] is None
    # a NaN: no rounding
    assert races.race_conflict(_writes(bits(one, np.nan), bits(up, 0.5), 4))["rounding"] is None


OVERLAP = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def mirror(a_ptr, c_ptr, n, B: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    if pm > pn:
        return
    rm = pm * B + tl.arange(0, B)
    rn = pn * B + tl.arange(0, B)
    a = tl.load(a_ptr + rm[:, None] * n + rn[None, :])
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], a)  # TILE
    tl.store(c_ptr + rn[None, :] * n + rm[:, None], a)  # MIRROR: c[n, m] = a[m, n]

@triton.jit
def fill_then_store(x_ptr, y_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y_ptr + offs, tl.zeros((B,), tl.float32), mask=offs < n)  # the same place of a block of one shape
    acc = tl.zeros((B,), tl.float32)
    for k in range(3):
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, acc, mask=offs < n)  # once per iteration: one thread's, in order

@triton.jit
def fix_first(x_ptr, o_ptr, B: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, B))
    tl.store(o_ptr + tl.arange(0, B), x)
    tl.store(o_ptr, tl.sum(x, 0))  # element 0 again: thread 0's, as the block's first element is (helper-118)

@triton.jit
def fix_after_barrier(x_ptr, o_ptr, k, B: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, B))
    tl.store(o_ptr + tl.arange(0, B), x * 2.0)
    tl.debug_barrier()  # orders the CTA's stores: Liger's cross entropy writes the target's gradient after one
    tl.store(o_ptr + k, -1.0)

n, B = 32, 16
a = torch.randn(n, n, device="cuda")
fix_after_barrier[(1,)](torch.randn(16, device="cuda"), torch.empty(16, device="cuda"), 5, B=16)
fix_first[(1,)](torch.randn(16, device="cuda"), torch.empty(16, device="cuda"), B=16)
c = torch.empty_like(a)
mirror[(2, 2)](a + a.T, c, n, B=B)  # symmetric: the two stores agree
mirror[(2, 2)](a, c, n, B=B)        # not: on the diagonal tiles they do not
x, y = torch.randn(40, device="cuda"), torch.empty(40, device="cuda")
fill_then_store[(3,)](x, y, 40, B=B)
print("ok", bool(torch.allclose(y, 3 * x)))
''')


def test_two_stores_of_one_program_from_other_places_of_their_blocks_are_a_warning(tmp_path, cli_env):
    """helper-112 (modded-nanogpt's ba_plus_cAA on a non-symmetric A): a tile and its mirror, stored by one
    program, meet on the diagonal with different values; on a GPU other threads make the two stores, unordered.
    No finding before. A zero fill then the result, and a store per loop iteration, are one thread's: not told;
    nor two stores with a tl.debug_barrier between them (helper-124: Liger's cross entropy, a warning per launch)."""
    (tmp_path / "prog.py").write_text(OVERLAP)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "ok True" in p.stdout and p.returncode == 0, p.stderr[-3000:]
    line = {t: i for i, ln in enumerate(OVERLAP.splitlines(), 1) for t in ("TILE", "MIRROR") if f"# {t}" in ln}
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: race")]
    assert len(told) == 1 and f"mirror at prog.py:{line['TILE']}" in told[0], p.stderr[-3000:]
    assert (f"two plain stores of pid (0, 0, 0) (lines {line['TILE']} and {line['MIRROR']}) write different values"
            in told[0]) and "480 such element(s)" in told[0], told[0]
    assert "1 launch" not in p.stderr and "0 finding(s), 1 warning(s)" in p.stderr, p.stderr[-3000:]


def test_signed_integers_are_told_with_their_sign_and_never_as_rounding():
    """helper-158: an int8 tensor's race said "write different values (244 and 243)" for -12 and -13 (the bits
    as unsigned); a signed integer's kind (``float_code``: minus its size) reads them back, and judges no rounding."""
    r = races.race_conflict(_writes([244, 7], [243, 7], -1))
    assert r["values"] == (-12, -13) and r["rounding"] is None, r
    neg = int(np.array([-70000], np.int32).view(np.uint32)[0])
    assert races.race_conflict(_writes([neg], [5], -4))["values"] == (-70000, 5)
    assert races.race_conflict(_writes([244], [243], 0))["values"] == (244, 243)  # unsigned: as stored


def test_float_code_tells_signed_integers_by_their_size():
    from tritondbg.interp.race_bits import float_code

    class _T:  # what a store's value holds (an interpreter tensor's numpy data)
        def __init__(self, data):
            self.data, self.dtype = data, None

    assert [float_code(_T(np.zeros(2, dt))) for dt in (np.int8, np.int32, np.uint8, np.float16, np.float32)] == \
        [-1, -4, 0, 2, 4]
