"""Findings that blamed the wrong thing or could not be weighed (notes of helpers 81-84).

- a read of what a launch stored from an out-of-bounds read was "a store mask that is always false?";
- a forgotten ``tl.store(Y, ...)`` beside other stores was "through the wrong pointer?" at the other store;
- launches were numbered from 0 without saying so ("launch 0 of it");
- a NaN a division made, hidden behind a load without other= in a reproducer's replay;
- the heartbeat gave no program id in program mode, and host code read as a kernel line;
- masked_reduction said "change the result" for padding of ~1e-17 against a sum of 1.
"""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from conftest import run_cli

pytestmark = [pytest.mark.interpreter, pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def _line(src: str, tag: str) -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if ln.rstrip().endswith(tag))


def _program(tmp_path, cli_env, src: str, *args, extra=(), env=None):
    (tmp_path / "prog.py").write_text(textwrap.dedent(src))
    report = tmp_path / "report.json"
    out = run_cli(["interpret", "--json", str(report), *extra, "--", sys.executable, "prog.py", *args],
                  dict(cli_env, **(env or {})), cwd=tmp_path)
    findings = json.loads(report.read_text())["findings"] if report.exists() else []
    return out, findings


OOB_INTO_OUTPUT = '''
import torch, triton, triton.language as tl

@triton.jit
def add(a_ptr, b_ptr, c_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs + N)  # every lane past the end of a, into c: LOAD
    b = tl.load(b_ptr + offs, mask=offs < N)
    tl.store(c_ptr + offs, a + b, mask=offs < N)  # STORE

n = 100
buf = torch.empty(2 * n, device="cuda")
a, c = buf[:n], buf[n:]
a.copy_(torch.randn(n))
b = torch.randn(n, device="cuda")
add[(2,)](a, b, c, n, BLOCK=64)
print("sum", c.sum().item())
'''


def test_a_read_of_values_stored_from_an_out_of_bounds_read_names_that_read_not_the_store_mask(tmp_path, cli_env):
    """helper-81: the load past a's end read c's own unwritten memory (the plain run reads another argument's
    memory there), the store wrote it into c, and ``c.sum()`` was told "the launch wrote none of c_ptr: a store
    mask that is always false?", an error beside the out_of_bounds one. The store wrote; the out-of-bounds read
    is the cause: a warning that names it."""
    out, found = _program(tmp_path, cli_env, OOB_INTO_OUTPUT)
    assert out.returncode == 1, out.stderr[-3000:]
    kinds = sorted((f["kind"], f["severity"]) for f in found)
    assert kinds == [("out_of_bounds", "error"), ("uninit", "warning")], (kinds, out.stderr[-3000:])
    (read,) = [f for f in found if f["kind"] == "uninit"]
    assert "always false" not in read["message"], read["message"]
    assert f"its load at line {_line(OOB_INTO_OUTPUT, 'LOAD')} read outside a_ptr" in read["message"], read["message"]
    assert "the out_of_bounds finding of this launch" in read["message"], read["message"]
    assert f"store at line {_line(OOB_INTO_OUTPUT, '# STORE')} wrote into c_ptr" in read["message"]
    assert "1 finding(s), 1 warning(s)" in out.stderr, out.stderr[-2000:]


OOB_INTO_OUTPUT_PART = OOB_INTO_OUTPUT.replace("a_ptr + offs + N)  # every lane past the end of a, into c: LOAD",
                                               "a_ptr + offs + 30)  # lanes 70..99 past the end of a, into c: LOAD")
OOB_INTO_OUTPUT_PART = OOB_INTO_OUTPUT_PART.replace("add[(2,)](a, b, c, n, BLOCK=64)", "add[(1,)](a, b, c, n, BLOCK=128)")


def test_stored_values_that_carry_the_mark_read_past_a_tensor_into_the_output_name_that_read(tmp_path, cli_env):
    """helper-129: DeepSpeed's matmul handed B's row stride as its column stride read past B into the output C,
    unwritten; the products carried the mark into 2775 of C's 2849 elements, and ``C.sum()`` was told "the launch
    wrote 74 element(s) of C and left these: a store mask too strict?" (the store covers all of C). Where the load
    past a tensor's end landed in the tensor those marks are in, they are that read's follow-on."""
    assert "a_ptr + offs + 30)" in OOB_INTO_OUTPUT_PART and "BLOCK=128" in OOB_INTO_OUTPUT_PART
    out, found = _program(tmp_path, cli_env, OOB_INTO_OUTPUT_PART)
    assert out.returncode == 1, out.stderr[-3000:]
    kinds = sorted((f["kind"], f["severity"]) for f in found)
    assert kinds == [("out_of_bounds", "error"), ("uninit", "warning")], (kinds, out.stderr[-3000:])
    (read,) = [f for f in found if f["kind"] == "uninit"]
    assert "left these" not in read["message"], read["message"]
    assert f"its load at line {_line(OOB_INTO_OUTPUT_PART, 'LOAD')} read outside a_ptr" in read["message"]


TWO_READS_OUTSIDE = '''
import torch, triton, triton.language as tl

@triton.jit
def k(A, B, Out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(A + offs)  # past A's end, into no argument
    b = tl.load(B + offs)  # past B's end, into Out: LOAD
    tl.store(Out + 0, tl.sum(a + b))

n = 13
buf = torch.empty(64, device="cuda")
b = buf[:n]
b.copy_(torch.randn(n))
out = buf[n:2 * n]
a = torch.randn(n, device="cuda")
k[(1,)](a, b, out, n, BLOCK=16)
print("out[0] =", out[0].item())
'''


def test_the_follow_on_names_the_read_that_landed_in_an_argument_not_the_first_read_outside(tmp_path, cli_env):
    """helper-155 (segment-anything-fast's flash attention at an odd length, and this repro): two loads past their
    tensors' ends, the first into no argument (a plain run reads 0 there), the second into Out's unwritten memory;
    the stored marks were blamed on the first ("read outside A"): the read that can carry the mark is the second."""
    out, found = _program(tmp_path, cli_env, TWO_READS_OUTSIDE)
    (read,) = [f for f in found if f["kind"] == "uninit"]
    assert f"its load at line {_line(TWO_READS_OUTSIDE, 'LOAD')} read outside B" in read["message"], read["message"]

LAYERNORM = '''
import torch, triton, triton.language as tl

@triton.jit
def layernorm(X, Y, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):  # DEF
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.)
    rstd = 1 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps)
    tl.store(Mean + row, mean)  # MEAN
    tl.store(Rstd + row, rstd)
    y = xc * rstd
    # the bug: tl.store(Y + cols, y, mask=mask) forgotten
'''

LN_PROGRAM = LAYERNORM + '''
x = torch.randn(8, 100, device="cuda")
y = torch.empty_like(x)
mean, rstd = torch.empty(8, device="cuda"), torch.empty(8, device="cuda")
layernorm[(8,)](x, y, mean, rstd, x.stride(0), 100, 1e-5, BLOCK=128)
print("close", torch.allclose(y, torch.nn.functional.layer_norm(x, (100,), eps=1e-5), atol=1e-4))
'''

LN_CASES = LAYERNORM + '''
from tritondbg import Case, Scenario


def make(case, dtype, device, generator):
    return dict(x=torch.randn(8, 100, generator=generator).to(dtype), zeros=case.params["zeros"])


def ln(x, zeros):
    y = (torch.zeros_like if zeros else torch.empty_like)(x)
    mean, rstd = torch.empty(8), torch.empty(8)
    layernorm[(8,)](x, y, mean, rstd, x.stride(0), 100, 1e-5, BLOCK=128)
    return y, mean, rstd


def ref(x, zeros):
    v = x.float().var(-1, unbiased=False)
    return torch.nn.functional.layer_norm(x.float(), (100,), eps=1e-5), x.float().mean(-1), 1 / torch.sqrt(v + 1e-5)


s = Scenario("ln", make, ln, ref, [Case("empty", params=dict(zeros=False), dtypes=("float32",)),
                                   Case("zeros", params=dict(zeros=True), dtypes=("float32",))], kernels=[layernorm])
'''


def test_a_forgotten_store_beside_other_stores_is_told_as_forgotten_not_a_wrong_pointer(tmp_path, cli_env):
    """helper-84: a layer norm storing Mean and Rstd but not Y was told at the Mean store as "its store at line 15
    wrote into Mean: through the wrong pointer?". The kernel has no store through Y at all: a forgotten store, at
    the kernel."""
    out, found = _program(tmp_path, cli_env, LN_PROGRAM)
    assert out.returncode == 1, out.stderr[-3000:]
    (f,) = found
    assert f["kind"] == "uninit" and f["tensor"] == "Y", f
    assert "wrong pointer" not in f["message"] and "a forgotten tl.store?" in f["message"], f["message"]
    assert "layernorm has no store (nor atomic) through Y in its code" in f["message"], f["message"]
    assert f["line"] != _line(LN_PROGRAM, "# MEAN"), f  # the kernel, not the store into Mean


@pytest.mark.parametrize("case", ["empty", "zeros"])
def test_a_forgotten_store_in_a_scenario_is_told_as_forgotten(tmp_path, case):
    """The same in a scenario: torch.empty's Y was "never written: check that the grid covers every element and
    that the stores' masks are not too strict", torch.zeros' "a store through the wrong pointer?"."""
    from tritondbg import runner
    from tritondbg.interp import instruments

    (tmp_path / "lncases.py").write_text(LN_CASES)
    target = str(tmp_path / "lncases.py")
    rec = runner.run(target, mode="interpret", cases=case, instruments=instruments.build(target))
    (r,) = rec.results
    (f,) = [f for f in r.findings if f["kind"] == "uninit"]
    assert "a forgotten tl.store?" in f["message"] and "wrong pointer" not in f["message"], f["message"]
    assert "masks are not too strict" not in f["message"], f["message"]
    if case == "zeros":  # at the kernel's def line, not at the store into Mean
        assert f["line"] == _line(LN_CASES, "# DEF"), f


def test_a_store_through_an_argument_is_followed_by_name():
    """kernel_stores: (used, stores through it, loads through it) of an argument, by the names assigned from it."""
    from tritondbg.interp.kernel_stores import _usage

    src = textwrap.dedent(LAYERNORM.split("@triton.jit\n", 1)[1])
    assert _usage(src, "Y") == (True, False, False) and _usage(src, "Mean")[1] and _usage(src, "X")[2]
    desc = ("def k(Y, X):\n    d = tl.make_tensor_descriptor(Y, shape=[8], strides=[1], block_shape=[8])\n"
            "    d.store([0], tl.load(X + tl.arange(0, 8)))\n")
    assert _usage(desc, "Y")[1] is True
    helper = "def k(Y, X):\n    p = Y + 1\n    my_helper(p, X)\n"  # a helper of the program's: it may store
    assert _usage(helper, "Y")[1] is True
    only_read = ("def k(Y, X):\n    d = tl.make_tensor_descriptor(Y, shape=[8], strides=[1], block_shape=[8])\n"
                 "    v = d.load([0])\n    tl.store(X + tl.arange(0, 8), v)\n")
    assert _usage(only_read, "Y") == (True, True, True)  # (what it read goes into a store: never a false "forgotten")
    wrong = "def k(x_ptr, out_ptr):\n    tl.store(x_ptr, tl.load(x_ptr) * 2)\n"
    assert _usage(wrong, "out_ptr") == (False, False, False) and _usage(wrong, "x_ptr") == (True, True, True)


WRITES = '''
import triton.language as tl


class helper:  # stands for a @triton.jit helper (it has .fn): it may store
    fn = None


def no_store(x_ptr, out_ptr, N):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = x * 2


def stores(x_ptr, out_ptr, N):
    tl.store(out_ptr + tl.arange(0, 16), tl.load(x_ptr + tl.arange(0, 16)))


def calls_helper(x_ptr, out_ptr, N):
    helper(out_ptr)


def calls_plain(x_ptr, out_ptr, N):
    y = min(N, 4)


def asserts(x_ptr, out_ptr, N):
    tl.device_assert(tl.load(x_ptr) < 1.0, "big")


def atomic(x_ptr, out_ptr, N):
    tl.atomic_add(out_ptr, 1)


def checks(x_ptr, out_ptr, N):
    assert N > 0
'''


def test_whether_a_kernel_writes_is_read_from_its_source_parsed_once(tmp_path, monkeypatch):
    """kernel_stores.writes (program mode's "writes no memory" warning) and ``forgotten`` share one store
    predicate; the kernel's source is read once per code object and parsed once, however often it launches."""
    import importlib.util
    import inspect

    from tritondbg.interp import kernel_stores

    path = tmp_path / "writes_kernels.py"
    path.write_text(WRITES)
    spec = importlib.util.spec_from_file_location("writes_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    class Jit:  # JITFunction / InterpretedFunction: the function under .fn
        def __init__(self, fn):
            self.fn = fn

    want = dict(no_store=False, stores=True, calls_helper=True, calls_plain=False, asserts=True, atomic=True,
                checks=True)
    assert {name: kernel_stores.writes(Jit(getattr(mod, name))) for name in want} == want
    assert kernel_stores.writes(Jit(len)) is None  # no source

    reads = []
    real = inspect.getsource
    monkeypatch.setattr(inspect, "getsource", lambda f: reads.append(f) or real(f))
    kernel_stores._tree.cache_clear()
    kernel_stores._sources.clear()
    k = Jit(mod.no_store)
    for _ in range(1000):
        assert kernel_stores.writes(k) is False
        assert kernel_stores.forgotten(k, "out_ptr", ["x_ptr"]) is False  # unused, and x_ptr is read: wrong pointer
    assert len(reads) == 1 and kernel_stores._tree.cache_info().misses == 1, (reads, kernel_stores._tree.cache_info())


TWICE = '''
import torch, triton, triton.language as tl

@triton.jit
def shift(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs + 1), mask=offs < N)  # OOB

x = torch.randn(16, device="cuda"); y = torch.empty(16, device="cuda")
shift[(1,)](x, y, 16, BLOCK=16)
shift[(1,)](x, y, 16, BLOCK=16)
'''


def test_launches_are_numbered_from_one_where_the_lines_tell_them(tmp_path, cli_env):
    """helper-83: "launch 0 of it" read as no launch. The lines say "its 2nd launch"; the JSON keeps ``launch``
    (from 0) and gives ``launch_number`` (from 1)."""
    out, found = _program(tmp_path, cli_env, TWICE)
    assert out.returncode == 1, out.stderr[-3000:]
    assert "shift's findings come again in its later launches (its 2nd launch: out_of_bounds at prog.py:" \
        in out.stderr, out.stderr[-3000:]
    assert [(f["launch"], f["launch_number"]) for f in found] == [(0, 1), (1, 2)], found


def test_nth():
    from tritondbg.interp.findings import nth

    assert [nth(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]


L2NORM = '''
import torch, triton, triton.language as tl

@triton.jit
def l2norm(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N)  # LOAD: no other=
    y = x / tl.sqrt(tl.sum(x * x, axis=0))  # DIV: 0/0 for a zero row
    tl.store(out_ptr + row * N + cols, y, mask=cols < N)  # STORE

x = torch.randn(4, 100, device="cuda"); x[2] = 0
out = torch.empty(4, 100, device="cuda")
l2norm[(4,)](x, out, 100, BLOCK=128)
print("nan", torch.isnan(out).sum().item())
'''


def test_a_nan_the_poison_hides_in_a_replay_is_told_beside_the_poison(tmp_path, cli_env):
    """helper-82: the program got NaN from a 0/0 (row 2 all zeros) in a kernel whose load has no other=; the
    replay of its reproducer named only the poison (its NaN went through the sum into every lane first), and the
    NaN the program got was no finding."""
    from tritondbg import runner
    from tritondbg.interp import instruments

    out, _ = _program(tmp_path, cli_env, L2NORM, extra=["--capture-on-finding", "--out", str(tmp_path / "cap")])
    assert "nan 100" in out.stdout, out.stdout + out.stderr[-2000:]
    target = str(tmp_path / "cap" / "l2norm_0.py")
    rec = runner.run(target, mode="interpret", instruments=instruments.build(target))
    (r,) = rec.results
    kinds = sorted(f["kind"] for f in r.findings)
    assert kinds == ["nan_inf", "poison"], r.findings
    (f,) = [f for f in r.findings if f["kind"] == "nan_inf"]
    assert "100 element(s) of the outputs are NaN in the captured output too, first out_ptr[2, 0]" in f["message"]
    assert f"the poison of the load at line {_line(L2NORM, '# LOAD: no other=')}" in f["message"], f["message"]
    assert f["line"] == _line(L2NORM, "# STORE"), f


def test_the_heartbeat_says_host_code_or_a_launch_outside_its_kernel_code():
    """helper-83: the heartbeat's place had no program id in program mode, and a host line read like a kernel
    line. Host code says so; inside a launch but outside its kernel code, the launch and that it is outside."""
    from tritondbg import watchdog

    here = sys._getframe()
    assert watchdog.where(here).startswith(f"in host code at {__file__}:"), watchdog.where(here)
    with watchdog.activity(kernel="k", launch="2nd"):
        loc = watchdog.where(here)
    assert loc.startswith("in k's 2nd launch, outside its kernel code") and f"(launched at {__file__}:" in loc, loc


SLOW = '''
import torch, triton, triton.language as tl

@triton.jit
def slow(x_ptr, n):
    acc = tl.zeros((16,), tl.float32)
    for i in range(n):
        acc += tl.load(x_ptr + tl.arange(0, 16))  # LOOP
    tl.store(x_ptr + tl.arange(0, 16), acc)

x = torch.ones(16, device="cuda")
slow[(1,)](x, 20000)
'''


def test_the_heartbeat_in_program_mode_names_the_program_id(tmp_path, cli_env):
    out, _ = _program(tmp_path, cli_env, SLOW, env={"TRITONDBG_HEARTBEAT_S": "0.5"})
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: still running after")]
    assert lines, out.stderr[-2000:]
    assert f"slow, pid (0, 0, 0) at {tmp_path / 'prog.py'}:{_line(SLOW, '# LOOP')} (in slow)" in lines[0], lines[0]


LSE = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def lse(x_ptr, out_ptr, N, BLOCK: tl.constexpr, PAD: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=PAD)
    m = tl.max(x, 0)
    s = tl.sum(tl.exp(x - m), 0)  # SUM
    tl.store(out_ptr + row, m + tl.log(s))

x = torch.randn(4, 77, device="cuda")
out = torch.empty(4, device="cuda")
lse[(4,)](x, out, 77, BLOCK=128, PAD=float(sys.argv[1]))
'''


@pytest.mark.parametrize("pad", ["-60.0", "-3.0"])
def test_a_masked_reduction_says_how_much_the_padding_moves_the_result(tmp_path, cli_env, pad):
    """helper-84: unsloth's softcapped cross entropy, padding exp(-SOFTCAP - m) ~1e-17 against a sum of about 1,
    was told "whose values change the result" as a padding of 0.003 per lane is. The finding stays; its text says
    how large the padding's part is, and that below the dtype's rounding it changed nothing this time."""
    out, found = _program(tmp_path, cli_env, LSE, pad)
    (f,) = found
    assert (f["kind"], f["line"]) == ("masked_reduction", _line(LSE, "# SUM")), f
    assert "the padding moves a result by +" in f["message"] and "(the most over this launch)" in f["message"], f
    assert (f["padding_share"] < 1e-7) == (pad == "-60.0"), f
    if pad == "-60.0":
        assert "whose values enter the result" in f["message"], f["message"]
        assert "below float32 rounding, so these results did not change" in f["message"], f["message"]
    else:
        assert "whose values change the result" in f["message"] and "% of it" in f["message"], f["message"]
        assert "rounding" not in f["message"], f["message"]


TWO_RACES = '''
import torch, triton, triton.language as tl

@triton.jit
def both(out_ptr, cnt_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32) + tl.program_id(0))  # every program, the same elements: RACE
    tl.atomic_add(out_ptr + offs, 1.0)

out = torch.zeros(16, device="cuda")
both[(2,)](out, out, BLOCK=16)
'''


def test_the_header_counts_what_the_listed_lines_say(tmp_path, cli_env):
    """helper-81: two races at one line (program ids merged into one listed line) were "2 finding(s)" over one
    line: the line says how many findings it holds."""
    out, findings = _program(tmp_path, cli_env, TWO_RACES)
    n = len([f for f in findings if f.get("severity", "error") == "error"])
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("  race:")]
    assert n >= 2 and f"{n} finding(s)" in out.stderr, out.stderr[-2000:]
    held = sum(int(ln.split(" findings in ")[0].rsplit("(", 1)[1]) if " findings in " in ln else 1 for ln in lines)
    assert held == n, out.stderr[-2000:]


def test_a_kernel_file_named_like_its_launchers_gets_its_folder(tmp_path):
    """helper-97: FlashInfer's triton/norm.py launches triton/kernels/norm.py; "at norm.py:52 ... [launched from
    .../triton/norm.py:30]" read as a line of the wrapper. The kernel's file gets its folder when the launch site's
    file has its name; otherwise the name alone, as before."""
    from tritondbg.interp.frames import site_name

    kernel, wrapper = tmp_path / "kernels" / "norm.py", tmp_path / "norm.py"
    assert site_name(str(kernel), str(wrapper)) == "kernels/norm.py"
    assert site_name(str(kernel), str(tmp_path / "prog.py")) == "norm.py"
    assert site_name(str(kernel), str(kernel)) == "norm.py" and site_name(str(kernel)) == "norm.py"


def test_a_launch_site_path_with_dot_dot_is_told_normalised():
    """helper-97: a program whose sys.path held ``drv/..`` was told "launched from /tmp/h97/drv/../pkg/norm.py"."""
    from tritondbg.program.stacks import describe_site

    assert describe_site([("/tmp/drv/../pkg/norm.py", 7, "norm")]) == "/tmp/pkg/norm.py:7 (norm)"
    assert describe_site([("<string>", 1, "<module>")]) == "<string>:1 (<module>)"


def test_an_out_of_bounds_loads_fill_is_said_in_words():
    """helper-108: "here they hold other=, else poison" and "your program got other=, else 0 there" read as an
    unfilled phrase."""
    from tritondbg.interp.findings import _consequence

    text = _consequence({"op": "load", "lanes": 4})
    assert "here they hold the load's other= value if it has one, else poison" in text, text
    text = _consequence({"op": "load", "lanes": 4, "program_fill": "0"})
    assert "your program got the load's other= value if it has one, else 0 there" in text, text


ROW_STRIDE = '''
import torch, triton, triton.language as tl

@triton.jit
def softmax(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, 0), mask=cols < n_cols)  # STORE

x = torch.randn(37, 1024, device="cuda")[:, :1000]
y = torch.empty(37, 1000, device="cuda")
softmax[(37,)](y, x, x.stride(0), 1000, BLOCK=1024)
'''


def test_a_store_with_another_tensors_row_stride_names_that_stride(tmp_path, cli_env):
    """helper-129: DeepSpeed's softmax given a column slice (rows 1024 apart) wrote its contiguous output (rows 1000
    apart) with the input's row stride: told as rows past the end or a column index past its size, never as the
    stride. The last lane is the last row's last element with rows 1024 apart: that stride is named."""
    out, found = _program(tmp_path, cli_env, ROW_STRIDE)
    (oob,) = [f for f in found if f["kind"] == "out_of_bounds"]
    assert oob["line"] == _line(ROW_STRIDE, "# STORE"), oob
    assert ("or the wrong row stride: these lanes end where out_ptr's last row ends with rows 1024 elements apart "
            "(stride = 1024, in_ptr.stride(0)), and its rows are 1000 apart") in oob["message"], oob["message"]


def test_a_kernel_file_outside_the_working_directory_is_named_from_its_package_top(tmp_path, monkeypatch):
    """helper-136: mlstm_kernels (a source tree on PYTHONPATH, outside the working directory) has three files called
    fw_kernel_recurrent.py, and every message named the one it meant by that name alone."""
    from tritondbg.interp.frames import site_name

    pkg = tmp_path / "src" / "mk" / "chunkwise" / "xl"
    pkg.mkdir(parents=True)
    for d in (tmp_path / "src" / "mk", tmp_path / "src" / "mk" / "chunkwise", pkg):
        (d / "__init__.py").write_text("")
    kernel = pkg / "fw_kernel_recurrent.py"
    kernel.write_text("")
    lone = tmp_path / "lone" / "kernel.py"
    lone.parent.mkdir()
    lone.write_text("")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert site_name(str(kernel)) == "mk/chunkwise/xl/fw_kernel_recurrent.py"
    assert site_name(str(lone)) == "kernel.py"


DOT_UNDEFINED = '''
import torch, triton, triton.language as tl


@triton.jit
def scores(q_ptr, k_ptr, o_ptr, n, D: tl.constexpr, BLOCK_N: tl.constexpr):
    rows, d, cols = tl.arange(0, 16), tl.arange(0, D), tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + rows[:, None] * D + d[None, :])
    k = tl.load(k_ptr + cols[None, :] * D + d[:, None], mask=cols[None, :] < n)  # KLOAD
    qk = tl.dot(q, k).to(tl.float32)  # DOT
    tl.store(o_ptr + rows, tl.max(qk, 1))  # MAX


# int8 scores (SpargeAttn's), all < 0: a padding column wins the max
q = -torch.randint(1, 4, (16, 32), dtype=torch.int8, device="cuda")
k = torch.randint(1, 4, (20, 32), dtype=torch.int8, device="cuda")
o = torch.empty(16, device="cuda")
scores[(1,)](q, k, o, 20, D=32, BLOCK_N=32)
'''


def test_padding_a_dot_made_of_a_loads_undefined_lanes_is_told_as_such(tmp_path, cli_env):
    """helper-158 (SpargeAttn's int8 ``k = tl.load(K_ptrs, mask=k_mask)``, then ``tl.dot(q, k)`` and
    ``tl.max(qk, 1)``): the dot's columns made of the load's undefined lanes count as padding (README), and the
    masked_reduction said they were "filled by a masked load's other=", which the load has not, and advised
    other=float('-inf'), which would make them NaN; the values it quotes are tritondbg's fill."""
    (tmp_path / "prog.py").write_text(DOT_UNDEFINED)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next((ln for ln in p.stderr.splitlines() if "masked_reduction in scores" in ln), "")
    assert f"prog.py:{_line(DOT_UNDEFINED, '# MAX')}" in line and p.returncode == 1, p.stderr[-3000:]
    assert (f"(the rows / columns of the tl.dot at line {_line(DOT_UNDEFINED, '# DOT')} made of the lanes the masked "
            f"load at line {_line(DOT_UNDEFINED, '# KLOAD')} leaves undefined, with no other=: the values below come "
            "from tritondbg's fill of those lanes)") in line, line
    assert "other=" not in line.split("the values below")[1], line  # no other= of the load fixes a dot's columns
    padded = DOT_UNDEFINED.replace("mask=cols[None, :] < n)", "mask=cols[None, :] < n, other=0)")
    (tmp_path / "prog.py").write_text(padded)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next((ln for ln in p.stderr.splitlines() if "masked_reduction in scores" in ln), "")
    assert f"filled by the other=0 of the masked load at line {_line(DOT_UNDEFINED, '# KLOAD')}" in line, p.stderr
    assert "undefined" not in line, line
