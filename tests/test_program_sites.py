"""Program mode on library code: a launch inside ``torch.library.triton_op`` names the user's frame (torch's custom-op
dispatch frames are skipped, as dynamo's are), and numpy's floating-point warnings from the interpreter (a 0/0 in
lanes a kernel never stores: bitsandbytes' blockwise quantization) do not reach the user."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = [pytest.mark.interpreter]

LIB = '''
import torch, triton, triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs + 1, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)   # off by one: a finding


@triton_op("tdbgtest::shift", mutates_args={})
def shift(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap_triton(shift_kernel)[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


@triton.jit
def normalize_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    amax = tl.max(tl.abs(x), axis=0)
    tl.store(out_ptr + offs, x / amax, mask=mask)      # programs past the end: 0/0, never stored
'''

PROG = '''
import sys, torch
sys.path.insert(0, "lib/site-packages")  # an installed library
from shiftlib import shift, normalize_kernel

x = torch.randn(1000)
if sys.argv[1] == "op":
    shift(x)  # USER
else:
    out = torch.empty(100)
    normalize_kernel[(4,)](x[:100], out, 100, BLOCK=64)
    print("finite", bool(torch.isfinite(out).all()))
'''


@pytest.fixture
def prog(tmp_path):
    (tmp_path / "lib" / "site-packages").mkdir(parents=True)
    (tmp_path / "lib" / "site-packages" / "shiftlib.py").write_text(textwrap.dedent(LIB))
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROG))
    return tmp_path


def test_a_triton_op_launch_names_the_users_frame(prog, cli_env):
    user = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.endswith("# USER"))
    r = run_cli(["interpret", "--", sys.executable, "prog.py", "op"], cli_env, cwd=prog)
    assert r.returncode == 1, r.stderr
    line = next((ln for ln in r.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds")), r.stderr)
    assert f"<- {prog / 'prog.py'}:{user} (<module>)" in line, line


def test_numpy_warnings_of_lanes_never_stored_do_not_reach_the_user(prog, cli_env):
    r = run_cli(["interpret", "--", sys.executable, "prog.py", "norm"], cli_env, cwd=prog)
    assert r.returncode == 0 and "finite True" in r.stdout, r.stderr
    assert "RuntimeWarning" not in r.stderr and "0 finding(s)" in r.stderr, r.stderr


def test_wrap_triton_of_an_older_torch_hands_back_the_interpreters_kernel(monkeypatch):
    """torch before 2.13 raised for an InterpretedFunction (seen on the GPU machine's torch 2.11); the shim hands it
    back. Simulated here with such a wrap_triton."""
    import torch.library
    import torch._library.triton as lib
    import triton
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    from tritondbg.interp import shims

    def strict(kernel):
        raise RuntimeError("wrap_triton only works on functions annotated with triton.jit or triton.autotune")

    @triton.jit
    def k(x_ptr):
        tl.store(x_ptr, 1.0)

    monkeypatch.setattr(lib, "wrap_triton", strict)
    monkeypatch.setattr(torch.library, "wrap_triton", strict)
    undo = shims._wrap_triton()
    try:
        assert isinstance(k, InterpretedFunction)   # the suite runs under the interpreter
        assert torch.library.wrap_triton(k) is k and lib.wrap_triton(k) is k
        with pytest.raises(RuntimeError, match="only works on"):
            lib.wrap_triton(lambda: None)           # anything else still goes to torch's
    finally:
        undo()
    assert lib.wrap_triton is strict


SPIN = '''
import os, sys, torch, triton, triton.language as tl


@triton.jit
def spin(x_ptr):
    while tl.load(x_ptr) == 0:  # SPIN: nobody ever sets it
        pass


x = torch.zeros(4)
open(sys.argv[1], "w").write(str(os.getpid()))
spin[(2,)](x)
'''


def _stop_while_spinning(args: list, sig: str, pidfile, cwd) -> tuple[int, str, str]:
    """Run ``tritondbg ARGS`` (in its own session, as from a terminal), wait until the program wrote ``pidfile``
    and spins in its launch, send ``sig`` (SIGINT to the group: a terminal's Ctrl-C; SIGTERM to tritondbg, as
    timeout(1) does) and return (exit status, stdout, stderr)."""
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET" and not k.startswith("PYTEST_XDIST")}
    proc = subprocess.Popen([sys.executable, "-m", "tritondbg", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,  # SIGINT as from a terminal
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        time.sleep(2.0)                   # inside the launch by now
        if sig == "SIGINT":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)  # tritondbg passes it on
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


@pytest.mark.parametrize("command", ["interpret", "capture"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_stop_in_a_spinning_kernel_says_where_and_does_not_count_it_checked(sig, command, tmp_path):
    """Ctrl-C (the terminal's group SIGINT) or SIGTERM (``timeout``, a CI cancel: it said only "killed by SIGTERM")
    while a launch spins: the kernel line and pid it was at (capture said nothing of it: session 36)."""
    (tmp_path / "spin.py").write_text(textwrap.dedent(SPIN))
    pidfile = tmp_path / "pid"
    extra = ["--interpret", "--out", str(tmp_path / "cap")] if command == "capture" else []
    rc, _, err = _stop_while_spinning([command, *extra, "--", sys.executable, "spin.py", str(pidfile)], sig, pidfile,
                                      tmp_path)
    spin_line = next(i for i, ln in enumerate(SPIN.splitlines(), 1) if "# SPIN" in ln)
    how = "interrupted" if sig == "SIGINT" else "terminated (SIGTERM)"
    assert rc == (130 if sig == "SIGINT" else 143), err[-2000:]
    assert f"tritondbg: {how} in spin at spin.py:{spin_line}, pid (0, 0, 0) (its 1st launch)" in err, err[-2000:]
    if command == "capture":  # the launch is kept, marked unfinished (SIGTERM's was not kept at all)
        assert "spin_0.py::spin_0" in err and "(the launch did not finish: " in err, err[-2000:]
        return
    row = next(ln for ln in err.splitlines() if ln.strip().startswith("spin "))
    assert row.split()[1:3] == ["1", "0"], row   # launched once, checked none


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_stop_in_a_spinning_kernel_under_pytest_still_says_where(sig, tmp_path):
    """pytest captures a test's stderr: the line of a Ctrl-C'd (or SIGTERM'd) launch went with the test's captured
    output and the user saw only pytest's KeyboardInterrupt in triton's code. It goes to the terminal now."""
    pidfile = tmp_path / "pid"
    body = textwrap.dedent(SPIN).replace("open(sys.argv[1]", "def test_spin():\n    open(" + repr(str(pidfile)))
    body = body.replace("spin[(2,)](x)", "    spin[(2,)](x)")
    (tmp_path / "test_spin.py").write_text(body)
    rc, out, err = _stop_while_spinning(["interpret", "--", sys.executable, "-m", "pytest", "-q", "-p",
                                         "no:cacheprovider", "test_spin.py"], sig, pidfile, tmp_path)
    spin_line = next(i for i, ln in enumerate(body.splitlines(), 1) if "# SPIN" in ln)
    how = "interrupted" if sig == "SIGINT" else "terminated (SIGTERM)"
    assert f"tritondbg: {how} in spin at test_spin.py:{spin_line}, pid (0, 0, 0)" in err, (out + err)[-3000:]
    assert rc != 0


def test_program_form_takes_arch_for_the_stand_in(tmp_path, cli_env):
    # arch.py launches no kernel: exit 1 (nothing checked or captured), its output still shows the stand-in's answers
    (tmp_path / "arch.py").write_text("import torch, triton\n"
                                      "print('target', triton.runtime.driver.active.get_current_target().arch)\n"
                                      "print('cap', torch.cuda.get_device_capability())\n")
    r = run_cli(["interpret", "--arch", "sm_80", "--", sys.executable, "arch.py"], cli_env, cwd=tmp_path)
    assert r.returncode == 1 and "target 80" in r.stdout and "cap (8, 0)" in r.stdout, r.stdout + r.stderr
    r = run_cli(["interpret", "--arch", "gfx942", "--", sys.executable, "arch.py"], cli_env, cwd=tmp_path)
    assert r.returncode == 1 and "target gfx942" in r.stdout, r.stdout + r.stderr
    bad = run_cli(["interpret", "--arch", "sm_999", "--", sys.executable, "arch.py"], cli_env, cwd=tmp_path)
    assert bad.returncode == 2 and "target" not in bad.stdout and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    # capture takes it too (a program's sm_80 or gfx942 host path could not be captured)
    r = run_cli(["capture", "--interpret", "--arch", "sm_80", "--out", "cap", "--", sys.executable, "arch.py"], cli_env,
                cwd=tmp_path)
    assert r.returncode == 1 and "target 80" in r.stdout and "cap (8, 0)" in r.stdout, r.stdout + r.stderr
    bad = run_cli(["capture", "--compiled", "--arch", "sm_80", "--out", "cap2", "--", sys.executable, "arch.py"],
                  cli_env, cwd=tmp_path)
    assert bad.returncode == 2 and "does not apply to a compiled run" in bad.stderr and "target" not in bad.stdout
    assert not (tmp_path / "cap2").exists()


def test_a_deep_library_call_still_ends_with_the_programs_frame(tmp_path, monkeypatch):
    """A library that reaches its launch through more frames than the stack keeps (fla's chunk_gla, Liger's jsd):
    "launched from" named only the library's frames, never the program's line (findings and captures alike)."""
    from tritondbg.program import stacks

    lib = tmp_path / "site-packages" / "deeplib_for_sites.py"
    lib.parent.mkdir()
    lib.write_text("def f0(cb):\n    return cb()\n"
                   + "".join(f"def f{i}(cb):\n    return f{i - 1}(cb)\n" for i in range(1, 12)))
    monkeypatch.syspath_prepend(str(lib.parent))
    import deeplib_for_sites

    stack = deeplib_for_sites.f11(lambda: stacks.user_stack())  # the lambda stands for the launch wrapper
    assert len(stack) == 8 and stack[0][2] == "f0", stack
    mine = stacks.program_frame(stack)
    assert mine is not None and mine[0] == __file__ and mine[2].startswith("test_a_deep_library"), stack
    short = stacks.short_stack(stack)
    assert len(short) == 6 and stacks.program_frame(short) == mine
    assert stacks.describe_site(short).endswith(f"<- {__file__}:{mine[1]} ({mine[2]})")


def test_capture_records_its_own_options_and_the_stand_ins_arch(tmp_path, cli_env):
    """`capture --arch sm_80 -- ...` was recorded as `capture -- ...`, and each reproducer suggested
    `tritondbg ir --arch sm_80` whatever the capture's target."""
    (tmp_path / "prog.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def twice(x_ptr, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(x_ptr + o, tl.load(x_ptr + o) * 2)

        twice[(1,)](torch.randn(16), BLOCK=16)
    '''))
    r = run_cli(["capture", "--interpret", "--arch", "sm_100", "--max-per-kernel", "2", "--out", "cap", "--",
                 sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "cap" / "captures.json").read_text())
    assert doc["command"].startswith("tritondbg capture --arch sm_100 --out cap --max-per-kernel 2 -- "), doc["command"]
    text = (tmp_path / "cap" / "twice_0.py").read_text()
    assert "--arch sm_100" in text and "sm_80" not in text, text
    assert json.loads((tmp_path / "cap" / "data" / "twice_0.json").read_text())["arch"] == "sm_100"


def test_a_kernel_reached_through_dot_dot_on_sys_path_is_recorded_by_its_plain_path(tmp_path, cli_env):
    """A program that put ``scripts/../fa`` on sys.path had its kernel recorded as ``.../scripts/../fa/kern.py`` in
    captures.json and the reproducer's header (helper-137), where findings said ``fa/kern.py``."""
    (tmp_path / "fa").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "fa" / "kern.py").write_text(textwrap.dedent('''
        import triton, triton.language as tl

        @triton.jit
        def twice(x_ptr, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(x_ptr + o, tl.load(x_ptr + o) * 2)
    '''))
    (tmp_path / "scripts" / "run.py").write_text(textwrap.dedent('''
        import os, sys, torch
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fa"))
        from kern import twice
        twice[(1,)](torch.randn(16), BLOCK=16)
    '''))
    r = run_cli(["capture", "--out", "cap", "--", sys.executable, "scripts/run.py"], cli_env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "cap" / "captures.json").read_text())
    files = [c["kernel_file"] for c in doc["captures"]]
    assert files == [str(tmp_path / "fa" / "kern.py")], files
    assert "/../" not in (tmp_path / "cap" / "twice_0.py").read_text()


def test_an_interrupt_outside_kernel_code_claims_no_program_id(capsys):
    """helper-48: Ctrl-C while a launch's arguments were being set up said "interrupted in gemm_splitK_INT_kernel,
    pid (17, 7, 0)": the interpreter's program id was still the previous launch's last one (its grid was 18x8,
    this one's 6x4). Outside kernel code the line names the launch and says where it was instead."""
    import sys
    import types

    from tritondbg.program import attach

    launch = types.SimpleNamespace(name="gemm_kernel", stack=[("/x/prog.py", 20, "main")])
    attach.say_interrupted(launch, 0, frame=sys._getframe())
    err = capsys.readouterr().err
    assert "interrupted in gemm_kernel (its 1st launch), outside its kernel code" in err, err
    assert "pid" not in err, err


def test_a_launch_the_arch_refuses_is_told_without_tritondbgs_frames(tmp_path, cli_env):
    """helper-135: `interpret --arch sm_80 -- CMD` on an fp8 tensor showed a traceback through standin.py (the
    GPU compiler's refusal, raised by tritondbg's stand-in) and then "no Triton launch" with no word of it."""
    (tmp_path / "fp8.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def widen(x_ptr, y_ptr, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(y_ptr + o, tl.load(x_ptr + o).to(tl.float32))

        x = torch.randn(16, device="cuda").to(torch.float8_e4m3fn)
        widen[(1,)](x, torch.empty(16, device="cuda"), BLOCK=16)
    '''))
    r = run_cli(["interpret", "--arch", "sm_80", "--", sys.executable, "fp8.py"], cli_env, cwd=tmp_path)
    err = r.stdout + r.stderr
    assert r.returncode == 1 and "standin.py" not in err, err[-3000:]
    assert "\nValueError: type fp8e4nv not supported in this architecture (sm_80)" in err, err[-3000:]
    assert "note: 1 launch(es) of widen refused by the target's compiler" in err, err[-3000:]
