"""Uninitialized memory (interp/initcheck.py): under the sanitizers torch.empty & co. hand out marked memory, and
a kernel that uses what nothing wrote is an ``uninit`` finding; a spin lock is told from a race (interp/memops.py).

The zoo files uninit_accumulate.py / uninit_read.py / uninit_lock.py (run by test_interp_sanitize.py's zoo tests)
cover the scenario form: each bug at its line, each twin clean."""
from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, run_sanitized
import torch

from tritondbg.interp import initcheck

pytestmark = [pytest.mark.interpreter, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

_KINDS = {torch.float32: ("fp32", np.uint32), torch.float64: ("fp64", np.uint64), torch.float16: ("fp16", np.uint16),
          torch.bfloat16: ("bf16", np.uint16), torch.int32: ("i32", np.uint32), torch.int64: ("i64", np.uint64)}


def _raw(t):
    kind, view = _KINDS[t.dtype]
    ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    raw = t.view(ints).numpy().view(view)
    if kind in ("fp32", "fp64", "fp16"):
        raw = raw.view({"fp32": np.float32, "fp64": np.float64, "fp16": np.float16}[kind])
    return raw, kind


def test_every_empty_factory_hands_out_the_mark_and_is_restored():
    originals = (torch.empty, torch.empty_like, torch.empty_strided)
    initcheck.install()
    initcheck.install()  # nested (a program-wide install and a launch's)
    try:
        x = torch.randn(3, 4)
        for dtype in _KINDS:
            for t in (torch.empty(5, 3, dtype=dtype), torch.empty_like(x, dtype=dtype),
                      torch.empty_strided((2, 3), (1, 2), dtype=dtype), x.new_empty((4,), dtype=dtype),
                      x.new_empty_strided((2, 2), (2, 1), dtype=dtype)):
                raw, kind = _raw(t)
                assert initcheck.marked(raw, kind).all(), (dtype, t)
        leaf = torch.empty(3, requires_grad=True)  # filled without tripping autograd's in-place check
        assert leaf.requires_grad and torch.isnan(leaf).all()
        # a NaN the data holds, or data, is not the mark
        for t in (torch.full((4,), float("nan")), torch.randn(4), torch.arange(4, dtype=torch.int32)):
            assert not initcheck.marked(*_raw(t)).any()
        assert torch.zeros(3).eq(0).all()  # other factories untouched
        initcheck.uninstall()
        assert initcheck.installed()
    finally:
        initcheck.uninstall()
    assert not initcheck.installed()
    assert (torch.empty, torch.empty_like, torch.empty_strided) == originals
    assert "new_empty" not in torch.Tensor.__dict__ and "new_empty_strided" not in torch.Tensor.__dict__


SPIN = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def spin(x_ptr, lock_ptr, out_ptr, N, BLOCK: tl.constexpr, RELEASE_FIRST: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)
    while tl.atomic_cas(lock_ptr, 0, 1) != 0:  # CAS
        pass
    if RELEASE_FIRST:
        tl.atomic_xchg(lock_ptr, 0)
    acc = tl.load(out_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + cols, acc + x * (tl.program_id(0) + 1), mask=cols < N)  # STORE
    if not RELEASE_FIRST:
        tl.atomic_xchg(lock_ptr, 0)


def _launch(zeroed, release_first):
    def launch(x):
        out = torch.zeros_like(x)
        lock = (torch.zeros if zeroed else torch.empty)(1, dtype=torch.int32, device=x.device)
        spin[(3,)](x, lock, out, x.numel(), BLOCK=32, RELEASE_FIRST=release_first)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(20, generator=generator).to(device))


def reference(x):
    return 6 * x


_CASES = [Case("tiny", params={}, dtypes=("float32",))]
empty_lock = Scenario("empty_lock", make_inputs, _launch(False, False), reference, _CASES, kernels=[spin])
locked = Scenario("locked", make_inputs, _launch(True, False), reference, _CASES, kernels=[spin])
unlocked_store = Scenario("unlocked_store", make_inputs, _launch(True, True), reference, _CASES, kernels=[spin])
'''


def _line(text: str, tag: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith((f"# {tag}", f": {tag}")))


@pytest.fixture
def spin_file(tmp_path):
    p = tmp_path / "spin.py"
    p.write_text(SPIN)
    return p


_run = run_sanitized


def test_a_spin_on_a_torch_empty_lock_is_found_and_stopped(spin_file):
    t0 = time.monotonic()
    rec = _run(f"{spin_file}::empty_lock")
    assert time.monotonic() - t0 < 60
    (r,) = rec.results
    assert r.status == "error" and "atomic_cas" in r.message and "never reads its free value" in r.message, r.message
    (f,) = [f for f in r.findings if f["kind"] == "uninit"]
    assert f["line"] == _line(SPIN, "CAS") and f["op"] == "cas" and f["tensor"] == "lock_ptr"
    assert "torch.empty at" in f["message"] and "spin.py" in f["message"]


def test_stores_under_a_lock_are_not_a_race_but_after_its_release_they_are(spin_file):
    rec = _run(f"{spin_file}::locked")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings
    rec = _run(f"{spin_file}::unlocked_store")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    assert races and races[0]["line"] == _line(SPIN, "STORE"), rec.results[0].findings


PROGRAM = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def add_rows(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.atomic_add(out_ptr + cols, x, mask=cols < N)  # ATOMIC


x = torch.randn(6, 50, dtype=torch.bfloat16)
out = (torch.zeros if sys.argv[1:] == ["zeros"] else torch.empty)(50, dtype=torch.float32)  # ALLOC
add_rows[(6,)](x, out, 50, BLOCK=64)
print("finite", bool(torch.isfinite(out).all()))
'''


def test_program_mode_reports_an_atomic_into_torch_empty(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    bad = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    lines = [ln for ln in bad.stderr.splitlines() if ln.startswith("tritondbg: uninit")]
    assert len(lines) == 1, bad.stderr
    assert f"prog.py:{_line(PROGRAM, 'ATOMIC')}" in lines[0] and "the first on out_ptr[0]" in lines[0]
    assert "tl.atomic_add into memory nothing wrote" in lines[0]
    assert f"torch.empty at prog.py:{_line(PROGRAM, 'ALLOC')}" in lines[0]
    good = run_cli(["interpret", "--", sys.executable, "prog.py", "zeros"], cli_env, cwd=tmp_path)
    assert good.returncode == 0 and "uninit" not in good.stderr and "finite True" in good.stdout, good.stderr
    plain = run_cli(["interpret", "--no-sanitize", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "uninit" not in plain.stderr and "finite" in plain.stdout  # no mark without the sanitizers


HOLES = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def scale_rows(x_ptr, o_ptr, n, CUT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(o_ptr + row * n + cols, x * 2, mask=(cols < n - CUT) & (cols >= 0))


x = torch.randn(5, 100)
o = torch.empty_like(x)  # ALLOC
if sys.argv[1] == "short":
    scale_rows[(5,)](x, o, 100, CUT=1, BLOCK=128)  # a mask one column too strict
elif sys.argv[1] == "rows":
    scale_rows[(5 // 2,)](x, o, 100, CUT=0, BLOCK=128)  # a grid of n // 2: the last 3 rows, 60%, never written
else:  # two launches that each fill half of the rows: nothing left once both ran
    scale_rows[(3,)](x, o, 100, CUT=0, BLOCK=128)
    scale_rows[(2,)](x[3:], o[3:], 100, CUT=0, BLOCK=128)
if sys.argv[2:] == ["read"]:  # the program reads o (what it left unwritten, too: an error, test_readwatch.py)
    print("max err", float((o - 2 * x).abs().max()))
if sys.argv[2:] == ["kept"]:  # only the rows the launch wrote: an over-allocated buffer, its band left by design
    print("kept err", float((o[:2] - 2 * x[:2]).abs().max()))
if sys.argv[2:] == ["kept_copy"]:  # the same rows through a copy, or out of torch's sight (helper-129)
    print("kept err", float((o[:2].double() - 2 * x[:2]).abs().max()), len(o[:2].tolist()))
'''


def test_program_mode_warns_of_an_output_a_launch_left_a_band_of_unwritten(tmp_path, cli_env):
    """A store mask one column too strict: the program printed "max err nan" (the mark tritondbg put in
    torch.empty_like) and the tool said 0 findings (a stranger's find). Now a warning names the tensor, the count
    and where the memory came from, told at the program's end if no later launch wrote them (a buffer two launches
    fill in halves gets none), for a band of any size (a grid of n // 2 rows leaves 60%)."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(HOLES))
    short = run_cli(["interpret", "--", sys.executable, "prog.py", "short"], cli_env, cwd=tmp_path)
    lines = [ln for ln in short.stderr.splitlines() if ln.startswith("tritondbg: warning: uninit in scale_rows")]
    assert len(lines) == 1, short.stderr
    assert "left 5 of 500 unwritten (first at index (0, 99))" in lines[0], lines[0]
    assert f"torch.empty_like at prog.py:{_line(HOLES, 'ALLOC')}" in lines[0], lines[0]
    rows = run_cli(["interpret", "--", sys.executable, "prog.py", "rows"], cli_env, cwd=tmp_path)
    assert "left 300 of 500 unwritten (first at index (2, 0))" in rows.stderr, rows.stderr  # (missed past a tenth)
    halves = run_cli(["interpret", "--", sys.executable, "prog.py", "halves", "read"], cli_env, cwd=tmp_path)
    assert halves.returncode == 0 and "uninit" not in halves.stderr and "max err 0.0" in halves.stdout, \
        halves.stdout + halves.stderr


def test_a_band_the_program_reads_around_is_not_told_at_its_end(tmp_path, cli_env):
    """helper-120: attorch's losses fill cdiv(n, BLOCK) of the cdiv(n, 32) partial sums they allocate and read back
    the first cdiv(n, BLOCK): a warning at the program's end (--strict failed correct code). A program seen reading
    the tensor around the band, never into it, left it by design."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(HOLES))
    kept = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py", "rows", "kept"], cli_env, cwd=tmp_path)
    assert kept.returncode == 0 and "uninit" not in kept.stderr and "kept err 0.0" in kept.stdout, \
        kept.stdout + kept.stderr
    read = run_cli(["interpret", "--", sys.executable, "prog.py", "rows", "read"], cli_env, cwd=tmp_path)
    assert read.returncode == 1 and "tritondbg: uninit in scale_rows" in read.stderr, read.stderr[-3000:]
    # helper-129: read around through a copy (`o[:2].double()`) or out of torch's sight (`o[:2].tolist()`)
    copy = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py", "rows", "kept_copy"], cli_env,
                   cwd=tmp_path)
    assert copy.returncode == 0 and "uninit" not in copy.stderr and "kept err 0.0 2" in copy.stdout, \
        copy.stdout + copy.stderr


CAPACITY_INT = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def fill(idx_ptr, n):
    i = tl.program_id(0)
    tl.store(idx_ptr + i, i * 3, mask=i < n)

idx = torch.empty(6, dtype=torch.int64, device="cuda")  # capacity 6, 4 used (torchtitan's combine metadata)
fill[(6,)](idx, 4)
k = 4
print("read", int(idx[:k].sum()) if sys.argv[1] == "prefix" else int(idx.sum()))
'''


@pytest.mark.parametrize("how, told", [("prefix", False), ("whole", True)])
def test_an_integer_capacity_buffer_read_around_its_band_is_not_told(tmp_path, cli_env, how, told):
    """helper-129: torchtitan's fill_combine_metadata leaves a capacity buffer's int64 tail unwritten by design and
    its test reads the prefix (`r[:k].sum()`, `torch.equal(r[:k], ...)`): told at the end, --strict failed. A read of
    a part holding none of the mark is a read around the band; a sum over the tail still uses it."""
    (tmp_path / "prog.py").write_text(CAPACITY_INT)
    p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py", how], cli_env, cwd=tmp_path)
    if told:
        assert p.returncode == 1 and "uninit in fill" in p.stderr, p.stderr[-3000:]
    else:
        assert p.returncode == 0 and "uninit" not in p.stderr and "read 18" in p.stdout, p.stdout + p.stderr


WRONG_ROW = """\
import torch, triton, triton.language as tl

@triton.jit
def k(x, buf, out):
    row = tl.program_id(0)
    tl.store(buf + row, tl.load(x + row) * 2)
    v = tl.load(buf + row + 1, mask=row + 1 < 77)  # the next row, which its program writes later: READ
    tl.store(out + row, v)                         # every element of out is stored

x = torch.randn(77, device="cuda")
buf, out = torch.empty(77, device="cuda"), torch.empty(77, device="cuda")
k[(77,)](x, buf, out)
"""


def test_a_launch_storing_what_it_read_uninitialized_is_not_told_it_left_a_band_unwritten(tmp_path, cli_env):
    """helper-82: a program reading the next row (which its program writes later) stored those values into every
    element of ``out``; tritondbg said first "a launch wrote 1 element(s) of out and left 76 of 77 unwritten ... a
    store mask too strict?", which was false. Marks inside the range the launch's stores wrote, in a launch that
    read marked memory, are said in the read's finding."""
    (tmp_path / "prog.py").write_text(WRONG_ROW)
    out = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "unwritten (first at" not in out.stderr and "left 76 of 77" not in out.stderr, out.stderr
    line = next((ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: uninit in k")), out.stderr)
    assert f"prog.py:{_line(WRONG_ROW, 'READ')}" in line and "reads buf[1]" in line, line
    assert "76 element(s) of out inside the range its stores wrote hold the mark" in line, line


CARRIED = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def bias_act(x, b, y, n, B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    m = cols < n - 1  # one column short
    v = tl.load(x + row * n + cols, mask=m) + tl.load(b + cols, mask=m)
    tl.store(y + row * n + cols, tl.maximum(v, 0.0), mask=m)  # STORE


@triton.jit
def row_sum(x, out, n, B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    v = tl.load(x + row * n + cols, mask=cols < n, other=0.0)  # READ
    tl.store(out + row, tl.sum(v, axis=0))


x, b = torch.randn(8, 96), torch.randn(96)
y = torch.empty_like(x)
bias_act[(8,)](x, b, y, 96, B=128)
if sys.argv[1:] == ["read"]:
    s = torch.empty(8)
    row_sum[(8,)](y * 2 + 1, s, 96, B=128)  # torch carries the mark into memory it wrote  # TORCH
print("done")
'''


def test_a_band_read_later_is_told_first_at_its_store_and_the_reader_is_not_blamed(tmp_path, cli_env):
    """helper-46: a mask one column short in the user's kernel, then `y * 2 + 1` in torch, then a correct kernel:
    the correct kernel got the error "memory nothing wrote ... (allocated uninitialized)" (false: torch wrote it)
    and the band came last, at exit, a warning at the kernel's def line. Now the band is told where the kernel uses
    what torch computed from it, before the reader's finding, at the store's line, as the error; the reader's is a warning saying the values were computed from
    memory nothing wrote. --strict fails a run whose only finding is the band (a warning when nothing reads it)."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(CARRIED))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "read"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: ")]
    # the band, read downstream, is the error; the reader, where the values show, a follow-on warning
    band = next(i for i, ln in enumerate(lines) if ln.startswith("tritondbg: uninit in bias_act"))
    read = next(i for i, ln in enumerate(lines) if ln.startswith("tritondbg: warning: uninit in row_sum"))
    assert band < read, p.stderr
    assert f"at prog.py:{_line(CARRIED, 'STORE')}:" in lines[band], lines[band]
    # (torch computed `y * 2 + 1` from them, and the launch of row_sum used that: readwatch.py tells it there)
    assert f"the launch of row_sum (its x) at prog.py:{_line(CARRIED, 'TORCH')}" in lines[band], lines[band]
    assert "read 8 of 768 element(s) of values computed from y (first at index (0, 95))" in lines[band], lines[band]
    assert f"at prog.py:{_line(CARRIED, 'READ')} " in lines[read], lines[read]
    assert "computed (by torch, or another launch) from memory nothing wrote" in lines[read], lines[read]
    assert "a follow-on of the unwritten band told above" in lines[read], lines[read]
    assert "allocated uninitialized" not in lines[read], lines[read]
    assert "1 finding(s), 1 warning(s)" in p.stderr, p.stderr
    alone = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert alone.returncode == 0 and "1 warning(s)" in alone.stderr, alone.stderr
    strict = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert strict.returncode == 1 and "--strict: 1 warning(s) fail the run" in strict.stderr, strict.stderr


def test_a_band_warning_is_captured_on_finding_and_its_reproducer_shows_it(tmp_path, cli_env):
    """helper-44: the band was told at the program's end, so --capture-on-finding saved nothing for it, and a
    reproducer of the launch replayed as a clean pass (its saved y held the mark as data). Now the launch's bytes
    are kept until the band is told, the reproducer records the memory as torch.empty's, and its replay under the
    sanitizers gives the same warning; a buffer two launches fill saves nothing."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(HOLES))
    out = tmp_path / "found"
    p = run_cli(["interpret", "--capture-on-finding", "--out", str(out), "--", sys.executable, "prog.py", "short"],
                cli_env, cwd=tmp_path)
    assert "warning: uninit in scale_rows" in p.stderr and "1 reproducer(s)" in p.stderr, p.stderr
    (repro,) = sorted(out.glob("scale_rows_*.py"))
    replay = run_cli(["interpret", str(repro)], cli_env, cwd=tmp_path)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "warning: uninit" in replay.stdout and "left 5 of 500 unwritten (first at index (0, 99))" in replay.stdout
    assert f"torch.empty_like at prog.py:{_line(HOLES, 'ALLOC')}" in replay.stdout, replay.stdout
    plain = run_cli(["interpret", "--no-sanitize", str(repro)], cli_env, cwd=tmp_path)
    # without the sanitizers no band is computed; the replay still says its reference holds the mark there
    assert plain.returncode == 0 and "unwritten" not in plain.stdout, plain.stdout + plain.stderr
    assert "holds tritondbg's uninitialized-memory mark (NaN) in 5 of 500" in plain.stdout, plain.stdout
    none = tmp_path / "none"
    halves = run_cli(["interpret", "--capture-on-finding", "--out", str(none), "--", sys.executable, "prog.py",
                      "halves"], cli_env, cwd=tmp_path)
    assert halves.returncode == 0 and not list(none.glob("*.py")), halves.stderr


def test_a_plain_capture_without_a_gpu_saves_reproducers_that_show_the_band(tmp_path, cli_env):
    """helper-46: `capture -- CMD` on a machine without a GPU did not mark torch.empty's memory, so the reproducer
    of a launch that left a column unwritten held the same bytes before and after and passed interpret and check.
    Now capture under the interpreter marks it as `interpret --` does: the replay warns, `check --strict` fails."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(HOLES))
    out = tmp_path / "cap"
    p = run_cli(["capture", "--out", str(out), "--", sys.executable, "prog.py", "short"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "1 reproducer(s)" in p.stderr, p.stderr
    (repro,) = sorted(out.glob("scale_rows_*.py"))
    replay = run_cli(["interpret", str(repro)], cli_env, cwd=tmp_path)
    assert replay.returncode == 0 and "left 5 of 500 unwritten (first at index (0, 99))" in replay.stdout, \
        replay.stdout + replay.stderr
    strict = run_cli(["check", str(out), "--gates", "sanitize", "-n", "1", "--strict"], cli_env, cwd=tmp_path)
    assert strict.returncode == 1 and "(--strict)" in strict.stdout, strict.stdout + strict.stderr


def test_scenario_zoo_messages_say_where_the_memory_came_from():
    zoo = Path(__file__).resolve().parent / "zoo"
    rec = _run(f"{zoo / 'uninit_read.py'}::buggy")
    f = next(f for r in rec.results for f in r.findings if f["kind"] == "uninit")
    assert "torch.empty_like at" in f["message"] and "stored to out_ptr[0]" in f["message"], f["message"]
    assert all(not any(x["kind"] == "nan_inf" for x in r.findings) for r in rec.results)  # no follow-on finding


def test_output_elements_no_launch_wrote_are_found_at_the_launch_with_its_grid():
    zoo = Path(__file__).resolve().parent / "zoo" / "unwritten_tail.py"
    launch_line = _line(zoo.read_text(), "BUG: uninit")
    rec = _run(f"{zoo}::buggy")
    for r in rec.results:
        (f,) = [f for f in r.findings if f["kind"] == "uninit"]
        assert (f["line"], f["op"], f["tensor"], f["lanes"], f["offsets"]) == (launch_line, "unwritten", "out", 40, [960])
        assert "grid (15, 1, 1)" in f["message"] and "torch.empty_like at" in f["message"], f["message"]
        assert not [x for x in r.findings if x["kind"] == "nan_inf"]


def test_an_int32_output_no_launch_wrote_is_found(tmp_path):
    (tmp_path / "ints.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def iota(out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, offs, mask=offs < n - 3)

        def launch(x):
            out = torch.empty(x.shape, dtype=torch.int32, device=x.device)
            iota[(triton.cdiv(x.numel(), 16),)](out, x.numel(), BLOCK=16)
            return out

        cases = Scenario("cases", lambda case, dtype, device, generator: dict(x=torch.zeros(40, device=device)),
                         launch, lambda x: torch.arange(40, dtype=torch.int32), [Case("tiny", dtypes=("float32",))],
                         kernels=[iota])
    '''))
    rec = _run(str(tmp_path / "ints.py"))
    (f,) = [f for f in rec.results[0].findings if f["kind"] == "uninit"]
    assert f["op"] == "unwritten" and f["lanes"] == 3 and f["offsets"] == [37], f


def test_integer_data_equal_to_the_mark_is_data_where_no_factory_marked_it(tmp_path):
    """0x5A5A5A5A is initcheck's int32 mark; a tensor the user filled with it (torch.full) holds data: reading it,
    atomically adding into it or leaving it unwritten is no uninit finding. The same value in torch.empty's
    memory still is one (the load of `empty` below)."""
    (tmp_path / "mark.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def copy_add(x_ptr, junk_ptr, out_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0)
            tl.atomic_add(cnt_ptr + offs, 1, mask=offs < n)
            tl.store(out_ptr + offs, x, mask=offs < n - 3)
            tl.store(junk_ptr + offs, tl.load(junk_ptr + offs, mask=offs < 2, other=0), mask=offs < 2)

        MARK = 0x5A5A5A5A

        def launch(x):
            out = torch.full((32,), MARK, dtype=torch.int32)
            cnt = torch.full((32,), MARK, dtype=torch.int32)
            junk = torch.empty(32, dtype=torch.int32)
            copy_add[(2,)](x, junk, out, cnt, 32, BLOCK=16)
            return {"out": out, "cnt": cnt}

        def make(case, dtype, device, generator):
            return dict(x=torch.full((32,), MARK, dtype=torch.int32))

        def reference(x):
            return {"out": x.clone(), "cnt": torch.full((32,), MARK + 1, dtype=torch.int32)}

        cases = Scenario("cases", make, launch, reference, [Case("tiny", dtypes=("int32",))], kernels=[copy_add])
    '''))
    rec = _run(str(tmp_path / "mark.py"))
    uninit = [f for f in rec.results[0].findings if f["kind"] == "uninit"]
    assert [(f["op"], f["tensor"]) for f in uninit] == [("load", "junk_ptr")], uninit


RESET_PROGRAM = '''
import torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["N"],
                 reset_to_zero=["out_ptr"])
@triton.jit
def total(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < N, other=0.0), axis=0))  # ATOMIC

x = torch.randn(100)
for call in range(2):
    out = torch.empty(1)
    total[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, out, 100)
    print("call", call, "right" if abs(out.item() - x.sum().item()) < 1e-3 else "wrong")
'''


def test_the_first_call_of_an_autotune_key_gets_reset_to_zero_as_after_tritons_benchmark(tmp_path, cli_env):
    """Triton zeroes reset_to_zero arguments after the first call's benchmark, before the launch: that call is
    right on a GPU, the next one with the same key (no benchmark, no reset) is not. The pinned config skipped
    the reset: both calls were reported and the first one's output was NaN."""
    (tmp_path / "prog.py").write_text(RESET_PROGRAM)
    out = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "call 0 right" in out.stdout and "call 1 wrong" in out.stdout, out.stdout + out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: uninit")]
    assert out.returncode == 1 and len(lines) == 1 and f"prog.py:{_line(RESET_PROGRAM, 'ATOMIC')}" in lines[0]


def test_memory_a_factory_handed_out_is_forgotten_once_freed_or_at_the_next_run():
    """The registry of marked allocations kept an address after its tensor was freed and across runs: a later
    torch.full(..., 0x5A5A5A5A) that reused the memory read as uninitialized (a CI run of the test above failed so,
    depending on what ran before it in the worker)."""
    import gc

    initcheck.install()
    try:
        t = torch.empty(32, dtype=torch.int32)
        lo = t.untyped_storage().data_ptr()
        assert initcheck.allocated_at(lo) is not None
        del t
        gc.collect()
        assert initcheck.allocated_at(lo) is None
        kept = torch.empty(32, dtype=torch.int32)
    finally:
        initcheck.uninstall()
    assert initcheck.allocated_at(kept.data_ptr()) is not None  # still known after the run (its outputs are read)
    initcheck.install()
    try:
        assert initcheck.allocated_at(kept.data_ptr()) is None  # a new run: the old allocations are data now
    finally:
        initcheck.uninstall()


def test_a_launch_site_skips_the_console_script_pytest_and_the_standard_library_not_installed_libraries():
    """helper-68: a check gate's replay put "never written" at `_pytest/runner.py:184`, and `interpret` at
    `bin/tritondbg:8` (sys.exit(main())): frames that only tritondbg's own machinery made. A launch's call site
    skips them (and runpy's, under `python -m tritondbg`), but not a library installed in site-packages."""
    import os
    import sysconfig

    def make(filename, body):
        scope = {"initcheck": initcheck}
        exec(compile(body, filename, "exec"), scope)
        return scope

    script = os.path.join(os.path.dirname(sys.executable), "tritondbg-fake-script")
    stdlib = os.path.join(sysconfig.get_paths()["stdlib"], "fake_runpy.py")
    library = os.path.join(sysconfig.get_paths()["purelib"], "fake_library", "ops.py")
    probe = make(script, "def probe():\n    return initcheck.caller_site()\n")["probe"]
    via_stdlib = make(stdlib, "def go(probe):\n    return probe()\n")["go"]
    assert via_stdlib(probe)[0] == os.path.abspath(__file__)  # past both, to this test's frame
    via_library = make(library, "def go(probe):\n    return probe()\n")["go"]
    assert via_library(probe)[0] == library  # an installed library's frame is a call site


SCALAR_ATOMIC = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def row_sums(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    total = tl.sum(tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0), axis=0)
    tl.atomic_add(out_ptr + row, total)  # ATOMIC


def launch(x):
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    row_sums[(x.shape[0],)](x, out, x.shape[1], BLOCK=64)
    return out


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(7, 50, generator=generator).to(device=device, dtype=dtype))


summed = Scenario("summed", make_inputs, launch, lambda x: x.float().sum(1),
                  [Case("tiny", params={}, dtypes=("float16",), atol=1e-2, rtol=1e-2)], kernels=[row_sums])
'''


def test_an_atomic_into_torch_empty_is_no_never_written_output_too(tmp_path):
    """helper-75 (megablocks' scatter_wgrad with the accumulator planted in torch.empty): beside the right finding
    at the atomic, "74 of 74 element(s) of output out were never written ... check that the grid covers every
    element": the atomic wrote them all, carrying the mark on. Elements an atomic added into are no unwritten
    output."""
    (tmp_path / "scalar_atomic.py").write_text(SCALAR_ATOMIC)
    rec = run_sanitized(f"{tmp_path / 'scalar_atomic.py'}::summed")
    (r,) = rec.results
    uninit = [(f["line"], f["op"]) for f in r.findings if f["kind"] == "uninit"]
    assert uninit == [(_line(SCALAR_ATOMIC, "ATOMIC"), "add")], r.findings


WRONG_POINTER = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)  # STORE


@triton.jit
def scale_right(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def _launch(kernel):
    def launch(x):
        out = torch.zeros_like(x)
        kernel[(triton.cdiv(x.numel(), 64),)](x.clone(), out, x.numel(), BLOCK=64)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(300, generator=generator).to(device=device, dtype=dtype))


_CASES = [Case("tiny", params={})]
wrong = Scenario("wrong", make_inputs, _launch(scale), lambda x: 2 * x, _CASES, kernels=[scale])
right = Scenario("right", make_inputs, _launch(scale_right), lambda x: 2 * x, _CASES, kernels=[scale_right])
'''


def test_an_output_no_store_wrote_into_while_the_stores_went_elsewhere_is_told(tmp_path):
    """helper-75 (megablocks' gather storing into its input, the output from torch.zeros): a mismatch and, at most,
    a race warning; nothing said where the stores went. An output the launch was handed that no store or atomic of
    the case wrote into, while its stores went into another argument, is a warning at the store naming it."""
    (tmp_path / "wrong_ptr.py").write_text(WRONG_POINTER)
    rec = run_sanitized(f"{tmp_path / 'wrong_ptr.py'}::wrong")
    (r,) = rec.results
    (f,) = [f for f in r.findings if f["kind"] == "uninit"]
    assert f["severity"] == "warning" and f["line"] == _line(WRONG_POINTER, "STORE"), f
    assert (f"output out was handed to scale as out_ptr and no store or atomic of the case wrote into it" in
            f["message"]) and f"(line {_line(WRONG_POINTER, 'STORE')} into x_ptr)" in f["message"], f["message"]
    rec = run_sanitized(f"{tmp_path / 'wrong_ptr.py'}::right")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings


UNINIT_INDEX = """\
import torch, triton, triton.language as tl

@triton.jit
def gather_kernel(idx_ptr, w_ptr, out_ptr, D: tl.constexpr):
    pid = tl.program_id(0)
    e = tl.load(idx_ptr + pid + 1)  # one entry too far: the last was never written
    d = tl.arange(0, D)
    tl.store(out_ptr + pid * D + d, tl.load(w_ptr + e * D + d))  # GATHER

idx = torch.empty(5, dtype=torch.int32, device="cuda")
idx[:4] = torch.tensor([3, 1, 0, 2], dtype=torch.int32)
w, out = torch.randn(8, 32, device="cuda"), torch.empty(4, 32, device="cuda")
gather_kernel[(4,)](idx, w, out, D=32)
"""


def test_addresses_computed_from_unwritten_memory_are_not_blamed_on_a_missing_other(tmp_path, cli_env):
    """helper-83: an index read one entry too far from torch.empty gave an out-of-bounds gather that said "these
    addresses were computed from lanes a masked load left undefined (the poison finding names it): give that load
    other=" (no masked load, no poison finding). It names the unwritten memory now."""
    (tmp_path / "prog.py").write_text(UNINIT_INDEX)
    out = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next((ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds in gather_kernel")),
                out.stderr)
    assert f"prog.py:{_line(UNINIT_INDEX, 'GATHER')}" in line, line
    assert "computed from values read from memory nothing wrote (the uninit finding names the read)" in line, line
    assert "other=" not in line.split("[launched")[0].split(". The load")[0], line


MASKED_OFF = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def scale_rows(x_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    full = M - M % BLOCK_M  # only whole blocks of rows are stored: the tail rows never are
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], x * 2, mask=(rm[:, None] < full) & (rn[None, :] < N))  # STORE


M, N = int(sys.argv[1]), 32
x = torch.randn(M, N, device="cuda")
c = torch.empty_like(x)
scale_rows[(triton.cdiv(M, 16),)](x, c, M, N, BLOCK_M=16, BLOCK_N=32)
print("max err", (c - 2 * x).abs().max().item())
'''


def test_an_output_whose_only_store_ran_with_every_lane_masked_off_names_that_store(tmp_path, cli_env):
    """helper-119 (gemlite's tail rows never stored, at M = 5 < BLOCK_M): the read of the untouched output said "the
    launch ... stored nothing into it: a store through the wrong pointer?" at the kernel's decorator line. The
    store through it ran, every lane masked off: the finding is at that store and says so."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(MASKED_OFF))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "5"], cli_env, cwd=tmp_path)
    store = _line(MASKED_OFF, "STORE")
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: uninit in scale_rows")]
    assert len(lines) == 1 and lines[0].startswith(f"tritondbg: uninit in scale_rows at prog.py:{store}:"), p.stderr
    assert f"its store or atomic at line {store} through it ran with every lane masked off, in every program" in lines[0]
    assert "wrong pointer" not in lines[0] and p.returncode == 1, lines[0]
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "37"], cli_env, cwd=tmp_path)  # 32 rows stored
    assert "masked off" not in p.stderr and "the launch wrote 1024 element(s) of c_ptr and left these" in p.stderr, \
        p.stderr[-3000:]


AROUND = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def scale_rows(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(o_ptr + row * n + cols, tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0) * 2, mask=cols < n)


x = torch.randn(5, 100, device="cuda")
how = sys.argv[1]
if how == "sibling":  # two views of one buffer: b written whole, a in part; only b is read
    buf = torch.empty(2, 5, 100, device="cuda")
    a, b = buf[0], buf[1]
    scale_rows[(5,)](x, b, 100, BLOCK=128)
    scale_rows[(2,)](x, a, 100, BLOCK=128)
    print("b", float(b.sum()))
elif how == "tolist":  # a part read in torch, then all of it out of torch's sight
    o = torch.empty(5, 100, device="cuda")
    scale_rows[(2,)](x, o, 100, BLOCK=128)
    print("kept", float(o[:2].sum()), len(o.tolist()))
elif how == "later":  # read around the first launch's band; a second launch leaves one nothing reads
    o = torch.empty(5, 100, device="cuda")
    scale_rows[(2,)](x, o, 100, BLOCK=128)
    print("kept", float(o[:2].sum()))
    scale_rows[(3,)](x, o, 100, BLOCK=128)  # LATER
else:  # a loss in a training loop: over-allocated partial results, read around, 20 times (past 16 held bands)
    for _ in range(20):
        o = torch.empty(5, 100, device="cuda")
        scale_rows[(2,)](x, o, 100, BLOCK=128)
        print("kept", float(o[:2].sum()))
'''


@pytest.mark.parametrize("how, told", [("sibling", True), ("tolist", True), ("later", True), ("loop", False)])
def test_reading_around_a_band_is_about_that_tensor_that_launch_and_reads_torch_sees(tmp_path, cli_env, how, told):
    """helper-121's review of the read-around rule: a read of one view of a buffer said nothing of another view's
    band; reads around one launch's band hid a later launch's band in the same buffer; a part read in torch hid
    the whole tensor read through .tolist(); and past 16 held bands the rule was not applied (a loop's bands
    failed --strict again)."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(AROUND))
    p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py", how], cli_env, cwd=tmp_path)
    bands = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: uninit in scale_rows")]
    if not told:
        assert not bands and p.returncode == 0, p.stderr[-3000:]
        return
    assert len(bands) == 1 and p.returncode == 1, p.stderr[-3000:]
    if how == "later":
        assert f"launched from {tmp_path / 'prog.py'}:{_line(AROUND, 'LATER')}" in bands[0], bands[0]


MASKED_OFF_MORE = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def put(ptr, v, m):
    tl.store(ptr, v, mask=m)  # PUT


@triton.jit
def two_outputs(x_ptr, c_ptr, d_ptr, M, BLOCK: tl.constexpr, ATOMIC: tl.constexpr):
    r = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r, mask=r < M, other=0.0)
    full = M - M % BLOCK  # only whole blocks: at M < BLOCK, nothing
    if ATOMIC:
        tl.atomic_add(c_ptr + r, v, mask=r < full)  # ATOMIC
    else:
        put(c_ptr + r, v, r < full)
        put(d_ptr + r, v, r < full)


x = torch.randn(5, device="cuda")
c, d = torch.empty(5, device="cuda"), torch.empty(5, device="cuda")
two_outputs[(1,)](x, c, d, 5, BLOCK=16, ATOMIC=sys.argv[1] == "atomic")
print("sums", float(c.sum()), float(d.sum()) if sys.argv[1] != "atomic" else 0)
'''


@pytest.mark.parametrize("how", ["helper", "atomic"])
def test_a_masked_off_store_line_names_every_output_it_served_and_atomics_too(tmp_path, cli_env, how):
    """helper-121: a jit helper's store line serving two outputs named the first only (the second: "a store through
    the wrong pointer?"), and a fully masked-off atomic was not seen at all."""
    (tmp_path / "prog.py").write_text(textwrap.dedent(MASKED_OFF_MORE))
    p = run_cli(["interpret", "--", sys.executable, "prog.py", how], cli_env, cwd=tmp_path)
    line = _line(MASKED_OFF_MORE, "PUT" if how == "helper" else "ATOMIC")
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: uninit in two_outputs")]
    assert len(told) == (2 if how == "helper" else 1), p.stderr[-3000:]
    for ln in told:
        assert f"its store or atomic at line {line} through it ran with every lane masked off" in ln, ln
