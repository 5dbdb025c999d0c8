"""Masked-lane poison under `tritondbg interpret -- CMD` (program mode) as under `interpret KERNEL` (scenarios).

The sanitizers fill the lanes a masked load leaves undefined (no ``other=``) with a NaN naming the load. In a
program that poison used to stay in the program's tensors (its results turned NaN, later clean kernels read it)
and the launches that stored it reported nothing: only a scenario's reference check found it. Now such a launch
runs again with the plain interpreter's filler; the program keeps that run's results, and the poison the
sanitized run stored is a ``poison`` finding at the load's line (program/checker.py).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch

from tritondbg import runner
from tritondbg.interp import instruments

pytestmark = [pytest.mark.interpreter, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

REPO = Path(__file__).resolve().parents[1]

KERNELS = '''
import torch, triton, triton.language as tl


@triton.jit
def copy_pad(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N)  # LOAD copy_pad
    tl.store(Y + offs, x)


@triton.jit
def scale_by_dot(X, W, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask)  # LOAD scale_by_dot
    x = tl.load(X + row * N + cols, mask=mask, other=0.0)
    x = tl.where(mask, x, 0.0)
    c = tl.sum(x * w, axis=0)
    tl.store(Y + row * N + cols, x * c, mask=mask)


@triton.jit
def add_into(Y, X, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N)  # LOAD add_into
    tl.device_print("added", x)
    tl.store(Y + offs, tl.load(Y + offs) + x)


@triton.jit
def accumulate(Y, X, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N)  # LOAD accumulate
    tl.atomic_add(Y + offs, x)


@triton.jit
def total(X, OUT, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(OUT, tl.sum(tl.load(X + offs, mask=offs < N, other=0.0), axis=0))


@triton.jit
def wsum(W, DY, OUT, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask)  # LOAD wsum
    dy = tl.load(DY + row * N + cols, mask=mask, other=0.0)
    tl.store(OUT + row, tl.sum(w * dy, axis=0))


@triton.jit
def wsum_add(W, DY, OUT, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask)  # LOAD wsum_add
    dy = tl.load(DY + row * N + cols, mask=mask, other=0.0)
    tl.store(OUT + row, tl.sum(w + dy, axis=0))  # the undefined lanes are added: garbage in the sum


@triton.jit
def padded_sum(X, OUT, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + offs, mask=offs < N, other=1.0)
    tl.store(OUT + row, tl.sum(x, axis=0))  # SUM padded_sum
'''

PROGRAM = '''
import json, sys, torch
sys.path.insert(0, sys.argv[1])
from poison_kernels import accumulate, add_into, copy_pad, scale_by_dot, total, wsum

torch.manual_seed(0)
res = {}
x = torch.randn(20)
y = torch.full((32,), 7.0)
copy_pad[(1,)](x, y, 20, BLOCK=32)
want = torch.cat([x, torch.zeros(12)])             # what the plain interpreter gives (0 in undefined lanes)
res["copy_pad"] = (y - want).abs().max().item()
s = torch.zeros(1)
total[(1,)](y, s, 32, BLOCK=32)                    # a clean kernel reading what copy_pad wrote
res["total"] = abs(s.item() - x.sum().item())
a, w = torch.randn(2, 24), torch.ones(24)
b = torch.empty_like(a)
scale_by_dot[(2,)](a, w, b, 24, BLOCK=32)
res["scale_by_dot"] = (b - a * (a * w).sum(-1, keepdim=True)).abs().max().item()
acc0, inc = torch.randn(16), torch.randn(10)
acc = acc0.clone()
add_into[(1,)](acc, inc, 10, BLOCK=16)             # in place: run twice, it would add twice
res["add_into"] = (acc - (acc0 + torch.cat([inc, torch.zeros(6)]))).abs().max().item()
acc = acc0.clone()
accumulate[(1,)](acc, inc, 10, BLOCK=16)           # the same through atomics
res["accumulate"] = (acc - (acc0 + torch.cat([inc, torch.zeros(6)]))).abs().max().item()
wv, dy = torch.randn(24), torch.randn(3, 24)
o = torch.empty(3)
wsum[(3,)](wv, dy, o, 24, BLOCK=32)
res["wsum"] = (o - (wv * dy).sum(-1)).abs().max().item()
print("RESULT " + json.dumps(res))
'''


def _line(marker: str) -> int:
    return next(i for i, ln in enumerate(KERNELS.splitlines(), 1) if ln.rstrip().endswith(marker))


def _run(args, cwd, timeout=120):
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


@pytest.fixture
def program(tmp_path):
    (tmp_path / "poison_kernels.py").write_text(KERNELS)
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path


def _results(stdout: str) -> dict:
    return json.loads(next(ln for ln in stdout.splitlines() if ln.startswith("RESULT "))[7:])


def test_a_program_computes_what_it_computes_without_tritondbg_and_poison_is_reported(program):
    report = program / "findings.json"
    out = _run(["interpret", "--json", str(report), "--out", str(program / "t"), "--", sys.executable, "prog.py",
                str(program)], cwd=program)
    assert out.returncode == 1, out.stderr[-3000:]
    res = _results(out.stdout)
    # the poison used to leak: copy_pad's tail, total's sum and scale_by_dot's rows were NaN, add_into doubled
    assert all(v < 1e-4 for v in res.values()), res
    found = sorted((f["kernel"], f["kind"], f["line"], f["tensor"], f["severity"])
                   for f in json.loads(report.read_text())["findings"])
    # scale_by_dot and wsum multiply the undefined lanes by exact zeros before their sums: 0 for any finite
    # garbage, a warning (no output holds poison: the products were 0)
    assert found == [("accumulate", "poison", _line("# LOAD accumulate"), "Y", "error"),
                     ("add_into", "poison", _line("# LOAD add_into"), "Y", "error"),
                     ("copy_pad", "poison", _line("# LOAD copy_pad"), "Y", "error"),
                     ("scale_by_dot", "poison", _line("# LOAD scale_by_dot"), None, "warning"),
                     ("wsum", "poison", _line("# LOAD wsum"), None, "warning")], found
    assert "12 element(s) of output Y hold them, first Y[20]" in out.stderr
    assert "launch(es), 3 finding(s), 2 warning(s)" in out.stderr and "tritondbg: warning: poison in wsum" in out.stderr
    # the kernel's device_print is printed once (by the sanitized run), not again by the run the program keeps
    assert out.stdout.count("added") == 1, out.stdout


def test_capture_on_finding_saves_the_output_without_the_poison_as_the_reference(program):
    folder = program / "cof"
    out = _run(["interpret", "--capture-on-finding", "--kernel", "copy_pad", "--out", str(folder), "--",
                sys.executable, "prog.py", str(program)], cwd=program)
    assert out.returncode == 1, out.stderr[-3000:]
    meta = json.loads((folder / "data" / "copy_pad_0.json").read_text())
    saved = torch.load(folder / "data" / "copy_pad_0.pt")
    spec = meta["tensors"][meta["outputs"]["Y"]]
    group = saved["after_groups"][spec["group"]]
    start = meta["groups"][spec["group"]]["start"]
    y = group[spec["byte_offset"] - start:].view(torch.float32)[:32]
    assert not y.isnan().any() and (y[20:] == 0).all(), y


@pytest.mark.parametrize("kernel, op", [("wsum", "*"), ("wsum_add", "+")])
def test_scenario_undefined_factor_times_zero_padding_is_a_poison_warning(tmp_path, kernel, op):
    """``tl.sum(w * dy)`` with ``w`` undefined and ``dy`` padded with 0: the products are 0 for any finite garbage,
    so the result is right on the GPU (fla's layer-norm backward does this; the poison made every output NaN and the
    case FAILED with an error finding): a poison *warning* naming the product, and the case passes. ``w + dy``
    keeps the garbage: an error, and the case fails (it was reported as a masked_reduction at the sum, with every
    lane counted twice, before that)."""
    (tmp_path / "poison_kernels.py").write_text(KERNELS)
    (tmp_path / "cases.py").write_text(textwrap.dedent('''
        import sys, os, torch
        sys.path.insert(0, os.path.dirname(__file__))
        from tritondbg import Case, Scenario
        from poison_kernels import {kernel} as wsum

        def launch(w, dy):
            out = torch.empty(dy.shape[0])
            wsum[(dy.shape[0],)](w, dy, out, dy.shape[1], BLOCK=32)
            return out

        def make(case, dtype, device, generator):
            return dict(w=torch.randn(24, generator=generator), dy=torch.randn(3, 24, generator=generator))

        WSUM = Scenario(name="wsum", make_inputs=make, launch=launch, kernels=[wsum],
                        reference=lambda w, dy: (w {op} dy).sum(-1), cases=[Case("tiny", dtypes=("float32",))])
    ''').replace("{kernel}", kernel).replace("{op}", op))
    target = str(tmp_path / "cases.py")
    rec = runner.run(target, mode="interpret", instruments=instruments.build(target))
    (f,) = [f for r in rec.results for f in r.findings]
    assert (f["kind"], f["line"]) == ("poison", _line(f"# LOAD {kernel}")), f
    if op == "*":
        assert f["severity"] == "warning" and rec.results[0].status == "pass", (f, rec.results[0].message)
        assert "multiplied by exact zeros (line " in f["message"] and "enter tl.sum" in f["message"], f["message"]
    else:
        assert f["severity"] == "error" and rec.results[0].status == "fail", f


def test_a_padded_reduction_counts_each_lane_once(tmp_path):
    (tmp_path / "poison_kernels.py").write_text(KERNELS)
    (tmp_path / "cases.py").write_text(textwrap.dedent('''
        import sys, os, torch
        sys.path.insert(0, os.path.dirname(__file__))
        from tritondbg import Case, Scenario
        from poison_kernels import padded_sum

        def launch(x):
            out = torch.empty(x.shape[0])
            padded_sum[(x.shape[0],)](x, out, x.shape[1], BLOCK=32)
            return out

        PADDED = Scenario(name="padded", make_inputs=lambda case, dtype, device, generator: dict(x=torch.randn(3, 24)),
                          launch=launch, kernels=[padded_sum], reference=lambda x: x.sum(-1),
                          cases=[Case("tiny", dtypes=("float32",))])
    '''))
    target = str(tmp_path / "cases.py")
    rec = runner.run(target, mode="interpret", instruments=instruments.build(target))
    (f,) = [f for r in rec.results for f in r.findings]
    assert (f["kind"], f["line"], f["lanes"]) == ("masked_reduction", _line("# SUM padded_sum"), 3 * 8), f


def test_the_state_before_the_launch_comes_back_from_the_journal_or_the_copy(tmp_path, monkeypatch):
    """In process: the second run starts from what the journal recorded the first overwrote (CPU tensors) or from
    the bytes copied before the launch; without either (a journal past its limit) the program keeps the poison and
    each NaN naming the load is still reported, with a note saying so."""
    from tritondbg.interp import undo
    from tritondbg.program import capture, checker

    runner.set_mode("interpret")
    (tmp_path / "poison_kernels_inproc.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import poison_kernels_inproc as K

    inc = torch.randn(10)
    acc0 = torch.randn(16)
    want = acc0 + torch.cat([inc, torch.zeros(6)])

    def launch(copy: bool):
        acc = acc0.clone()
        args = dict(Y=acc, X=inc, N=10)
        snap = capture.snapshot(types.SimpleNamespace(args=args))
        if copy:
            capture.copy_before(snap)
        _, findings, error, _ = checker.instrument_launch(lambda: K.add_into[(1,)](acc, inc, 10, BLOCK=16), args,
                                                       snap=snap)
        assert error is None and [(f["kind"], f["tensor"]) for f in findings] == [("poison", "Y")], findings
        return acc, findings[0]

    for copy in (False, True):  # journal, copy: the in-place add is applied once, with 0 in the undefined lanes
        acc, f = launch(copy)
        assert torch.allclose(acc, want) and not f.get("notes"), (copy, acc, f)
        assert "10 element(s) of output Y hold them" not in f["message"] and "6 element(s)" in f["message"]
    monkeypatch.setattr(undo, "MAX_LANES", 4)
    acc, f = launch(False)
    assert acc[10:].isnan().all() and any("keep it" in n for n in f["notes"]), (acc, f)
    assert "6 element(s) of output Y hold them, first Y[10]" in f["message"], f["message"]


DOT_CASES = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, A_OTHER: tl.constexpr, B_OTHER: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        am = (rm[:, None] < M) & ((k0 + rk)[None, :] < K)
        bm = ((k0 + rk)[:, None] < K) & (rn[None, :] < N)
        if A_OTHER:
            a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=am, other=0.0)
        else:
            a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=am)  # LOAD A
        if B_OTHER:
            b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=bm, other=0.0)
        else:
            b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=bm)
        acc = tl.dot(a, b, acc)  # DOT
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def make(case, dtype, device, generator):
    return dict(a=torch.randn(19, 37, generator=generator).to(dtype), b=torch.randn(37, 21, generator=generator).to(dtype),
                b_other=case.params["b_other"])


def mm(a, b, b_other):
    c = torch.empty(19, 21)
    mm_kernel[(2, 1)](a, b, c, 19, 21, 37, A_OTHER=False, B_OTHER=b_other, BM=16, BN=32, BK=16)
    return c


mm_s = Scenario("mm", make, mm, lambda a, b, b_other: a.float() @ b.float(),
                [Case("padded_b", params=dict(b_other=True), dtypes=("float16",)),
                 Case("bare_b", params=dict(b_other=False), dtypes=("float16",))], kernels=[mm_kernel])
'''


def test_a_dot_whose_undefined_k_tail_meets_a_zero_padded_partner_is_a_warning(tmp_path):
    """A helper's report: ``tl.dot(a, b)`` with ``a`` loaded without other= and ``b`` with other=0.0 on the K
    tail was a poison error and every output NaN ("4847/4847 mismatched"), though each product there is 0 for
    finite garbage, as ``tl.sum(w * dy)`` (a warning) has it. Both loads without other=: still an error."""
    (tmp_path / "cases.py").write_text(DOT_CASES)
    line = lambda tag: next(i for i, ln in enumerate(DOT_CASES.splitlines(), 1) if ln.rstrip().endswith(tag))  # noqa: E731
    target = str(tmp_path / "cases.py")
    rec = runner.run(target, mode="interpret", cases="padded_b", instruments=instruments.build(target))
    (r,) = rec.results
    assert r.status == "pass", r.message
    (f,) = r.findings
    assert (f["kind"], f["severity"], f["line"]) == ("poison", "warning", line("# LOAD A")), f
    assert f"enter tl.dot at line {line('# DOT')}" in f["message"], f["message"]
    rec = runner.run(target, mode="interpret", cases="bare_b", instruments=instruments.build(target))
    (r,) = rec.results
    assert r.status != "pass" and any(f["kind"] == "poison" and f["severity"] == "error" for f in r.findings), \
        (r.status, r.findings)



INT8_DOT_CASES = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def mm8(a_ptr, b_ptr, c_ptr, K, A_OTHER: tl.constexpr, B_OTHER: tl.constexpr, BK: tl.constexpr):
    m = tl.arange(0, 16)
    n = tl.arange(0, 16)
    k = tl.arange(0, BK)
    if A_OTHER:
        a = tl.load(a_ptr + m[:, None] * K + k[None, :], mask=k[None, :] < K, other=0)
    else:
        a = tl.load(a_ptr + m[:, None] * K + k[None, :], mask=k[None, :] < K)  # LOAD A
    if B_OTHER:
        b = tl.load(b_ptr + k[:, None] * 16 + n[None, :], mask=k[:, None] < K, other=0)
    else:
        b = tl.load(b_ptr + k[:, None] * 16 + n[None, :], mask=k[:, None] < K)  # LOAD B
    acc = tl.dot(a, b, tl.zeros((16, 16), tl.int32), out_dtype=tl.int32)  # DOT
    tl.store(c_ptr + m[:, None] * 16 + n[None, :], acc)


def make(case, dtype, device, generator):
    return dict(a=torch.randint(-3, 3, (16, 24), generator=generator).to(torch.int8),
                b=torch.randint(-3, 3, (24, 16), generator=generator).to(torch.int8), **case.params)


def mm(a, b, a_other, b_other):
    c = torch.empty(16, 16, dtype=torch.int32)
    mm8[(1,)](a, b, c, 24, A_OTHER=a_other, B_OTHER=b_other, BK=32)
    return c


mm8_s = Scenario("mm8", make, mm, lambda a, b, a_other, b_other: a.int() @ b.int(),
                 [Case(name, params=dict(a_other=ao, b_other=bo), dtypes=("int8",))
                  for name, ao, bo in (("bare", False, False), ("padded_b", False, True), ("padded", True, True))],
                 kernels=[mm8])
'''


def test_undefined_k_tail_lanes_of_an_int8_dot_are_poison_as_a_float_dots_are(tmp_path):
    """helper-106: lmdeploy's w8a8 GEMM loads its int8 K tail without other=; the int8 dot's operands were never
    checked (0 findings, and a reproducer that failed with "no finding": -128 * -128 per lane). Now as a float dot:
    both tails undefined is an error at each load, against a zero-padded partner a warning, with other=0 nothing."""
    (tmp_path / "cases.py").write_text(INT8_DOT_CASES)
    line = lambda tag: next(i for i, ln in enumerate(INT8_DOT_CASES.splitlines(), 1) if ln.rstrip().endswith(tag))  # noqa: E731
    target = str(tmp_path / "cases.py")
    rec = runner.run(target, mode="interpret", cases="bare,padded_b,padded", instruments=instruments.build(target))
    got = {r.case: sorted((f["kind"], f["severity"], f["line"]) for f in r.findings) for r in rec.results}
    assert got == {"bare": [("poison", "error", line("# LOAD A")), ("poison", "error", line("# LOAD B"))],
                   "padded_b": [("poison", "warning", line("# LOAD A"))], "padded": []}, got
    assert all(f"enter tl.dot at line {line('# DOT')}" in f["message"] for r in rec.results for f in r.findings)


PV_CASES = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def pv_kernel(q_ptr, k_ptr, v_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + m[:, None] * D + d[None, :], mask=(m < M)[:, None])  # padded query rows: no other=
    k = tl.load(k_ptr + n[None, :] * D + d[:, None], mask=(n < N)[None, :], other=0.0)
    v = tl.load(v_ptr + n[:, None] * D + d[None, :], mask=(n < N)[:, None])  # LOAD V
    s = tl.where((n < N)[None, :], tl.dot(q, k), float("-inf"))
    p = tl.exp(s - tl.max(s, 1)[:, None])  # exactly 0 in the key padding
    p = p / tl.sum(p, 1)[:, None]
    tl.store(o_ptr + m[:, None] * D + d[None, :], tl.dot(p.to(tl.float16), v), mask=(m < M)[:, None])  # DOT


def make(case, dtype, device, generator):
    return dict(q=(torch.randn(11, 16, generator=generator) * 0.3).half(),
                k=(torch.randn(13, 16, generator=generator) * 0.3).half(), v=torch.randn(13, 16, generator=generator).half())


def pv(q, k, v):
    o = torch.empty(11, 16)
    pv_kernel[(1,)](q, k, v, o, 11, 13, BM=16, BN=16, D=16)
    return o


def ref(q, k, v):
    return torch.softmax(q.float() @ k.float().T, -1) @ v.float()


pv_s = Scenario("pv", make, pv, ref, [Case("tiny", dtypes=("float16",), atol=1e-2, rtol=1e-2)], kernels=[pv_kernel])
'''


def test_undefined_v_rows_against_exact_zeros_of_p_are_a_warning_beside_padded_query_rows(tmp_path):
    """helper-61 (FlagAttention's forward): V loaded without other= meets p = exp(s - max) that is exactly 0 in the
    key padding: a warning, as a dot against a zero-padded partner is. But in the partial query block p's padded
    rows (q loaded without other=) were NaN, which vetoed the zero test over the whole K column, and every valid
    output became a poison error (640 elements of O). Rows that are padding only make padding outputs."""
    (tmp_path / "cases.py").write_text(PV_CASES)
    line = lambda tag: next(i for i, ln in enumerate(PV_CASES.splitlines(), 1) if ln.rstrip().endswith(tag))  # noqa: E731
    target = str(tmp_path / "cases.py")
    (r,) = runner.run(target, mode="interpret", instruments=instruments.build(target)).results
    assert r.status == "pass", (r.message, r.findings)
    poison = [f for f in r.findings if f["kind"] == "poison"]
    assert poison and all(f["severity"] == "warning" for f in poison), r.findings
    assert any(f["line"] == line("# LOAD V") and f"enter tl.dot at line {line('# DOT')}" in f["message"]
               for f in poison), poison


def test_poisoned_padded_rows_in_a_max_print_no_numpy_warning(tmp_path):
    """helper-61: "interpreter.py:1144: RuntimeWarning: All-NaN slice encountered" on FlagAttention's runs: the
    sanitizers' NaN in rows a store masks out reached the interpreter's nanmax; plain TRITON_INTERPRET=1 prints
    nothing there."""
    (tmp_path / "prog.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def rowmax(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
            m = tl.arange(0, BM)
            n = tl.arange(0, BN)
            w = tl.load(x + m[:, None] * N + n[None, :], mask=(m < M)[:, None])  # rows 5..7: undefined
            tl.store(y + m, tl.max(w, 1), mask=m < M)

        x = torch.randn(5, 16); y = torch.empty(5)
        rowmax[(1,)](x, y, 5, 16, BM=8, BN=16)
        print("err", (y - x.max(1).values).abs().max().item())
    '''))
    out = _run(["interpret", "--out", str(tmp_path / "t"), "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert out.returncode == 0 and "err 0.0" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "All-NaN" not in out.stderr, out.stderr[-2000:]


def test_a_replay_that_wrote_poison_is_not_said_to_have_written_nothing(tmp_path):
    """helper-61: a reproducer whose undefined lanes reach an output wrote the sanitizers' NaN there, which compared
    equal to the NaN-marked torch.empty bytes before the launch, and the replay said "the replayed kernel did not
    write them". Compared bit for bit, the poison is a write."""
    (tmp_path / "prog.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def widen(x, o, n, B: tl.constexpr):
            c = tl.arange(0, B)
            tl.store(o + c, tl.load(x + c, mask=c < n) * 2.0)  # lanes n..B of o: undefined

        x = torch.randn(100); o = torch.empty(128)
        widen[(1,)](x, o, 100, B=128)
        print("head", bool((o[:100] == 2 * x).all()))
    '''))
    cap = _run(["capture", "--out", str(tmp_path / "cap"), "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert cap.returncode == 0 and "head True" in cap.stdout, cap.stdout + cap.stderr[-2000:]
    rep = _run(["interpret", str(tmp_path / "cap" / "widen_0.py")], cwd=tmp_path / "cap")
    text = rep.stdout + rep.stderr
    assert rep.returncode == 1 and "poison" in text, text[-3000:]
    assert "did not write them" not in text, text[-3000:]


TIMES_ZERO_PLUS_PADDING = '''
import torch, triton, triton.language as tl


@triton.jit
def k(out_ptr, x_ptr, g_ptr, w_ptr, n, B: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, B)
    m = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=m, other=0.0)
    g = tl.load(g_ptr + row * n + offs, mask=m, other=0.0)
    c = x - tl.sum(x, 0) / n           # padding lanes hold -mean
    w = tl.load(w_ptr + offs, mask=m)  # W_LOAD (no other=: undefined lanes, times g's zeros below)
    t = w * g + c                      # ADD
    tl.store(out_ptr + row, tl.sum(t, 0))  # SUM: the padding's -mean changes it


x = torch.randn(3, 333, device="cuda") + 3.0
g, w = torch.randn(3, 333, device="cuda"), torch.randn(333, device="cuda")
out = torch.empty(3, device="cuda")
k[(3,)](out, x, g, w, 333, B=512)
'''


def test_padding_added_to_undefined_lanes_times_zero_still_changes_the_sum(tmp_path):
    """helper-114 (trident's layer-norm backward): ``w * g + (x - mean)``, w undefined past n, g zero-padded: the
    products are 0 for finite garbage, and the padding's -mean the sum then takes is a masked_reduction error; it
    was only a times-zero warning, which said the results were right. (The products reach no result themselves:
    helper-118's store that drops those lanes got a warning when they were told at the addition.)"""
    (tmp_path / "prog.py").write_text(TIMES_ZERO_PLUS_PADDING)
    out = _run(["interpret", "--json", "f.json", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert out.returncode == 1, out.stderr[-3000:]
    line = {tag: i for i, ln in enumerate(TIMES_ZERO_PLUS_PADDING.splitlines(), 1)
            for tag in ("W_LOAD", "ADD", "SUM") if f"# {tag}" in ln}
    findings = json.loads((tmp_path / "f.json").read_text())["findings"]
    found = sorted((f["kind"], f["line"], f["severity"]) for f in findings)
    assert found == [("masked_reduction", line["SUM"], "error")], found
    assert "results are right" not in out.stderr, out.stderr[-3000:]


CUSTOM_COMBINE = '''
import torch, triton, triton.language as tl


@triton.jit
def combine(m_a, s_a, m_b, s_b):
    m = tl.maximum(m_a, m_b)
    return m, s_a * tl.exp(m_a - m) + s_b * tl.exp(m_b - m)


@triton.jit
def softmax(out_ptr, x_ptr, n, GUARD: tl.constexpr, B: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, B)
    m = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=m, other=-float("inf"))
    if GUARD:  # trident's: padding lanes of the pair are (0, 0), which no combine turns into NaN
        peak, s = tl.where(m, x, 0.0), tl.where(m, 1.0, 0.0)
    else:
        peak, s = x, tl.exp(x - x)  # padding lanes: (-inf, exp(-inf - -inf) = NaN)
    M, S = tl.reduce((peak, s), 0, combine)  # REDUCE
    tl.store(out_ptr + row * n + offs, tl.exp(x - M) / S, mask=m)


x = torch.randn(3, 100, device="cuda")
out = torch.empty_like(x)
softmax[(3,)](out, x, 100, GUARD=GUARD, B=128)
print("NAN", int(out.isnan().sum()))
'''


@pytest.mark.parametrize("guard", [0, 1])
def test_padding_that_makes_a_custom_combines_result_nan_is_a_masked_reduction(tmp_path, guard):
    """helper-114 (trident's softmax without its tl.where guard): a tl.reduce with a combine function of the
    kernel's own took NaN padding lanes and every output was NaN, with no finding (tl.max / tl.sum had one)."""
    (tmp_path / "prog.py").write_text(f"GUARD = {guard}\n" + CUSTOM_COMBINE)
    out = _run(["interpret", "--json", "f.json", "--", sys.executable, "prog.py"], cwd=tmp_path)
    findings = json.loads((tmp_path / "f.json").read_text())["findings"]
    if guard:
        assert out.returncode == 0 and "NAN 0" in out.stdout and not findings, (out.stdout, findings)
        return
    assert out.returncode == 1 and "NAN 300" in out.stdout, (out.stdout, out.stderr[-3000:])
    line = 1 + next(i for i, ln in enumerate(CUSTOM_COMBINE.splitlines(), 1) if "# REDUCE" in ln)
    assert [(f["kind"], f["line"], f["severity"]) for f in findings] == [("masked_reduction", line, "error")], findings
    assert "tl.reduce here takes 84 padding lane(s)" in findings[0]["message"], findings[0]["message"]
    assert "holds nan" in findings[0]["message"], findings[0]["message"]


ONLINE_SOFTMAX = '''
import torch, triton, triton.language as tl


@triton.jit
def online_softmax_sum(x_ptr, out_ptr, T, B: tl.constexpr):
    m = tl.full([B], float("-inf"), tl.float32)
    s = tl.zeros([B], dtype=tl.float32)
    for j in range(0, T, B):
        cols = j + tl.arange(0, B)
        x = tl.load(x_ptr + cols, mask=cols < T, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)  # MADE: -inf - -inf in lanes past T
        m = m_new
    mx = tl.max(m, axis=0)
    tl.store(out_ptr, tl.sum(s * tl.exp(m - mx), axis=0))  # SUM


x = torch.randn(20, device="cuda")
out = torch.empty(1, device="cuda")
online_softmax_sum[(1,)](x, out, 20, B=64)
'''


def test_a_nan_an_op_made_in_padding_lanes_is_traced_to_that_op_at_the_sum(tmp_path):
    """helper-117 (Triton-Puzzles' online softmax with T below the block): the sum's finding said only "lane (20,)
    holds nan: ... other=0", which breaks the max; it names the op that made the NaN in those lanes now."""
    (tmp_path / "prog.py").write_text(ONLINE_SOFTMAX)
    out = _run(["interpret", "--json", "f.json", "--", sys.executable, "prog.py"], cwd=tmp_path)
    findings = json.loads((tmp_path / "f.json").read_text())["findings"]
    line = {t: i for i, ln in enumerate(ONLINE_SOFTMAX.splitlines(), 1) for t in ("MADE", "SUM") if f"# {t}" in ln}
    assert [(f["kind"], f["line"]) for f in findings] == [("masked_reduction", line["SUM"])], out.stderr[-3000:]
    assert f"the NaN was made in those lanes by subtract at line {line['MADE']}" in findings[0]["message"], findings


TWO_PRODUCTS = '''
import torch, triton, triton.language as tl

@triton.jit
def k(W, DY, Y, OUT, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask)  # LOAD
    dy = tl.load(DY + cols, mask=mask, other=0.0)
    y = tl.where(mask, 1.0, 0.0) * w  # STORED: times exact zeros, then stored under the mask only
    tl.store(Y + cols, y, mask=mask)
    wdy = w * dy  # SUMMED: times exact zeros, into the sum
    tl.store(OUT, tl.sum(wdy, axis=0))

w, dy = torch.randn(5), torch.randn(5)
y, out = torch.empty(5), torch.empty(1)
k[(1,)](w, dy, y, out, 5, BLOCK=8)
print("ok", bool(torch.allclose(out, (w * dy).sum())))
'''


def test_undefined_lanes_times_zero_name_the_product_that_reaches_the_sum(tmp_path):
    """helper-122 (mamba's gated layer-norm backward): the warning named the load's first product with exact
    zeros (only stored, masked), not the one whose products enter the tl.sum it names."""
    (tmp_path / "prog.py").write_text(TWO_PRODUCTS)
    out = _run(["interpret", "--json", "f.json", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert "ok True" in out.stdout, out.stderr[-3000:]
    (f,) = json.loads((tmp_path / "f.json").read_text())["findings"]
    line = {t: i for i, ln in enumerate(TWO_PRODUCTS.splitlines(), 1) for t in ("LOAD", "SUMMED") if f"# {t}" in ln}
    assert (f["kind"], f["line"], f["severity"]) == ("poison", line["LOAD"], "warning"), f
    assert f"multiplied by exact zeros (line {line['SUMMED']}: wdy = w * dy" in f["message"], f["message"]


def test_two_loads_whose_undefined_lanes_meet_in_one_sum_are_both_told(tmp_path):
    """helper-137 (flash-attn's layer-norm backward with weight1): `w * dy + w1 * dy1`, w and w1 loaded without
    other=: a lane keeps one poison id, so the sum named the load of w1 alone, and the one of w came to light only
    once that was fixed."""
    prog = textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def k(W, W1, DY, DY1, OUT, N, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            mask = cols < N
            w = tl.load(W + cols, mask=mask)  # FIRST
            w1 = tl.load(W1 + cols, mask=mask)  # SECOND
            dy = tl.load(DY + cols, mask=mask, other=0.0)
            dy1 = tl.load(DY1 + cols, mask=mask, other=0.0)
            tl.store(OUT, tl.sum(w * dy + w1 * dy1, axis=0))

        t = [torch.randn(100) for _ in range(4)]
        out = torch.empty(1)
        k[(1,)](*t, out, 100, BLOCK=128)
    ''')
    (tmp_path / "prog.py").write_text(prog)
    rep = _run(["interpret", "--", sys.executable, "prog.py"], cwd=tmp_path)
    lines = {tag: next(i for i, ln in enumerate(prog.splitlines(), 1) if f"# {tag}" in ln) for tag in ("FIRST", "SECOND")}
    for tag, line in lines.items():
        assert f"poison in k at prog.py:{line} " in rep.stderr, (tag, rep.stderr[-3000:])


CAUSAL_CASES = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def attn_kernel(Q, K, V, O, L, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    om = pid * BM + tl.arange(0, BM)
    on = tl.arange(0, BN)
    od = tl.arange(0, D)
    q = tl.load(Q + om[:, None] * D + od[None, :], mask=om[:, None] < L, other=0.0)
    m_i = tl.zeros([BM], tl.float32) - float("inf")
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for start in range(0, (pid + 1) * BM, BN):
        kn = start + on
        k = tl.load(K + kn[None, :] * D + od[:, None], mask=kn[None, :] < L)  # LOAD K
        s = tl.dot(q, k)
        s += tl.where(om[:, None] >= kn[None, :], 0, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_ij[:, None])
        scale = tl.exp(m_i - m_ij)
        l_i = l_i * scale + tl.sum(p, 1)
        v = tl.load(V + kn[:, None] * D + od[None, :], mask=kn[:, None] < L, other=0.0)
        acc = acc * scale[:, None] + tl.dot(p, v)
        m_i = m_ij
    tl.store(O + om[:, None] * D + od[None, :], acc / l_i[:, None], mask=om[:, None] < L)


def make(case, dtype, device, generator):
    return {n: torch.randn(40, 16, generator=generator) for n in "qkv"}


def launch(q, k, v):
    o = torch.empty_like(q)
    attn_kernel[(2,)](q, k, v, o, 40, D=16, BM=32, BN=32)
    return o


def ref(q, k, v):
    causal = torch.ones(40, 40).triu(1).bool()
    return torch.softmax((q @ k.T).masked_fill(causal, float("-inf")), -1) @ v


SCENARIO = Scenario(name="causal", launch=launch, reference=ref, make_inputs=make, kernels=[attn_kernel],
                    cases=[Case("odd", dtypes=("float32",), atol=1e-2, rtol=1e-2)])
'''


def test_poison_made_nan_by_the_row_max_is_one_poison_finding_not_masked_reductions_too(tmp_path):
    """helper-142: ColossalAI's causal attention loads its key block without padding (a block pointer's
    boundary_check, no padding_option): the poison finding was right, but the NaN the row max spread into the
    causal mask's -inf lanes was also told as two masked_reduction errors (the tl.sum of p, the tl.dot of p and v)
    blaming "a masked load's other=" the kernel does not have."""
    (tmp_path / "cases.py").write_text(CAUSAL_CASES)
    line = next(i for i, ln in enumerate(CAUSAL_CASES.splitlines(), 1) if ln.rstrip().endswith("# LOAD K"))
    target = str(tmp_path / "cases.py")
    rec = runner.run(target, mode="interpret", instruments=instruments.build(target))
    got = sorted((f["kind"], f["line"]) for r in rec.results for f in r.findings)
    assert got == [("poison", line)], [(f["kind"], f["line"], f["message"][:200]) for r in rec.results
                                       for f in r.findings]


PADDED_HEAD = '''
import torch, triton, triton.language as tl

@triton.jit
def qk(Q, K, O, L, D: tl.constexpr, BM: tl.constexpr):
    m = tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :], mask=m[:, None] < L)  # QLOAD: rows past L undefined, whole rows
    k = tl.load(K + d[:, None] * L + m[None, :], mask=m[None, :] < L)  # KLOAD: columns past L undefined
    s = tl.dot(q, k)
    tl.store(O + m[:, None] * L + m[None, :], s, mask=(m[:, None] < L) & (m[None, :] < L))

L, D = 13, 32
q = torch.randn(L, D, device="cuda")
k = torch.randn(D, L, device="cuda")
q[:, 20:] = 0.0  # a head dim padded with zeros, as SageAttention pads 40 to 64
k[20:, :] = 0.0
o = torch.empty(L, L, device="cuda")
qk[(1,)](q, k, o, L, D=D, BM=16)
print("max err", (o - q @ k).abs().max().item())
'''


def test_undefined_whole_rows_meeting_a_zero_padded_head_dim_are_no_products_with_exact_zeros(tmp_path):
    """helper-143: SageAttention at head dim 40 (padded to 64 with zeros) warned "multiplied by exact zeros" at its q
    and k loads: the undefined lanes were the q rows past the sequence and the k columns past it, whole rows and
    columns, whose outputs are padding themselves; at head dim 64 neither warning. The zeros they met change nothing."""
    (tmp_path / "prog.py").write_text(PADDED_HEAD)
    out = _run(["interpret", "--json", "f.json", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert out.returncode == 0 and "max err" in out.stdout, out.stderr[-3000:]
    findings = json.loads((tmp_path / "f.json").read_text())["findings"]
    assert findings == [], [f["message"] for f in findings]
