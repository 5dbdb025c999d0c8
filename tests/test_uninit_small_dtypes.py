"""Output elements no launch wrote, of int8 / fp8 / int16 tensors (interp/byte_marks.py): a stranger's find on
SageAttention's int8 quantisation kernels, where a store mask too strict (``mask=offs < L - 1``) left the last row
of a torch.empty int8 output unwritten and tritondbg said nothing, while the same bug on an fp16 output was told.
Such memory is filled with 0x5A in every byte and the bytes the kernels store are recorded, so a kernel that stores
90 (the mark's value) everywhere, and memory torch wrote, are no finding."""
from __future__ import annotations

import os
import sys
import textwrap

import pytest
import torch
from conftest import run_cli, run_sanitized

from tritondbg.interp import byte_marks, initcheck

pytestmark = pytest.mark.interpreter

KERNEL = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def quant_rows(x_ptr, q_ptr, L, D: tl.constexpr, CUT: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    offs = rows[:, None] * D + cols[None, :]
    x = tl.load(x_ptr + offs, mask=rows[:, None] < L, other=0.0)
    tl.store(q_ptr + offs, x.to(q_ptr.dtype.element_ty), mask=rows[:, None] < L - CUT)  # STORE
'''

SCENARIOS = KERNEL + '''
from tritondbg import Case, Scenario


def _launch(cut, dtype):
    def launch(x):
        L, D = x.shape
        q = torch.empty(L, D, dtype=dtype, device=x.device)
        quant_rows[(triton.cdiv(L, 4),)](x, q, L, D=D, CUT=cut, BLOCK=4)  # LAUNCH
        return q
    return launch


def make_inputs(case, dtype, device, generator):
    x = torch.randint(-100, 100, (10, 16), generator=generator).float()
    if case.params.get("mark"):  # every element the mark's value: 0x5A in every byte of the output dtype
        x = torch.full((10, 16), case.params["mark"])
    return dict(x=x.to(device))


def _cases(mark):  # int8 90 is 0x5A; float8 e4m3fn 20.0 is 0x5A
    return [Case("tiny", params={}, dtypes=("float32",)), Case("ninety", params={"mark": mark}, dtypes=("float32",))]


int8_short = Scenario("int8_short", make_inputs, _launch(1, torch.int8), lambda x: x.to(torch.int8), _cases(90.0),
                      kernels=[quant_rows])
int8_ok = Scenario("int8_ok", make_inputs, _launch(0, torch.int8), lambda x: x.to(torch.int8), _cases(90.0),
                   kernels=[quant_rows])
fp8_short = Scenario("fp8_short", make_inputs, _launch(1, torch.float8_e4m3fn),
                     lambda x: x.to(torch.float8_e4m3fn), _cases(20.0), kernels=[quant_rows])
fp8_ok = Scenario("fp8_ok", make_inputs, _launch(0, torch.float8_e4m3fn), lambda x: x.to(torch.float8_e4m3fn),
                  _cases(20.0), kernels=[quant_rows])
'''

PROGRAM = KERNEL + '''
mode, dtype = sys.argv[1], getattr(torch, sys.argv[2])
L, D = 10, 16
x = torch.randint(-100, 100, (L, D)).float()
if mode.startswith("ninety"):  # the kernel stores the mark's value (0x5A in every byte) into every element it writes
    x.fill_({torch.int8: 90.0, torch.int16: 23130.0}.get(dtype, 20.0))  # (float8 e4m3fn: 20.0)
q = torch.empty(L, D, dtype=dtype, device="cuda")  # ALLOC
cut = 1 if mode in ("short", "ninety_short", "torch_rest") else 0
quant_rows[(triton.cdiv(L, 4),)](x.to("cuda"), q, L, D=D, CUT=cut, BLOCK=4)
if mode == "torch_rest":  # the program writes the row the kernel leaves
    q[L - 1:] = 0
if mode == "cache":  # torch filled a buffer (90s among its data), a kernel updates all rows but the last
    c = torch.empty(L, D, dtype=dtype, device="cuda")
    c.copy_(torch.randint(-100, 100, (L, D)).to(dtype))
    c[L - 1:] = 90
    quant_rows[(triton.cdiv(L, 4),)](x.to("cuda"), c, L, D=D, CUT=1, BLOCK=4)
print("done")
'''


def _line(text: str, tag: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    p = tmp_path_factory.mktemp("small") / "quant.py"
    p.write_text(textwrap.dedent(SCENARIOS))
    return p


def _uninit(rec):
    return [f for r in rec.results for f in r.findings if f["kind"] == "uninit"]


@pytest.mark.parametrize("scenario", ["int8_short", "fp8_short"])
@pytest.mark.parametrize("case", ["tiny", "ninety"])
def test_a_small_dtype_output_row_no_launch_wrote_is_found(scenarios, scenario, case):
    (f,) = _uninit(run_sanitized(f"{scenarios}::{scenario}", case))
    assert (f["op"], f["tensor"], f["lanes"], f["offsets"], f["line"]) == \
        ("unwritten", "out", 16, [144], _line(SCENARIOS, "LAUNCH")), f
    assert "16 of 160 element(s) of output out were never written (first out[9, 0])" in f["message"], f["message"]
    assert "stores' masks are not too strict" in f["message"] and "torch.empty at" in f["message"], f["message"]


@pytest.mark.parametrize("scenario", ["int8_ok", "fp8_ok"])
@pytest.mark.parametrize("case", ["tiny", "ninety"])
def test_a_kernel_that_writes_every_element_is_no_finding_even_storing_the_marks_value(scenarios, scenario, case):
    rec = run_sanitized(f"{scenarios}::{scenario}", case)
    assert not _uninit(rec) and all(r.status == "pass" for r in rec.results), [r.findings for r in rec.results]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("prog")
    (d / "prog.py").write_text(textwrap.dedent(PROGRAM))
    return d


def _run_program(program, *args):
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["TRITONDBG_OUT"] = str(program / "traces")
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], env, cwd=program)
    assert "done" in p.stdout, p.stdout + p.stderr
    return p


@pytest.mark.parametrize("mode", ["short", "ninety_short"])
@pytest.mark.parametrize("dtype", ["int8", "float8_e4m3fn", "int16"])
def test_program_mode_tells_the_row_a_launch_left_unwritten_at_the_end(program, mode, dtype):
    p = _run_program(program, mode, dtype)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: uninit in quant_rows")]
    assert len(lines) == 1, p.stderr
    assert f"prog.py:{_line(PROGRAM, 'STORE')}" in lines[0], lines[0]
    assert "left 16 of 160 unwritten (first at index (9, 0))" in lines[0], lines[0]
    assert f"torch.empty at prog.py:{_line(PROGRAM, 'ALLOC')}" in lines[0], lines[0]
    assert "(0x5A in every byte)" in lines[0] and "a store mask too strict" in lines[0], lines[0]


@pytest.mark.parametrize("mode", ["ok", "ninety", "torch_rest", "cache"])
@pytest.mark.parametrize("dtype", ["int8", "float8_e4m3fn"])
def test_program_mode_is_quiet_where_every_element_was_written(program, mode, dtype):
    p = _run_program(program, mode, dtype)
    assert "uninit" not in p.stderr and p.returncode == 0, p.stderr


def test_memory_torch_wrote_is_data_and_the_mark_fills_every_byte():
    initcheck.install()
    try:
        for dtype in (torch.int8, torch.uint8, torch.int16, torch.float8_e4m3fn, torch.float8_e5m2):
            t = torch.empty(3, 5, dtype=dtype)
            assert (t.view(torch.uint8) == 0x5A).all(), dtype
            assert initcheck.marked_elements(t).all() and initcheck.marked_elements(t[1:, 2:]).shape == (6,)
        b = torch.empty(4, dtype=torch.bool)  # (bool: no mark)
        assert initcheck.marked_elements(b) is None
        t = torch.empty(8, dtype=torch.int8)
        t[:4] = 7  # torch wrote part of it: the 90s left may be its data from now on
        assert initcheck.marked_elements(t) is None
        t[:4] = 90
        assert initcheck.marked_elements(t) is None  # (it stays so)
        assert not byte_marks.holding_mark(torch.tensor([1, 90], dtype=torch.int8))[0]
        assert byte_marks.holding_mark(torch.tensor([1, 90], dtype=torch.int8))[1]
    finally:
        initcheck.uninstall()


READER = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def fill_cache(src, cache, n_written, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n_written
    tl.store(cache + offs, tl.load(src + offs, mask=m), mask=m)


@triton.jit
def dequant_sum(cache, scale, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = tl.load(cache + offs, mask=offs < n, other=0.0)  # READ
    tl.store(out, tl.sum(q.to(tl.float32), 0) * tl.load(scale))


mode, dtype = sys.argv[1], getattr(torch, sys.argv[2])
cap, written = 64, 40
src = torch.randint(-100, 100, (cap,)).to(dtype).to("cuda")
cache = torch.empty(cap, dtype=dtype, device="cuda")
if mode == "torch_wrote":  # the program filled the cache itself (with 90s among its data): its bytes are data
    cache.copy_(src)
    cache[written:] = 90
if mode == "ninety":  # the kernel stores the mark's value itself
    src.view(torch.uint8).fill_(0x5A)
fill_cache[(1,)](src, cache, cap if mode in ("torch_wrote", "ninety") else written, BLOCK=64)
out = torch.empty(1, device="cuda")
dequant_sum[(1,)](cache, torch.tensor([0.5], device="cuda"), out, written if mode == "ok" else cap, BLOCK=64)
print("done")
'''


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    d = tmp_path_factory.mktemp("reader")
    (d / "prog.py").write_text(textwrap.dedent(READER))
    return d


@pytest.mark.parametrize("dtype", ["int8", "float8_e4m3fn", "int16"])
def test_a_read_of_small_dtype_memory_no_launch_wrote_is_a_finding_at_the_load(reader, dtype):
    # a paged cache read past the slots written: the same bug on an fp16 cache was a finding; on int8 only the
    # writer's warning came, and the exit status was 0
    p = _run_program(reader, "past", dtype)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: uninit in dequant_sum")]
    assert len(lines) == 1, p.stderr
    assert f"prog.py:{_line(READER, 'READ')}" in lines[0] and "reads cache[40] (24 lane(s))" in lines[0], lines[0]
    assert "they enter tl.sum" in lines[0], lines[0]
    assert p.returncode == 1, p.stderr


@pytest.mark.parametrize("mode", ["ok", "torch_wrote", "ninety"])
def test_reads_of_small_dtype_memory_written_are_quiet(reader, mode):
    p = _run_program(reader, mode, "int8")
    assert "uninit in dequant_sum" not in p.stderr, p.stderr
    if mode != "ok":
        assert "uninit" not in p.stderr and p.returncode == 0, p.stderr
