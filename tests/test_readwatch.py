"""`interpret -- CMD`: the program's torch code reading what a launch left unwritten (tritondbg/program/readwatch.py).

A store through the wrong pointer (the output wholly unwritten) or a mask that skips every other element (holes
that are no band) were silent: the program's assert_close said "nan" and tritondbg 0 findings. Now the torch call
that reads them is an error at the launch's store, naming the call, the program's line and the allocation; a
program that masks the holes itself (torch.where), views or writes them reads nothing.
"""
from __future__ import annotations

import re
import sys
import textwrap

from conftest import run_cli

PROGRAM = '''
import sys
import torch, triton, triton.language as tl


@triton.jit
def into_input(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)  # WRONG_PTR


@triton.jit
def every_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=(offs < n) & (offs % 2 == 0))  # EVEN


@triton.jit
def whole(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


which = sys.argv[1]
kernel = {"wrong_ptr": into_input, "every_other": every_other, "masked": every_other, "views": every_other,
          "good": whole, "bf16": every_other, "copies": every_other, "copy_read": every_other,
          "cache": whole}[which]
x = torch.randn(1000, device="cuda", dtype=torch.bfloat16 if which == "bf16" else torch.float32)
out = torch.empty_like(x)  # ALLOC
kernel[(triton.cdiv(1000, 256),)](x.clone() if which == "wrong_ptr" else x, out, 1000, BLOCK=256)
if which == "cache":  # memory the program filled in part (a cache) that the launch only reads: not watched
    cache = torch.empty(4, 1000, device="cuda")
    cache[:, :10] = 1.0
    kernel[(4,)](cache[0], out, 10, BLOCK=256)
    print("sum", float(cache.index_select(0, torch.tensor([1, 0, 3, 2], device="cuda")).sum()) != 0)
elif which == "copies":  # copies of the output, masked afterwards (helper-71): a copy is no use of the values
    even = torch.arange(1000, device="cuda") % 2 == 0
    print("sum", float(out.cpu()[even.cpu()].sum()), float(out.clone()[even].sum()),
          float(torch.cat([out, out])[:1000:2].sum()), float(out.detach().cpu().numpy()[::2].sum()))
elif which == "copy_read":  # a copy that is then used: read there, named as a copy
    snap = out.clone()
    print("sum", float(snap.sum()))  # USE_COPY
elif which == "masked":  # the program uses only what the kernel wrote
    even = torch.arange(1000, device="cuda") % 2 == 0
    print("sum", float(torch.where(even, out, 0.0).sum()), float(out[::2].sum()))
elif which == "views":  # views and writes read nothing; then the holes are filled
    v = out.view(10, 100)[:, 1::2]
    v.fill_(0.0)
    print("sum", float(out.sum()))
else:
    torch.testing.assert_close(out, x * 2)  # READ
print("ok")
'''


def _line(text: str, tag: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(text).splitlines(), 1) if f"# {tag}" in ln)


def _findings(p) -> list[str]:
    return [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: ") and " in " in ln
            and "uninit" in ln and not ln.startswith("tritondbg: warning: ")]


def test_a_torch_read_of_an_output_stored_through_the_wrong_pointer_names_the_store(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "wrong_ptr"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    (line,) = _findings(p)
    assert line.startswith(f"tritondbg: uninit in into_input at prog.py:{_line(PROGRAM, 'WRONG_PTR')}:"), line
    # (assert_close's own reduction of its comparison, at the program's line: the first use of them)
    assert re.search(rf"torch\.\w+ at prog.py:{_line(PROGRAM, 'READ')} ", line), line
    assert "read 1000 of 1000 element(s) of values computed from out_ptr" in line, line
    assert f"memory from torch.empty_like at prog.py:{_line(PROGRAM, 'ALLOC')}" in line, line
    assert f"its store at line {_line(PROGRAM, 'WRONG_PTR')} wrote into x_ptr" in line, line
    assert "1 finding(s)" in p.stderr, p.stderr
    # and, at the launch, the warning that the kernel's code never names out_ptr (unstored.unnamed_entries)
    (warn,) = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: uninit in into_input")]
    assert "out_ptr (float32[1000]) is a tensor argument into_input's code never names" in warn, warn


def test_holes_that_are_no_band_are_an_error_where_torch_reads_them(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    for dtype in ("every_other", "bf16"):
        p = run_cli(["interpret", "--", sys.executable, "prog.py", dtype], cli_env, cwd=tmp_path)
        assert p.returncode == 1, p.stderr
        (line,) = _findings(p)
        assert line.startswith(f"tritondbg: uninit in every_other at prog.py:{_line(PROGRAM, 'EVEN')}:"), line
        assert "read 500 of 1000 element(s) of values computed from out_ptr (first at index (1,))" in line, line
        assert "the launch wrote 500 element(s) of out_ptr and left these" in line, line


def test_a_program_that_masks_views_or_fills_the_holes_reads_nothing_unwritten(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    for which in ("masked", "views", "good"):
        p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
        assert p.returncode == 0 and "uninit" not in p.stderr and "ok" in p.stdout, which + p.stdout + p.stderr
    # the filled holes: the sum the program printed is finite
    assert "nan" not in p.stdout


def test_capture_on_finding_saves_the_launch_whose_holes_were_read(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    out = tmp_path / "found"
    p = run_cli(["interpret", "--capture-on-finding", "--out", str(out), "--", sys.executable, "prog.py",
                 "every_other"], cli_env, cwd=tmp_path)
    assert p.returncode == 1 and "1 reproducer(s)" in p.stderr, p.stderr
    (repro,) = sorted(out.glob("every_other_*.py"))
    replay = run_cli(["interpret", str(repro)], cli_env, cwd=tmp_path)
    assert "uninit" in replay.stdout and "500" in replay.stdout, replay.stdout + replay.stderr


def test_copies_the_program_masks_afterwards_read_nothing_a_copy_used_is_told(tmp_path, cli_env):
    """helper-71: `out.cpu()[valid]`, `out.clone()[v]`, `out.numpy()[mask]` were errors at the copy, on tests that
    pass: a copy moves the values without using them, and is watched in turn; a buffer the program filled in part
    and the launch only read (a cache reordered by index_select) is no output of the launch."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    for which in ("copies", "cache"):
        p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
        assert p.returncode == 0 and "uninit" not in p.stderr and "ok" in p.stdout, which + p.stdout + p.stderr
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "copy_read"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    (line,) = _findings(p)
    assert f"Tensor.sum at prog.py:{_line(PROGRAM, 'USE_COPY')}" in line, line
    assert "read 500 of 1000 element(s) of a copy (1000,) of out_ptr" in line, line


MASKED_LATER = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def evens(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=(offs < n) & (offs % 2 == 0))


x = torch.randn(64, device="cuda")
out = torch.empty_like(x)  # ALLOC
evens[(1,)](x, out, 64, BLOCK=64)
ref, valid = x * 2, torch.arange(64, device="cuda") % 2 == 0
which = sys.argv[1]
if which == "masked":  # computed from the holes, then masked before any use (helper-73)
    assert float((out - ref).abs()[valid].max()) == 0
    assert bool(torch.isclose(out, ref)[valid].all()) and bool((out == ref)[valid].all())
    assert bool((torch.isclose(out, ref) | ~valid).all()) and float(torch.where(valid, out * 3, 0.0).sum()) != 0
    assert float((out - ref).view(32, 2)[:, 0].abs().max()) == 0 and int((out > 0)[valid].sum()) >= 0
else:  # computed, then used whole: told at the use
    print(float((out * valid).sum()))  # USE
print("ok")
'''


def test_values_computed_from_the_holes_are_told_where_used_not_where_computed(tmp_path, cli_env):
    """helper-73: `(out - ref).abs()[valid].max()`, `torch.isclose(out, ref)[valid].all()` and the like were errors
    at the subtraction / comparison, on tests that mask the holes afterwards. An elementwise op's NaN is watched in
    turn (a comparison's bools hold no mark); a reduction or a value used in Python is the use."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(MASKED_LATER))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "masked"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "uninit" not in p.stderr and "ok" in p.stdout, p.stdout + p.stderr
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "used"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    (line,) = _findings(p)
    assert f"Tensor.sum at prog.py:{_line(MASKED_LATER, 'USE')}" in line, line
    assert "read 32 of 64 element(s) of values computed from out_ptr" in line, line


BY_VALUE = '''
import sys, numpy as np, torch, triton, triton.language as tl


@triton.jit
def evens(x_ptr, out_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    keep = (offs < n) & (offs % 2 == 0)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=keep)  # STORE
    tl.store(idx_ptr + offs, offs, mask=keep)  # ISTORE


x = torch.randn(64, device="cuda")
out = torch.empty_like(x)
idx = torch.empty(64, dtype=torch.int32, device="cuda")  # IALLOC
evens[(1,)](x, out, idx, 64, BLOCK=64)
ref, valid = x * 2, torch.arange(64, device="cuda") % 2 == 0
ref_idx = torch.arange(64, device="cuda", dtype=torch.int32)
which = sys.argv[1]
if which == "masked":  # holes masked before any use: nothing read
    assert bool((out == ref)[valid].all()) and bool((torch.isclose(out, ref) | ~valid).all())
    assert int(idx[valid].sum()) == int(ref_idx[valid].sum()) and bool((idx == ref_idx)[valid].all())
    assert bool(torch.where(valid, idx, 0).eq(torch.where(valid, ref_idx, 0)).all())
    assert torch.equal(x[idx[valid].long()], x[::2]) and int((idx * valid).max()) == 62
    np.testing.assert_allclose(out.cpu().numpy()[::2], ref.cpu().numpy()[::2])
    buf = torch.zeros(2, 64, device="cuda")
    buf[1] = out
    buf[1, 1::2] = 0.0
    assert bool(torch.isfinite(buf).all()) and torch.equal(buf[1, ::2], ref[::2])
    assert torch.equal(torch.where(valid, torch.nan_to_num(out), 0.0), torch.where(valid, ref, 0.0))
elif which == "nan_to_num":  # NaN made 0 (a GPU's holes hold garbage, no NaN), then summed
    print(float(torch.nan_to_num(out).sum()))  # NAN_TO_NUM
elif which == "setitem":  # copied into another tensor, then used
    buf = torch.zeros(2, 64, device="cuda")
    buf[1] = out
    print(float(buf.sum()))  # SETITEM
elif which == "np_used":
    got = out.cpu().numpy()
    np.testing.assert_allclose(got, ref.cpu().numpy())  # NP_USED
elif which == "eq_all":
    print(bool((out == ref).all()))  # EQ_ALL
elif which == "iequal":
    print(bool((idx.clone() == ref_idx).all()))  # IEQUAL
elif which == "iindex":
    print(x[idx.long()].sum())  # IINDEX
print("ok")
'''


def test_comparisons_and_integer_outputs_are_followed_by_value(tmp_path, cli_env):
    """Bools and integers hold no NaN to follow: `(out == ref).all()` over holes and an int32 output a mask left
    unwritten (holding 0x5A5A5A5A) were silent, `x[idx]` a bare IndexError, and so was a numpy comparison of a copy
    (`np.testing.assert_allclose(out.cpu().numpy(), ref)`) or a copy into another tensor (`buf[1] = out`). Now they are followed by value (the call
    run again with the marked lanes flipped): a reduction or a raise that depends on them is told, a mask applied
    first (`[valid]`, `torch.where`, `| ~valid`, `* valid`) reads nothing."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(BY_VALUE))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "masked"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "uninit" not in p.stderr and "ok" in p.stdout, p.stdout + p.stderr
    for which, call, store, of in (("eq_all", "Tensor.all", "STORE", "values computed from out_ptr"),
                                   ("iequal", "Tensor.all", "ISTORE", "values computed from idx_ptr"),
                                   ("iindex", "Tensor.__getitem__", "ISTORE", "values computed from idx_ptr"),
                                   ("np_used", "numpy.testing.assert_allclose", "STORE", "a copy (64,) of out_ptr"),
                                   ("setitem", "Tensor.sum", "STORE", "a copy (2, 64) of out_ptr"),
                                   ("nan_to_num", "Tensor.sum", "STORE", "values computed from out_ptr")):
        p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
        assert p.returncode == 1, which + p.stderr
        (line,) = _findings(p)
        assert f"uninit in evens at prog.py:{_line(BY_VALUE, store)}" in line, line
        assert f"{call} at prog.py:{_line(BY_VALUE, which.upper())}" in line, line
        assert f"read 32 of {128 if which == 'setitem' else 64} element(s) of {of}" in line, line
        if which in ("iequal", "iindex"):
            assert "mark (0x5A5A5A5A)" in line and f"prog.py:{_line(BY_VALUE, 'IALLOC')}" in line, line
        if which == "iindex":
            assert "the call raised IndexError: index 1515870810 is out of bounds" in line, line


BACKWARD = '''
import torch, triton, triton.language as tl


@triton.jit
def rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + r * n + offs, tl.load(x_ptr + r * n + offs, mask=offs < n), mask=offs < n)  # STORE


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        g = g.contiguous()
        part = torch.empty(g.shape[0] + 1, g.shape[1], device=g.device)  # one row too many
        rows[(g.shape[0],)](g, part, g.shape[1], BLOCK=16)
        return part.sum(dim=0).expand_as(g) * 2


x = torch.randn(5, 10, device="cuda", requires_grad=True)
Double.apply(x).sum().backward()  # BACKWARD
print("ok", float(x.grad.sum()))
'''


def test_a_backward_s_torch_code_is_watched_too(tmp_path, cli_env):
    """helper-74 (attorch's RMSNorm weight grad): a custom autograd Function's backward runs with no torch function
    mode on the stack, so its sum over a `torch.empty` row no launch wrote was only the band warning at exit (exit
    0, the gradient NaN). tritondbg's modes are pushed around each backward, and a gradient it returns computed
    from holes is the error."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(BACKWARD))
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    (line,) = _findings(p)
    assert line.startswith(f"tritondbg: uninit in rows at prog.py:{_line(BACKWARD, 'STORE')}:"), line
    # (the rows summed along a dimension are watched in turn, as any such reduction: the gradient returned is
    # where they go on, out of torch functions' sight)
    assert (f"the gradient Double.backward returned at prog.py:{_line(BACKWARD, 'BACKWARD')} (<module>) read 50 of "
            "50 element(s) of values computed from out_ptr") in line, line


ROWS = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def fill_rows(x_ptr, out_ptr, idx_ptr, C, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    tl.store(out_ptr + r * C + c, tl.load(x_ptr + r * C + c, mask=c < C) * 2, mask=c < C)
    tl.store(idx_ptr + r, r)  # ISTORE


CAP, R, C = 16, 11, 24
x = torch.randn(R, C, device="cuda")
out = torch.empty(CAP, C, device="cuda")  # a capacity buffer: the kernel fills its first R rows
idx = torch.empty(CAP, dtype=torch.int64, device="cuda")
fill_rows[(R,)](x, out, idx, C, BLOCK=32)
ref, w = x * 2, torch.randn(C, 5, device="cuda")
padded = torch.cat([ref, torch.zeros(CAP - R, C, device="cuda")])
if sys.argv[1] == "kept":  # row-wise over the whole buffer, the rows nothing wrote dropped after
    torch.testing.assert_close(out.sum(1)[:R], ref.sum(1))
    torch.testing.assert_close((out @ w)[:R], ref @ w)
    assert torch.equal(out.argmax(1)[:R], ref.argmax(1)) and bool((out == padded).all(1)[:R].all())
    assert torch.equal(idx.view(4, 4).sum(1)[:2], torch.arange(8).view(2, 4).sum(1))
else:
    print(torch.equal(idx, torch.arange(CAP)))  # EQUAL
print("ok")
'''


def test_rows_reduced_along_a_dimension_are_watched_not_used_until_kept_rows_are_dropped(tmp_path, cli_env):
    """helper-76: a kernel filling the first R rows of a capacity buffer, then `out.sum(1)[:R]`, `(out @ w)[:R]`,
    `out.argmax(1)[:R]`: an error at the reduction on correct code. A reduction along a dimension carries them (its
    elements computed from holes watched in turn); one to a single value or a value in Python is the use, and
    `torch.equal(idx, ref)` over int holes (False with them flipped too) is told."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(ROWS))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "kept"], cli_env, cwd=tmp_path)
    errors = [ln for ln in _findings(p) if not ln.startswith("tritondbg: warning:")]  # (the bands left: warnings)
    assert p.returncode == 0 and not errors and "ok" in p.stdout, p.stdout + p.stderr
    # an int band's warning names the int mark, not NaN
    assert "left 5 of 16 unwritten" in p.stderr and "mark (0x5A5A5A5A5A5A5A5A)" in p.stderr, p.stderr
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "equal"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    (line,) = [ln for ln in _findings(p) if not ln.startswith("tritondbg: warning:")]
    assert f"uninit in fill_rows at prog.py:{_line(ROWS, 'ISTORE')}: torch.equal at prog.py:{_line(ROWS, 'EQUAL')}" \
        in line and "read 5 of 16 element(s) of idx_ptr" in line, line


PRINTED = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def softmax_fwd(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=mask)  # STORE

x = torch.randn(5, 37, device="cuda")
y = torch.empty_like(x)
softmax_fwd[(x.shape[0] - 1,)](y, x, x.shape[1], BLOCK=64)  # the last row is never written
if sys.argv[1] == "print":
    print("row sums", y.sum(-1))  # PRINT
else:
    print("row sums", y[:4].sum(-1), f"{float(y[0, 0]):.3f}")  # the rows written only
'''


def test_printing_what_a_launch_left_unwritten_is_a_use(tmp_path, cli_env):
    """helpers 100, 101: a grid that skips the last row, the row sums printed (NaN there; garbage on a GPU): only the
    band warning at exit, exit 0. What a program prints is its output: printing a tensor computed from the holes is
    the use; printing the rows written is none."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(PRINTED))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "print"], cli_env, cwd=tmp_path)
    (line,) = _findings(p)
    assert line.startswith(f"tritondbg: uninit in softmax_fwd at prog.py:{_line(PRINTED, 'STORE')}:"), line
    assert f"Tensor.__repr__ at prog.py:{_line(PRINTED, 'PRINT')}" in line and "read 1 of 5 element(s)" in line, line
    assert p.returncode == 1, p.stderr[-2000:]
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "rows"], cli_env, cwd=tmp_path)
    assert not _findings(p) and p.returncode == 0, p.stderr[-2000:]
    # (the band it reads around, never into, is left by design: no warning at exit either; helper-120)
    assert "unwritten" not in p.stderr, p.stderr[-2000:]


def test_an_entry_of_memory_given_out_again_is_no_watch_of_the_new_tensor():
    """helper-112: ``(out.float() - ref).abs().nan_to_num(1e9).max()`` over an output with holes was told in some
    runs and silent in others. A freed copy's entry still covered its memory; torch's allocator gave that memory to
    the next result, which then looked like a view of a watched tensor (not followed), and the holes' values reached
    ``max`` unwatched. An entry whose tensor is gone is dropped when its memory is looked up."""
    import weakref

    import torch

    from tritondbg.program import watchstate

    fresh = torch.zeros(16)
    gone = torch.zeros(1)
    dead = weakref.ref(gone)
    del gone
    lo = watchstate._storage_ptr(fresh)
    saved = dict(watchstate._WATCH)
    watchstate._WATCH.clear()
    try:
        watchstate._WATCH[lo] = dict(storage=lo, end=lo + 64, origin=lo, copy=dead, computed=True)
        assert watchstate._watched(fresh) is None and lo not in watchstate._WATCH
        alive = torch.zeros(16)
        lo2 = watchstate._storage_ptr(alive)
        watchstate._WATCH[lo2] = dict(storage=lo2, end=lo2 + 64, origin=lo2, copy=weakref.ref(alive), computed=True)
        assert watchstate._watched(alive[4:]) is watchstate._WATCH[lo2]  # a view of a live copy: its entry
    finally:
        watchstate._WATCH.clear()
        watchstate._WATCH.update(saved)


HOLE_CHAIN = '''
import torch, triton, triton.language as tl

@triton.jit
def tiles(x_ptr, out_ptr, M, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 1:
        return
    r = pid * BLOCK + tl.arange(0, BLOCK)
    c = tl.arange(0, BLOCK)
    m = (r[:, None] < M) & (c[None, :] < M)
    tl.store(out_ptr + r[:, None] * M + c[None, :], tl.load(x_ptr + r[:, None] * M + c[None, :], mask=m), mask=m)

M = 48
x = torch.randn(M, M, device="cuda", dtype=torch.bfloat16)
for i in range(6):  # each run's temporaries land where the last ones were
    out = torch.empty(M, M, device="cuda", dtype=torch.bfloat16)
    tiles[(3,)](x_ptr=x, out_ptr=out, M=M, BLOCK=16)
    err = (out.float() - x.float()).abs().nan_to_num(1e9).max().item()  # READ
print("err", err)
'''


def test_values_computed_through_a_chain_of_temporaries_are_told_every_time(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(HOLE_CHAIN)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(HOLE_CHAIN.splitlines(), 1) if ln.rstrip().endswith("# READ"))
    told = [ln for ln in p.stderr.splitlines() if f"Tensor.max at prog.py:{line}" in ln]
    assert len(told) == 1 and "read 1792 of 2304 element(s) of values computed from out_ptr" in told[0], \
        p.stderr[-3000:]
    assert "6 launch(es), 6 finding(s)" in p.stderr, p.stderr[-2000:]  # each run's read (before: 1 or 2 of 6)
    assert p.returncode == 1, p.stderr[-2000:]
