"""The compile check (tritondbg/interp/gpu_compile.py): a kernel the interpreter runs but Triton's compiler refuses
for the target is a ``compile`` finding at the compiler's line, in program mode and on a scenario; kernels the
compiler takes (Triton's jit'd library functions, tensor methods, helpers reached through modules and classes, a
jit function passed as a constexpr), checked after earlier launches left the language patched, give none; the
check leaves the interpreter's world as it found it."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

HELPERS = textwrap.dedent('''
import triton
import triton.language as tl


@triton.jit
def twice(x):
    return x * 2


class Ops:
    @staticmethod
    @triton.jit
    def shift(x, by):
        return x + by
''')

# tl.sum / tl.max / tl.cdiv are @triton.jit functions of Triton's (InterpretedFunctions under the interpreter);
# x.sum() is a tensor method; H.twice a module attribute; H.Ops.shift a class's static method; ACT a constexpr
GOOD = textwrap.dedent('''
import torch, triton, triton.language as tl
import helpers as H


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.jit
def good(x_ptr, o_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    acc = 0.0
    for k in range(2):  # (3.6's bare interpreter cannot take a tensor bound: the in-process test runs it bare)
        acc += tl.sum(x) + x.sum() * 0.0 + tl.cdiv(n, BLOCK) * 0.0
    y = H.Ops.shift(H.twice(ACT(x)), acc * 0.0 + tl.max(x, axis=0) * 0.0) + tl.zeros_like(x)  # (x.shape inside)
    tl.store(o_ptr + offs, y, mask=m)


def run(n=100):
    x = torch.randn(n, device="cuda")
    o = torch.empty_like(x)
    good[(1,)](x, o, n, BLOCK=128, ACT=relu)
    return x, o
''')

BAD = textwrap.dedent('''
import torch, triton, triton.language as tl


@triton.jit
def rowsum(x, out, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0
    for k in range(0, N, BLOCK):  # LOOP
        offs = k + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x + row * N + offs, mask=offs < N, other=0.0))
    tl.store(out + row, acc)


def rows(x):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    rowsum[(x.shape[0],)](x, out, x.shape[1], BLOCK=32)
    return out
''')

PROG = textwrap.dedent('''
import torch
from good import run
from bad import rows

x, o = run()
print("GOOD", bool(torch.allclose(o, 2 * torch.relu(x))))
x, o = run()  # again: the language is patched by now (the interpreter leaves it so after tl.sum's call)
x = torch.randn(4, 100, device="cuda")
print("BAD", bool(torch.allclose(rows(x), x.sum(1), atol=1e-4)))
''')


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


@pytest.fixture
def files(tmp_path):
    for name, text in (("helpers.py", HELPERS), ("good.py", GOOD), ("bad.py", BAD), ("prog.py", PROG)):
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_kernel_the_compiler_refuses_is_a_finding_at_its_line_and_good_kernels_give_none(files, cli_env):
    p = run_cli(["interpret", "--json", "k.json", "--", sys.executable, "prog.py"], cli_env, cwd=files)
    assert p.returncode == 1, (p.returncode, p.stderr[-3000:])
    assert "GOOD True" in p.stdout and "BAD True" in p.stdout, p.stdout  # the interpreter ran both kernels right
    doc = json.loads((files / "k.json").read_text())
    assert doc["launches"] == {"good": 2, "rowsum": 1}, doc["launches"]
    found = doc["findings"]
    compiles = [f for f in found if f["kind"] == "compile"]
    assert len(compiles) == 1, found
    f = compiles[0]
    assert f["kernel"] == "rowsum" and f["file"].endswith("bad.py") and f["line"] == _line(BAD, "# LOOP"), f
    assert f["severity"] == "error" and "for sm_90" in f["message"], f
    assert "Loop-carried variable acc has initial type int32 but is re-assigned to fp32" in f["message"], f
    assert not [x for x in found if x["kernel"] == "good"], found


def test_the_check_can_be_turned_off(files, cli_env):
    env = dict(cli_env, TRITONDBG_COMPILE_CHECK="0")
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], env, cwd=files)
    assert p.returncode == 0 and "compile" not in p.stderr, (p.returncode, p.stderr[-3000:])


def test_a_scenario_whose_kernel_the_compiler_refuses_fails_with_the_finding(files, cli_env):
    (files / "cases.py").write_text(textwrap.dedent('''
        import torch
        from tritondbg import Case, Scenario
        from bad import rows, rowsum


        def make_inputs(case, dtype, device, generator):
            return dict(x=torch.randn(3, case.params["n"], generator=generator).to(device=device, dtype=dtype))


        SCENARIO = Scenario(name="rows", launch=rows, reference=lambda x: x.float().sum(1), make_inputs=make_inputs,
                            cases=[Case("tiny", params=dict(n=70), dtypes=("float32",))], kernels=[rowsum])
    '''))
    p = run_cli(["interpret", "cases.py"], cli_env, cwd=files)
    assert p.returncode == 1, (p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    assert f"compile bad.py:{_line(BAD, '# LOOP')}" in p.stdout, p.stdout[-3000:]
    assert "Loop-carried variable acc" in p.stdout, p.stdout[-3000:]


def test_the_check_leaves_the_interpreters_world_as_it_was(files, monkeypatch):
    """In process: the language's attributes, the tensor class, the user's module globals and the interpreter's
    own __call__ are the same objects after a check as before it, and the verdicts are the compiler's."""
    import subprocess

    code = textwrap.dedent('''
        import os, sys
        os.environ["TRITON_INTERPRET"] = "1"
        sys.path.insert(0, os.getcwd())
        import torch, triton, triton.language as tl
        from triton.runtime.interpreter import InterpretedFunction
        from tritondbg.interp import gpu_compile
        from tritondbg.ir.targets import parse_arch
        import good, bad, helpers

        def world():
            out = {}
            for n, m in list(sys.modules.items()):
                if m is not None and (n.startswith("triton.language") or n in ("good", "bad", "helpers")):
                    out.update({(n, k): v for k, v in list(vars(m).items())})
            out.update({("tensor", k): v for k, v in vars(tl.core.tensor).items()})
            out.update({("Ops", k): v for k, v in vars(helpers.Ops).items()})
            out["call"] = InterpretedFunction.__call__
            return out

        arch = parse_arch("sm_90")
        x = torch.randn(100); o = torch.empty_like(x)
        gpu_compile.check(good.good, (x, o, 100), dict(BLOCK=128, ACT=good.relu), arch)  # before any launch
        first = gpu_compile._pending["verdict"]
        good.good[(1,)](x, o, 100, BLOCK=128, ACT=good.relu)  # the interpreter patches the language now
        before = world()
        gpu_compile.check(good.good, (x, o, 100), dict(BLOCK=64, ACT=good.relu), arch)
        second = gpu_compile._pending["verdict"]
        X = torch.randn(4, 100); out = torch.empty(4)
        gpu_compile.check(bad.rowsum, (X, out, 100), dict(BLOCK=32), arch)
        third = gpu_compile._pending["verdict"]
        after = world()
        changed = sorted(str(k) for k in set(before) | set(after) if before.get(k) is not after.get(k))
        good.good[(1,)](x, o, 100, BLOCK=128, ACT=good.relu)  # still runs under the interpreter
        print("RESULT", first, second, third is not None and third["line"], gpu_compile.tally, changed,
              bool(torch.allclose(o, 2 * torch.relu(x))))
    ''')
    p = subprocess.run([sys.executable, "-c", code], cwd=files, capture_output=True, text=True, timeout=300)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")), None)
    assert line is not None, p.stderr[-3000:]
    assert line == (f"RESULT None None {_line(BAD, '# LOOP')} {{'accepted': 2, 'refused': 1, 'no verdict': 0}} "
                    "[] True"), line


ORDER_AND_HINT = textwrap.dedent('''
import torch, triton, triton.language as tl


@triton.jit
def rowsum(x, out, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0
    for k in range(0, N, BLOCK):  # LOOP
        offs = k + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x + row * N + offs, mask=offs < N, other=1.0))  # SUM (padding of 1.0: a finding too)
    tl.store(out + row, acc)


@triton.jit
def copy(x_ptr, o_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    if n > 1000:  # a runtime branch this run never takes: the compiler builds it all the same
        p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (B,), (0,))  # BLOCK_PTR
        tl.store(o_ptr + offs, tl.load(p, boundary_check=(0,)))
    else:
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)


x = torch.randn(4, 100, device="cuda")
rowsum[(4,)](x, torch.empty(4, device="cuda"), 100, BLOCK=32)
copy[(1,)](x, torch.empty_like(x), 100, B=128)
''')


def _block_pointers() -> bool:
    import triton.language as tl
    from triton.runtime import interpreter

    return hasattr(interpreter.InterpreterBuilder, "create_tensor_pointer_load") or hasattr(tl.core, "_block_ptr")


def test_the_refusal_is_told_before_the_findings_it_may_cause_and_a_removed_feature_says_what_to_do(tmp_path, cli_env):
    """helper-117: a masked_reduction of the same kernel was printed first, its advice pointing away from the cause;
    a make_block_ptr in a branch the run never took (Triton 3.9) said "Block pointers have been removed" with none
    of the hint the kernel_error gives for it."""
    (tmp_path / "prog.py").write_text(ORDER_AND_HINT)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: ") and " in rowsum at " in ln]
    assert [ln.split(" in rowsum at ")[0] for ln in told] == ["tritondbg: compile", "tritondbg: masked_reduction"], \
        p.stderr[-3000:]
    assert f"prog.py:{_line(ORDER_AND_HINT, '# LOOP')}" in told[0], told
    if _block_pointers():
        return
    bp = next(ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: compile in copy"))
    assert f"prog.py:{_line(ORDER_AND_HINT, '# BLOCK_PTR')}" in bp and "has no tl.make_block_ptr: run the kernel " \
        "with Triton 3.8 or older" in bp, bp


GAPS = textwrap.dedent('''
import torch, triton, triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if tl.sum(x) > -1e9:
        output = x + tl.load(y_ptr + offs, mask=offs < n, other=0.0)
    tl.store(output_ptr + offs, output, mask=offs < n)  # USE: the compiler reads the global `output` here


@triton.jit
def modes(x_ptr, o_ptr, MODE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if MODE == 11:
        acc = 0
        for i in range(2):  # MODE_LOOP
            acc += tl.sum(x)
        x = x + acc
    tl.store(o_ptr + tl.arange(0, 16), x)


x, y = torch.rand(100, device="cuda"), torch.rand(100, device="cuda")
output = torch.empty_like(x)  # a module global named as the kernel's own variable
add_kernel[(1,)](x, y, output, 100, BLOCK=128)
v, o = torch.rand(16, device="cuda"), torch.empty(16, device="cuda")
for mode in range(12):  # the bug is behind the 12th specialisation
    modes[(1,)](v, o, MODE=mode)
''')


def test_a_local_assigned_only_in_a_branch_that_shares_a_globals_name_and_a_late_specialisation_are_told(tmp_path,
                                                                                                      cli_env):
    """helper-116: "Cannot access global variable output" was left to globals_check, which never fires where the
    interpreter reads the kernel's own `output` (assigned only in a runtime branch): no finding, where `ir` refuses.
    And the 9th and later specialisations of a kernel were not checked: a loop bug behind MODE == 8 was missed."""
    (tmp_path / "prog.py").write_text(GAPS)
    p = run_cli(["interpret", "--json", "f.json", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    findings = json.loads((tmp_path / "f.json").read_text())["findings"]
    found = {f["kernel"]: f for f in findings if f["kind"] == "compile"}
    assert sorted(found) == ["add_kernel", "modes"], p.stderr[-3000:]
    assert found["add_kernel"]["line"] == _line(GAPS, "# USE"), found["add_kernel"]
    assert ("Cannot access global variable output from within @jit'ed function (output is assigned in the kernel only "
            "inside a loop or a branch") in found["add_kernel"]["message"], found["add_kernel"]["message"]
    assert found["modes"]["line"] == _line(GAPS, "# MODE_LOOP"), found["modes"]


HARNESS_LATER = textwrap.dedent('''
import triton, triton.language as tl
from triton.language.extra.libdevice import exp as lexp


@triton.jit
def kexp(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, lexp(tl.load(x_ptr + offs, mask=m, other=0.0)), mask=m)
''')

HARNESS_HELPER = textwrap.dedent('''
import triton, triton.language as tl
from triton.language.extra.libdevice import exp


@triton.jit
def act(x):
    return exp(tl.maximum(x, 0.0))
''')

HARNESS = textwrap.dedent('''
import torch, triton, triton.language as tl
import hlp


@triton.jit
def first(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, hlp.act(tl.load(x_ptr + offs, mask=m, other=0.0)), mask=m)


@triton.jit
def rowsum(x_ptr, o_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(triton.cdiv(N, BLOCK)):  # a constexpr_function, as the compiler sees it
        offs = i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(o_ptr, tl.sum(acc))


x = torch.randn(100, device="cuda")
o = torch.empty_like(x)
first[(1,)](x, o, 100, BLOCK=128)
first[(1,)](x, o, 100, BLOCK=256)  # the helper's module still has the interpreter's libdevice exp bound
import later  # a module of the language imported after the first launch (libdevice, here)
later.kexp[(1,)](x, o, 100, BLOCK=128)
rowsum[(1,)](x, o, N=100, BLOCK=32)
print("ok", bool(torch.allclose(o[0], x.sum(), atol=1e-4)))
''')


def test_the_harness_gives_correct_kernels_no_finding_whatever_the_interpreter_left(tmp_path, cli_env):
    """helper-118's false `compile` errors: a language module imported after the first launch (its names were
    deleted for the compile), triton.cdiv (a constexpr_function answers an int while the interpreter's knob is on),
    a helper module whose libdevice name the interpreter left bound to its stand-in. Each compiles with `ir`."""
    for name, text in (("hlp.py", HARNESS_HELPER), ("later.py", HARNESS_LATER), ("prog.py", HARNESS)):
        (tmp_path / name).write_text(text)
    env = dict(cli_env, TRITONDBG_DEBUG="1")
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], env, cwd=tmp_path)
    assert "ok True" in p.stdout and p.returncode == 0, p.stderr[-3000:]
    assert "compile" not in p.stderr.replace("compile check", "") and "no verdict" not in p.stderr, p.stderr[-3000:]
    assert "4 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]


MANY = textwrap.dedent('''
import torch, triton, triton.language as tl


@triton.jit
def scale(x_ptr, o_ptr, MODE: tl.constexpr):
    offs = tl.arange(0, 16)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) * MODE)


def launch(x):
    o = torch.empty_like(x)
    for mode in range(67):  # 67 specialisations: the check judges 64 of them
        scale[(1,)](x, o, MODE=mode)
    return o


if __name__ == "__main__":
    launch(torch.randn(16, device="cuda"))
''')


def test_specialisations_the_check_did_not_judge_are_said_in_program_and_scenario_runs(tmp_path, cli_env):
    """A check that did not run is never a pass: the launches whose compile the check gave no verdict on (here the
    three past its 64 specialisations a kernel) are a note in the run's summary (it said nothing, but under
    TRITONDBG_DEBUG)."""
    (tmp_path / "many.py").write_text(MANY)
    p = run_cli(["interpret", "--json", "f.json", "--", sys.executable, "many.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    said = "the GPU compile check gave no verdict on 3 specialisation(s) of scale: whether the compiler takes them"
    assert said in p.stderr, p.stderr[-3000:]
    assert "(scale's first: past the check's 64 specialisations a kernel; " in p.stderr, p.stderr[-3000:]  # helper-138
    assert json.loads((tmp_path / "f.json").read_text())["compile_unjudged"] == {"scale": 3}
    (tmp_path / "cases.py").write_text(textwrap.dedent('''
        import torch
        from tritondbg import Case, Scenario
        from many import launch, scale

        SCENARIO = Scenario(name="many", launch=launch, reference=lambda x: x * 66,
                            make_inputs=lambda case, dtype, device, generator: dict(x=torch.randn(16).to(device)),
                            cases=[Case("one", dtypes=("float32",))], kernels=[scale])
    '''))
    p = run_cli(["interpret", "cases.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and f"note: {said}" in p.stderr, (p.stdout[-2000:], p.stderr[-3000:])
    assert "scale's first: past the check's 64" in p.stderr, p.stderr[-3000:]
    p = run_cli(["interpret", "cases.py", "--json"], cli_env, cwd=tmp_path)
    assert json.loads(p.stdout)["extra"]["compile_unjudged"] == {"scale": 3}, p.stdout[-2000:]
    few = MANY.replace("range(67)", "range(3)")
    (tmp_path / "many.py").write_text(few)
    p = run_cli(["interpret", "--", sys.executable, "many.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "no verdict" not in p.stderr, p.stderr[-3000:]


def test_the_no_verdict_note_says_why(tmp_path, cli_env):
    """helper-138: FBGEMM's ROCm configs (waves_per_eu in a config's kwargs) checked for sm_90 gave "no verdict"
    with no reason but under TRITONDBG_DEBUG; the note names the first one."""
    (tmp_path / "wpe.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 64, "waves_per_eu": 2})], key=["n"])
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)

        k[lambda m: (triton.cdiv(100, m["BLOCK"]),)](torch.randn(100, device="cuda"), 100)
    '''))
    p = run_cli(["interpret", "--", sys.executable, "wpe.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    notes = [ln for ln in p.stderr.splitlines() if "gave no verdict" in ln]
    assert len(notes) == 1 and "(k's first: KeyError: " in notes[0] and "waves_per_eu" in notes[0], p.stderr[-3000:]


def test_a_print_of_a_tensor_alone_says_the_gpu_print_takes_a_string_first(tmp_path, cli_env):
    """helper-148: Triton-Puzzles' `print(range)` runs under the interpreter; the compile finding gave the compiler's
    bare "int32[constexpr[8]] is not string"."""
    (tmp_path / "prog.py").write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def show(X):\n"
        "    r = tl.arange(0, 8)\n"
        "    print(r)\n"
        "    tl.store(X + r, r.to(tl.float32))\n"
        "show[(1,)](torch.empty(8, device='cuda'))\n")
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    (said,) = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: compile in show at prog.py:5")]
    assert "is not string; a print in a kernel compiles to tl.device_print, whose first argument is a string" in said
    assert p.returncode == 1, p.stderr[-2000:]


INNER = textwrap.dedent('''
import triton
import triton.language as tl


@triton.jit
def running_sum(x, N, BLOCK: tl.constexpr):
    acc = 0
    for k in range(0, N, BLOCK):  # LOOP
        offs = k + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x + offs, mask=offs < N, other=0.0))
    return acc
''')

OUTER = textwrap.dedent('''
import sys, torch, triton, triton.language as tl
import inner as H
from inner import running_sum


@triton.jit
def through_module(x, out, N, BLOCK: tl.constexpr):
    tl.store(out, H.running_sum(x, N, BLOCK))  # CALL


@triton.jit
def by_name(x, out, N, BLOCK: tl.constexpr):
    tl.store(out, running_sum(x, N, BLOCK))


x = torch.randn(100, device="cuda")
out = torch.empty(1, device="cuda")
(through_module if sys.argv[1] == "module" else by_name)[(1,)](x, out, 100, BLOCK=32)
''')


@pytest.mark.parametrize("how", ["module", "name"])
def test_a_refusal_inside_a_helper_is_told_at_the_helpers_line(tmp_path, cli_env, how):
    """helper-155: Thunder's cross-entropy with a loop-carried bf16 in its helper was told at the kernel's call of
    the helper (line 268), the helper's loop (line 62) is where it is."""
    (tmp_path / "inner.py").write_text(INNER)
    (tmp_path / "prog.py").write_text(OUTER)
    p = run_cli(["interpret", "--json", "k.json", "--", sys.executable, "prog.py", how], cli_env, cwd=tmp_path)
    (f,) = [f for f in json.loads((tmp_path / "k.json").read_text())["findings"] if f["kind"] == "compile"]
    assert f["file"].endswith("inner.py") and f["line"] == _line(INNER, "# LOOP"), (f, p.stderr[-2000:])
    assert "in running_sum(): " in f["message"] and "Loop-carried variable acc" in f["message"], f
