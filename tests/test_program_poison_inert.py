"""Program mode: undefined lanes that enter only a reduction whose result reaches nothing the launch wrote
(program/filler_rerun.py). helper-104: OpenAI's triton_kernels computes an exclusive prefix sum block by block, and
the last block's undefined tail enters a running sum nothing reads after the loop: a poison error on every topk,
exit 1, on correct code. Run again with another value in those lanes, the launch writes the same bytes: a warning.
Where the value reaches a store (a sum stored, or laundered by tl.maximum / tl.where first) it stays an error."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl


@triton.jit
def excl_cumsum(X, n, BLOCK: tl.constexpr):
    running = tl.zeros([], X.dtype.element_ty)  # (0 would be an int32 the fp32 sum replaces: the compiler refuses)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n)  # LOAD excl_cumsum
        out = tl.cumsum(x, 0) - x + running
        running += tl.sum(x, 0)
        tl.store(X + offs, out, mask=offs < n)


@triton.jit
def scaled_cumsum(X, W, n, BLOCK: tl.constexpr):
    running = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n)  # LOAD scaled_cumsum
        out = tl.cumsum(x, 0) - x + running
        running += tl.sum(x, 0)
        tl.store(X + offs, out * tl.load(W), mask=offs < n)


@triton.jit
def stored_sum(X, S, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)  # LOAD stored_sum
    if MODE == 1:
        x = tl.maximum(x, 0)
    if MODE == 2:
        x = tl.where(x > 0, x, 0)
    if MODE == 3:  # every real value is >= 10: neither 0 nor the re-run's 7 wins the max; garbage may
        tl.store(S, tl.max(x + 10, 0))
    else:
        tl.store(S, tl.sum(x, 0))


@triton.jit
def sq_diff(A, B, S, n, K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(A + offs, mask=offs < n)  # LOAD sq_diff a
    b = tl.load(B + offs, mask=offs < n)  # LOAD sq_diff b
    d = K * a - b
    tl.store(S, tl.sum(d * d, 0))


which, dtype = sys.argv[1], getattr(torch, sys.argv[2])
if which in ("mse", "scaled"):  # two loads' lanes cancel in a - b filled alike, in 2 * a - b filled 7 and 14
    a, b = (torch.randint(0, 5, (100,), device="cuda").to(dtype) for _ in range(2))
    s = torch.empty(1, dtype=dtype, device="cuda")
    sq_diff[(1,)](a, b, s, 100, K=1 if which == "mse" else 2, BLOCK=128)
elif which == "cumsum":
    for n in (13, 30):  # 3 and 2 undefined lanes: an even count of an integer poison must not cancel out
        x = torch.randint(0, 5, (n,), dtype=dtype, device="cuda")
        ref = torch.cumsum(x, 0) - x
        excl_cumsum[(1,)](x, n, BLOCK=16)
        assert torch.equal(x, ref.to(dtype)), (x, ref)
elif which == "parameter":  # a Parameter that requires grad among the launch's tensors: its bytes put back as such
    w = torch.nn.Parameter(torch.ones(1, device="cuda"))
    x = torch.randint(0, 5, (13,), device="cuda").float()
    ref = torch.cumsum(x, 0) - x
    scaled_cumsum[(1,)](x, w, 13, BLOCK=16)
    assert torch.equal(x, ref) and w.requires_grad, (x, ref)
else:
    x = torch.randint(0, 5, (100,), device="cuda").to(dtype)
    s = torch.empty(1, dtype=dtype, device="cuda")
    stored_sum[(1,)](x, s, 100, MODE={"sum": 0, "maximum": 1, "where": 2, "max": 3}[which], BLOCK=128)
print("ok")
''')


def _line(tag: str) -> int:
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


def _run(tmp_path, cli_env, *args):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], cli_env, cwd=tmp_path)
    assert "ok" in p.stdout, p.stdout + p.stderr[-3000:]
    return p


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_undefined_lanes_in_a_sum_nothing_reads_are_a_warning(tmp_path, cli_env, dtype):
    p = _run(tmp_path, cli_env, "cumsum", dtype)
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: poison in excl_cumsum")]
    assert len(warn) == 1 and f"prog.py:{_line('LOAD excl_cumsum')}" in warn[0], p.stderr[-3000:]
    assert "the launch wrote the same bytes, so nothing it wrote depends on them here" in warn[0], warn[0]
    assert p.returncode == 0 and "0 finding(s)" in p.stderr, p.stderr[-3000:]


def test_a_parameter_among_the_launchs_tensors_is_put_back_unharmed(tmp_path, cli_env):
    # (helper-105: the restore through each tensor view raised "a leaf Variable that requires grad is being used
    # in an in-place operation" into the program)
    p = _run(tmp_path, cli_env, "parameter", "float32")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert "tritondbg: warning: poison in scaled_cumsum" in p.stderr, p.stderr[-3000:]


@pytest.mark.parametrize("which", ["sum", "maximum", "where", "max"])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_undefined_lanes_whose_sum_is_stored_stay_an_error(tmp_path, cli_env, which, dtype):
    # (an int32 sum of 28 poison lanes: the poison's own value must not decide; tl.maximum / tl.where launder the
    # NaN poison into a value matching the plain run's, and the other fillers change the stored sum; a tl.max is
    # not put to the test: a filler that loses to every real value proves nothing; helper-105)
    p = _run(tmp_path, cli_env, which, dtype)
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: poison in stored_sum")]
    assert len(err) == 1 and f"prog.py:{_line('LOAD stored_sum')}" in err[0], p.stderr[-3000:]
    assert p.returncode == 1, p.stderr[-2000:]


@pytest.mark.parametrize("which, passes", [("cumsum", True), ("sum", False), ("where", False)])
def test_a_reproducers_replay_puts_its_launch_to_the_same_test(tmp_path, cli_env, which, passes):
    """The kernel form (``check``'s sanitize gate on a reproducer, ``interpret NAME.py``) re-runs the launch on fresh
    copies of the captured inputs (filler_rerun.settle_fresh): the program run's warning is the reproducer's (its
    replay used to fail the gate on the prefix sum); a stored sum stays an error there too."""
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py", which, "int32"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    repro, = (tmp_path / "cap").glob("*_0.py")
    p = run_cli(["check", str(repro), "--gates", "sanitize", "--json", "c.json"], cli_env, cwd=tmp_path)
    assert (p.returncode == 0) == passes, p.stdout[-3000:] + p.stderr[-2000:]
    line = _line("LOAD excl_cumsum" if which == "cumsum" else "LOAD stored_sum")
    found = [f for r in json.loads((tmp_path / "c.json").read_text())["results"] for f in r["findings"]]
    assert [(f["kind"], f["line"], f["severity"]) for f in found] == \
        [("poison", line, "warning" if passes else "error")], found


GUARDED = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, out_ptr, N, M, BLOCK: tl.constexpr):
    running = tl.zeros((), dtype=tl.int32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        running += tl.sum(tl.load(x_ptr + offs, mask=offs < N), 0)  # undefined tail: the unused running sum only
    o = tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.load(y_ptr + o), mask=o < M)  # LOAD y (no mask: past y's end)

x = torch.randint(0, 5, (50,), dtype=torch.int32, device="cuda")
y = torch.randint(0, 5, (20,), dtype=torch.int32, device="cuda")
out = torch.empty(20, dtype=torch.int32, device="cuda")
k[(1,)](x, y, out, 50, 20, BLOCK=32)
''')


def test_the_replays_filler_runs_leave_the_memory_guards_count_alone(tmp_path, cli_env):
    """helper-110: the filler re-runs of a reproducer ran with the sanitizer suspended, so the memory guard counted
    the out-of-bounds lanes of each of them: a second out_of_bounds finding ("the memory guard kept them out",
    three times the lanes) beside the sanitizer's."""
    (tmp_path / "prog.py").write_text(GUARDED)
    run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    p = run_cli(["interpret", str(tmp_path / "cap" / "k_0.py"), "--json"], cli_env, cwd=tmp_path)
    found = [(f["kind"], f["line"]) for r in json.loads(p.stdout)["results"] for f in r["findings"]
             if f["kind"] == "out_of_bounds"]
    line = next(i for i, ln in enumerate(GUARDED.splitlines(), 1) if ln.rstrip().endswith("# LOAD y (no mask: past y's end)"))
    assert found == [("out_of_bounds", line)], found
    assert "memory guard" not in p.stdout, p.stdout[-2000:]


@pytest.mark.parametrize("which", ["mse", "scaled"])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_two_loads_whose_lanes_meet_in_a_difference_stay_errors(tmp_path, cli_env, dtype, which):
    """helper-120 (attorch's MSE loss: `diff = input - target`, both loads without other=, then tl.sum(diff * diff)):
    the re-runs put the same filler in both loads' lanes, a - b made 0 whatever it was, and the second load became
    a warning saying nothing depended on its lanes. A filler of its own per load line cancelled in 2 * a - b
    (helper-121): each lane now gets a value of its own."""
    p = _run(tmp_path, cli_env, which, dtype)
    told = {int(ln.split("prog.py:")[1].split()[0]) for ln in p.stderr.splitlines()
            if ln.startswith("tritondbg: poison in sq_diff at prog.py:")}  # (an int32 lane keeps one load's mark)
    assert told and told <= {_line("LOAD sq_diff a"), _line("LOAD sq_diff b")}, p.stderr[-3000:]
    assert "warning: poison" not in p.stderr and p.returncode == 1, p.stderr[-3000:]
