"""A @triton.jit helper whose value is used but which returns nothing (tritondbg/missing_return.py): Triton says
"cannot convert None of type <class 'NoneType'> to tensor" at the line that uses the value, under the interpreter
and in a GPU compile alike; tritondbg names the helper, its line and the call."""
import ast
import textwrap

import pytest
from conftest import run_cli

from tritondbg import missing_return

pytestmark = pytest.mark.interpreter

HELPERS = '''
import triton
import triton.language as tl


@triton.jit
def scale(x, s):
    y = x * s


@triton.jit
def shift(x, s):
    return x + s
'''

KERNEL = '''
import torch, triton, triton.language as tl
import helpers as H


@triton.jit
def double_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    x = H.shift(x, 0.0)
    y = H.scale(x, 2.0)
    tl.store(o_ptr + offs, y, mask=m)


def double(x):
    o = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, o, x.numel(), BLOCK=128)
    return o
'''

PROG = '''
import torch
from mk import double

x = torch.randn(300, dtype=torch.bfloat16)
print("RIGHT", bool(torch.equal(double(x), x * 2)))
'''

CASES = '''
import torch
from tritondbg import Case, Scenario
from mk import double, double_kernel


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


SCENARIO = Scenario(name="double", launch=double, reference=lambda x: 2 * x.float(), make_inputs=make_inputs,
                    cases=[Case("tiny", params=dict(n=300), dtypes=("float32",))], kernels=[double_kernel])
'''


def _line(text, needle):
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


@pytest.fixture
def files(tmp_path):
    for name, text in (("helpers.py", HELPERS), ("mk.py", KERNEL), ("prog.py", PROG), ("cases.py", CASES)):
        (tmp_path / name).write_text(text)
    return tmp_path


def _expected():
    return (f"the @triton.jit function scale (helpers.py:{_line(HELPERS, 'def scale')}) returns nothing, yet line "
            f"{_line(KERNEL, 'y = H.scale')} uses its value (`H.scale(x, 2.0)`): a forgotten `return`?")


def test_interpret_names_the_helper_that_forgot_its_return(files, cli_env):
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=files)
    finding = next(ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: kernel_error"))
    # headed at the call whose None the store uses (helper-103: it was headed at the store)
    assert f"mk.py:{_line(KERNEL, 'y = H.scale')}" in finding, finding
    assert "cannot convert None" in finding and _expected() in finding, finding
    assert "shift" not in finding, finding  # it returns its value
    assert p.returncode != 0


def test_a_compile_for_a_gpu_target_names_it_too(files, cli_env):
    p = run_cli(["ir", str(files / "cases.py"), "--stage", "ttir", "--arch", "sm90"], cli_env, cwd=files)
    assert p.returncode != 0
    assert _expected() in p.stderr, p.stderr[-2000:]


def _def(src):
    return ast.parse(textwrap.dedent(src)).body[0]


@pytest.mark.parametrize("src, gives", [
    ("def f(x):\n    y = x * 2\n", False),
    ("def f(x):\n    return\n", False),
    ("def f(x):\n    return None\n", False),
    ("def f(x):\n    def g():\n        return x\n    y = g\n", False),
    ("def f(x, C):\n    if C:\n        return x\n", True),
    ("def f(x):\n    for i in range(3):\n        x += 1\n    return x, x\n", True),
])
def test_returns_value(src, gives):
    assert missing_return.returns_value(_def(src)) is gives


def test_no_hint_without_none_in_the_error_or_without_such_a_call(files):
    mk = files / "mk.py"
    import importlib.util
    import sys

    sys.path.insert(0, str(files))
    try:
        spec = importlib.util.spec_from_file_location("mk_for_hint", mk)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(files))
    store = _line(KERNEL, "tl.store")
    assert missing_return.hint("IndexError: out of range", str(mk), store, "double_kernel", vars(mod)) == ""
    assert missing_return.hint("TypeError: None", str(mk), store, "double", vars(mod)) == ""  # plain Python
    assert _expected() == missing_return.hint("TypeError: cannot convert None", str(mk), store, "double_kernel",
                                              vars(mod))


COMPILED = '''
import sys
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import mk
from tritondbg.runner import kernel_error_message


class Scen:
    source = sys.argv[1] + "/cases.py"


src = ASTSource(mk.double_kernel, signature={"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                constexprs={"BLOCK": 128})
try:
    triton.compile(src, target=GPUTarget("cuda", 90, 32))
except Exception as exc:  # what `tritondbg run` reports when the launch's compile fails on the GPU
    print("MESSAGE", kernel_error_message(exc, Scen()))
'''


def test_run_s_compile_error_names_it_too(files):
    """`tritondbg run`'s message for a launch whose compile failed (the same front end as on the GPU, here for a
    target compiled on the CPU: the launch itself needs a GPU)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    p = subprocess.run([sys.executable, "-c", COMPILED, str(files)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert "MESSAGE" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])
    assert "cannot convert None" in p.stdout and _expected() in p.stdout, p.stdout


def test_a_none_that_fails_inside_a_tl_function_names_the_kernels_line_and_the_helper(files, cli_env):
    """The None reaches tl.sum before any line of the kernel uses it: Triton's error is nested (the kernel's
    "at 11:8:" over tl.sum's own), and `ir` printed only "CompilationError: at 11:8:" (a stranger's find)."""
    (files / "mk.py").write_text(KERNEL.replace("tl.store(o_ptr + offs, y, mask=m)",
                                                "tl.store(o_ptr + offs, tl.sum(y, 0) + x, mask=m)"))
    p = run_cli(["ir", str(files / "cases.py"), "--stage", "ttir", "--arch", "sm_90"], cli_env, cwd=files)
    assert p.returncode != 0
    line = next(ln for ln in p.stderr.splitlines() if "failed" in ln)
    assert f"mk.py:{_line(KERNEL, 'tl.store')}: in sum(): AttributeError: 'NoneType' object" in line, line
    assert f"the @triton.jit function scale (helpers.py:{_line(HELPERS, 'def scale')}) returns nothing" in line, line
    assert "uses its value (`H.scale(x, 2.0)`): a forgotten `return`?" in line, line


UNPACK = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def pid_pair(pid, n):
    a = pid // n
    b = pid % n


@triton.jit
def k(o_ptr, n, BLOCK: tl.constexpr):
    a, b = pid_pair(tl.program_id(0), n)  # USE
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, offs + a + b)


def launch(x):
    k[(1,)](x, 4, BLOCK=16)
    return x


SCENARIO = Scenario(name="unpack", launch=launch, reference=lambda x: x,
                    make_inputs=lambda case, dtype, device, generator: dict(x=torch.zeros(16, device=device)),
                    cases=[Case("tiny", dtypes=("float32",))], kernels=[k])
'''


def test_a_compile_that_unpacks_a_helper_returning_nothing_names_it(tmp_path, cli_env):
    """helper-45 (tutorial 09's _compute_pid without its return): `ir` printed only "TypeError: cannot unpack
    non-iterable value" (no "None" in the compiler's text, so no hint); the interpreter named the helper."""
    (tmp_path / "unpack.py").write_text(UNPACK)
    p = run_cli(["ir", str(tmp_path / "unpack.py"), "--stage", "ttir", "--arch", "sm_90"], cli_env, cwd=tmp_path)
    assert p.returncode != 0 and "cannot unpack non-iterable" in p.stderr, p.stderr[-2000:]
    assert (f"the @triton.jit function pid_pair (unpack.py:{_line(UNPACK, 'def pid_pair')}) returns nothing, yet "
            f"line {_line(UNPACK, '# USE')} uses its value") in p.stderr, p.stderr[-2000:]



def test_a_helper_whose_none_another_helper_returns_is_named(cli_env, tmp_path):
    """helper-62: the kernel calls a helper that returns a tuple holding the value of a helper with no `return`;
    the hint looked only at the kernel's own calls and named nothing, under the interpreter and in a compile."""
    from pathlib import Path

    target = str(Path(__file__).resolve().parent / "interp_data" / "noreturn_nested.py")
    for args in (["interpret", target], ["ir", target, "--stage", "ttir", "--arch", "sm90"]):
        p = run_cli(args, cli_env, cwd=tmp_path)
        assert p.returncode != 0
        assert "the @triton.jit function _keys (noreturn_nested.py:" in p.stdout + p.stderr, (p.stdout + p.stderr)[-2000:]
        assert "yet noreturn_nested.py:" in p.stdout + p.stderr and "uses its value (`_keys(x)`)" in p.stdout + p.stderr


COMBINE_NO_RETURN = '''
import torch, triton, triton.language as tl


@triton.jit
def combine(m_a, s_a, m_b, s_b):  # COMBINE
    m = tl.maximum(m_a, m_b)
    m, s_a * tl.exp(m_a - m) + s_b * tl.exp(m_b - m)


@triton.jit
def k(out_ptr, x_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    M, S = tl.REDUCTION
    tl.store(out_ptr, tl.sum(M + S, 0) if M.shape else M + S)


x = torch.randn(100, device="cuda")
out = torch.empty(1, device="cuda")
k[(1,)](out, x, 100, B=128)
'''


@pytest.mark.parametrize("op", ["reduce((x, tl.exp(x)), 0, combine)", "associative_scan((x, tl.exp(x)), 0, combine)"])
def test_a_combine_function_that_forgot_its_return_is_named(tmp_path, cli_env, op):
    """helper-114: a tl.reduce whose combine function computes its pair and returns nothing said only "IndexError:
    tuple index out of range" (the interpreter's element path, after tritondbg's block path saw the None)."""
    (tmp_path / "prog.py").write_text(COMBINE_NO_RETURN.replace("REDUCTION", op))
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    line = next(i for i, ln in enumerate(COMBINE_NO_RETURN.splitlines(), 1) if "# COMBINE" in ln)
    assert (f"the combine function combine (prog.py:{line}) of this tl.reduce / tl.associative_scan returns "
            "nothing: a forgotten `return`?") in p.stderr, p.stderr[-3000:]
    assert "IndexError" not in p.stderr, p.stderr[-3000:]


MATH_ROUND = '''
import torch, triton, triton.language as tl


@triton.jit
def q(x_ptr, o_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(o_ptr + offs, tl.math.round(tl.load(x_ptr + offs) * 4.0))


x = torch.randn(16, device="cuda")
o = torch.empty_like(x)
q[(1,)](x, o, B=16)
'''


def test_a_math_function_this_triton_moved_to_libdevice_says_where_it_is(tmp_path, cli_env):
    """helper-117: matmulfreellm's tl.math.round (Triton 2) said only "module 'triton.language.math' has no
    attribute 'round'"; libdevice has it."""
    (tmp_path / "prog.py").write_text(MATH_ROUND)
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    assert "has no tl.math.round: its libdevice has it, `from triton.language.extra import libdevice`, then " \
        "libdevice.round(x)" in p.stderr, p.stderr[-3000:]


def test_triton_2s_tl_libdevice_says_where_libdevice_is(tmp_path, cli_env):
    """helper-139: kernl's activations call tl.libdevice.tanh (Triton 2.0): "module 'triton.language' has no
    attribute 'libdevice'" and nothing more."""
    (tmp_path / "prog.py").write_text(MATH_ROUND.replace("tl.math.round(", "tl.libdevice.tanh("))
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    assert "has no tl.libdevice (Triton 2.0's): `from triton.language.extra import libdevice`, then " \
        "libdevice.NAME(x)" in p.stderr, p.stderr[-3000:]


ACTIVATIONS = '''
import torch, triton, triton.language as tl


@triton.jit
def act_tanh(x):
    y = x * 2


@triton.jit
def act_relu(x):
    return tl.maximum(x, 0)


@triton.jit
def k(x_ptr, o_ptr, ACT: tl.constexpr, B: tl.constexpr):
    offs = tl.arange(0, B)
    acc = tl.load(x_ptr + offs)
    if ACT == "tanh":
        acc = act_tanh(acc)  # USE
    if ACT == "relu":
        acc = act_relu(acc)
    tl.store(o_ptr + offs, acc)


x = torch.randn(16, device="cuda")
k[(1,)](x, torch.empty_like(x), ACT="tanh", B=16)
'''


def test_a_none_assigned_before_constexpr_branches_heads_the_finding_at_its_call(tmp_path, cli_env):
    """helper-139 (kernl's linear layer: `if ACTIVATION == "tanh": acc = tanh(acc)`, then the same for relu, then
    the store): the headline named the store's line, since the last assignment of acc before it (relu's, in a
    branch the constexpr skipped) returns a value."""
    (tmp_path / "prog.py").write_text(ACTIVATIONS)
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    assert f"kernel_error in k at prog.py:{_line(ACTIVATIONS, 'USE')} " in p.stderr, p.stderr[-3000:]
    assert "act_tanh (prog.py:6) returns nothing" in p.stderr, p.stderr[-3000:]


def test_an_import_of_triton_ops_says_it_is_gone(tmp_path, cli_env):
    """helper-139: kernl's `from triton.ops.matmul_perf_model import ...` (gone since Triton 3.0) was a plain
    ModuleNotFoundError with no word on why; the program's traceback stays, one line follows it."""
    (tmp_path / "prog.py").write_text("import torch\nfrom triton.ops.matmul_perf_model import early_config_prune\n")
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    assert "ModuleNotFoundError: No module named 'triton.ops'" in p.stderr, p.stderr[-3000:]
    hint = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: this Triton")]
    assert len(hint) == 1 and "has no triton.ops" in hint[0] and "removed in Triton 3.0" in hint[0], p.stderr[-3000:]


FILTERED = '''
import torch, triton, triton.language as tl


@triton.jit
def _is_filtered(x_ptr, start, BLOCK: tl.constexpr):
    v = tl.load(x_ptr + start + tl.arange(0, BLOCK))
    tl.max(tl.abs(v), 0) < 1e-3  # DROPPED


@triton.jit
def _double(x):
    return x * 2


@triton.jit
def scale(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if _is_filtered(x_ptr, pid * BLOCK, BLOCK):  # USED
        return
    o = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + o, _double(tl.load(x_ptr + o)))


x = torch.randn(64, device="cuda")
x[:16] = 1e-5
out = torch.full_like(x, -1.0)
scale[(4,)](x, out, BLOCK=16)
print("filtered block written:", bool((out[:16] != -1).all()))
'''


def test_a_helper_without_return_whose_none_fails_no_op_is_still_an_error(tmp_path, cli_env):
    """helper-140: Cut Cross-Entropy's `if _block_is_filtered(...): return` with the helper's `return` dropped ran
    with no finding (None is false: the branch is never taken, gradient filtering silently off, on the GPU too).
    The launch's uses of a jit function that returns nothing are a no_return error at the call's line."""
    (tmp_path / "prog.py").write_text(FILTERED)
    lines = {tag: i for i, ln in enumerate(FILTERED.splitlines(), 1) for tag in ("DROPPED", "USED") if f"# {tag}" in ln}
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1 and "filtered block written: True" in p.stdout, p.stdout + p.stderr[-3000:]
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: no_return in scale at ")]
    assert len(told) == 1 and f"prog.py:{lines['USED']}:" in told[0], p.stderr[-3000:]
    assert f"the @triton.jit function _is_filtered (prog.py:{lines['DROPPED'] - 2}) returns nothing" in told[0], told
    fixed = FILTERED.replace("    tl.max(tl.abs(v), 0) < 1e-3  # DROPPED", "    return tl.max(tl.abs(v), 0) < 1e-3")
    (tmp_path / "prog.py").write_text(fixed)
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "filtered block written: False" in p.stdout, p.stdout + p.stderr[-3000:]
    assert "no_return" not in p.stderr, p.stderr[-3000:]


LOST = '''
import torch, triton, triton.language as tl


@triton.jit
def _update(x, m_i, l_i):  # HELPER
    m_new = tl.maximum(m_i, tl.max(x, 0))
    l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new), 0)
    m_i = m_new


@triton.jit
def _mark(out_ptr, v):
    v = v + 1
    tl.store(out_ptr, v)  # (writes memory: a call for its effect)


@triton.jit
def lse(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    m_i = float("-inf")
    l_i = 0.0
    for start in range(0, N, BLOCK):
        o = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + o, mask=o < N, other=float("-inf"))
        _update(x, m_i, l_i)  # CALL
    _mark(out_ptr + 1, 0.0)
    tl.store(out_ptr, m_i + tl.log(l_i))


x = torch.randn(100, device="cuda")
out = torch.zeros(2, device="cuda")
lse[(1,)](x, out, 100, BLOCK=32)
print("lse", out[0].item())
'''


def test_a_bare_call_of_a_helper_whose_work_stays_inside_it_is_an_error(tmp_path, cli_env):
    """helper-153: MInference's online-softmax update with its `return` dropped, called as a statement: its
    assignments to m_i / l_i / acc never reach the caller and only a NaN warning came, whose advice pointed away.
    A helper that writes memory (a store) called as a statement is no finding."""
    (tmp_path / "prog.py").write_text(LOST)
    lines = {tag: i for i, ln in enumerate(LOST.splitlines(), 1) for tag in ("HELPER", "CALL") if f"# {tag}" in ln}
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: no_return in lse at ")]
    assert len(told) == 1 and f"prog.py:{lines['CALL']}:" in told[0], p.stderr[-3000:]
    assert (f"the @triton.jit function _update (prog.py:{lines['HELPER']}) returns nothing and writes no memory, yet "
            f"line {lines['CALL']} calls it for its effect (`_update(x, m_i, l_i)`): its assignments to l_i, m_i stay "
            f"inside it") in told[0], told[0]
    assert "_mark" not in p.stderr and p.returncode == 1, p.stderr[-3000:]
