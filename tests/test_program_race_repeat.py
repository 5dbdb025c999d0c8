"""A finding told as a warning in one launch and an error at the same line in a later one (helper-107: TE's
grouped dbias with its atomic_add turned into load + add + store: a same-value race in the 1st launch, values that
differ in the 2nd). The error was said only as "findings come again ..." and the summary labelled the line a
warning, while the run counted one finding and exited 1."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def last_wins(v_ptr, out_ptr):
    tl.store(out_ptr, tl.load(v_ptr + tl.program_id(0)))  # STORE

out = torch.zeros(1, device="cuda")
for v in (torch.full((4,), 2.0), torch.arange(4.0)):  # every program stores 2.0: a warning; 0, 1, 2, 3: an error
    last_wins[(4,)](v.to("cuda"), out)
print("out", out.item())
''')


def test_an_error_at_a_line_that_was_a_warning_before_is_told_and_summed_up_as_an_error(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# STORE"))
    lines = p.stderr.splitlines()
    warned = [ln for ln in lines if ln.startswith(f"tritondbg: warning: race in last_wins at prog.py:{line}")]
    error = [ln for ln in lines if ln.startswith(f"tritondbg: race in last_wins at prog.py:{line}")]
    assert len(warned) == 1 and "each with the same value on this input" in warned[0], p.stderr[-3000:]
    assert len(error) == 1 and "different values" in error[0], p.stderr[-3000:]
    assert "(an error at its 2nd launch: the same line was a warning before)" in error[0], error[0]
    summary = [ln for ln in lines if f"prog.py:{line} in last_wins" in ln]
    assert len(summary) == 1 and summary[0].startswith("  race: ") and "(in 2 launches)" in summary[0], summary
    assert p.returncode == 1, p.stderr[-2000:]


TWO = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def spill(x_ptr, a_ptr, b_ptr, n, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * n + tl.arange(0, B)  # B > n: each program spills into the next row
    x = tl.load(x_ptr + offs, mask=offs < 3 * n, other=0.0)
    tl.store(a_ptr + offs, x + pid, mask=offs < 3 * n)  # A
    tl.store(b_ptr + offs, x * 2 + pid, mask=offs < 3 * n)  # B

x = torch.randn(18, device="cuda")
a, b = torch.zeros_like(x), torch.zeros_like(x)
spill[(3,)](x, a, b, 6, B=8)
''')


def test_two_tensors_raced_in_one_launch_are_two_findings_each_counting_its_own(tmp_path, cli_env):
    """helper-145: only the first racing store of a launch was a finding; the second tensor's race was folded into
    the first's count ("8 element(s) of this launch", over two tensors)."""
    (tmp_path / "prog.py").write_text(TWO)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    for tag, name in (("A", "a_ptr"), ("B", "b_ptr")):
        line = next(i for i, ln in enumerate(TWO.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))
        (said,) = [ln for ln in p.stderr.splitlines() if ln.startswith(f"tritondbg: race in spill at prog.py:{line}")]
        assert f"to the same element {name}[6]" in said and f"(4 element(s) of {name} are written" in said, said
    assert p.returncode == 1 and "1 launch(es), 2 finding(s)" in p.stderr, p.stderr[-2000:]


HANDOVER = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def swap_rows(scratch_ptr, out_ptr, B: tl.constexpr, BOTH: tl.constexpr):
    pid = tl.program_id(0)
    o = tl.arange(0, B)
    if BOTH:
        tl.store(scratch_ptr + pid * B + o, (pid + 1) * 1.0 + o)  # WRITE
        tl.debug_barrier()  # one program's threads only
    other = tl.load(scratch_ptr + ((pid + 1) % 2) * B + o)  # READ: the other program's row
    tl.store(out_ptr + pid * B + o, other)

@triton.jit
def fill_rows(scratch_ptr, B: tl.constexpr):
    pid = tl.program_id(0)
    o = tl.arange(0, B)
    tl.store(scratch_ptr + pid * B + o, (pid + 1) * 1.0 + o)

s = torch.zeros(32, device="cuda")
out = torch.empty(32, device="cuda")
if sys.argv[1] == "one":
    swap_rows[(2,)](s, out, B=16, BOTH=True)
else:  # the hand-over between two launches: ordered
    fill_rows[(2,)](s, B=16)
    swap_rows[(2,)](s, out, B=16, BOTH=False)
print("out", out[:2].tolist(), out[16:18].tolist())
''')


@pytest.mark.parametrize("form", ["one", "two"])
def test_a_load_of_what_another_program_stores_in_the_same_launch_is_a_race(tmp_path, cli_env, form):
    """helper-144: applied-ai's paged attention v2 has every partition read scratch rows partition 0 writes in the
    same launch, "synchronised" by tl.debug_barrier (one program's threads only): the output depends on program
    order on a GPU, and the run said 0 finding(s). Split into two launches, nothing to tell."""
    (tmp_path / "prog.py").write_text(HANDOVER)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", form], cli_env, cwd=tmp_path)
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: race in swap_rows")]
    if form == "two":
        assert p.returncode == 0 and not told and "0 finding(s)" in p.stderr, p.stderr[-3000:]
        return
    line = {t: next(i for i, ln in enumerate(HANDOVER.splitlines(), 1) if f"# {t}" in ln) for t in ("READ", "WRITE")}
    assert len(told) == 1 and p.returncode == 1, p.stderr[-3000:]
    assert f"swap_rows at prog.py:{line['READ']} pid (0, 0, 0): pid (0, 0, 0) loads element scratch_ptr[16] at " \
        f"line {line['READ']}, which pid (1, 0, 0) writes at line {line['WRITE']} in the same launch; 32 such " \
        "element(s)" in told[0], told[0]
    assert "tl.debug_barrier orders one program's threads only" in told[0], told[0]


ORDERED = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def chain(buf_ptr, out_ptr, SAME: tl.constexpr):
    pid = tl.program_id(0)
    if SAME:  # every program writes the same scratch value, then reads it back
        tl.store(buf_ptr, 5.0)
        tl.store(out_ptr + pid, tl.load(buf_ptr) + 1.0)  # READ_SAME
    else:  # program 0 hands a value to program 1
        if pid == 0:
            tl.store(buf_ptr, 5.0)
        else:
            tl.store(out_ptr + pid, tl.load(buf_ptr) + 1.0)  # READ

buf = torch.zeros(1, device="cuda")
out = torch.zeros(2, device="cuda")
chain[(2,)](buf, out, SAME=sys.argv[1] == "same")
print("out", out.tolist())
''')


@pytest.mark.parametrize("form", ["forward", "same"])
def test_a_hand_over_in_grid_order_is_an_error_and_a_scratch_all_write_alike_a_warning(tmp_path, cli_env, form):
    """helper-146: program 1 loading what program 0 stored (grid order: the load reads the new value) was "the same
    value on this input", a warning, exit 0, where on a GPU it reads 0 or 5. Only a load that read the old value,
    or its own program's store, of stores that all wrote those bits, is that warning."""
    (tmp_path / "prog.py").write_text(ORDERED)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", form], cli_env, cwd=tmp_path)
    tag = "READ_SAME" if form == "same" else "READ"
    line = next(i for i, ln in enumerate(ORDERED.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))
    told = [ln for ln in p.stderr.splitlines() if f"race in chain at prog.py:{line}" in ln]
    assert len(told) == 1 and "loads element buf_ptr[0]" in told[0], p.stderr[-3000:]
    if form == "forward":
        assert told[0].startswith("tritondbg: race") and "same value" not in told[0], told[0]
        assert p.returncode == 1, p.stderr[-2000:]
    else:
        assert told[0].startswith("tritondbg: warning: race") and "(the same value on this input" in told[0], told
