"""Which Python runs `tritondbg interpret -- python prog.py` (program/launcher.py ``_python`` / ``_command``).

helper-132: with tritondbg installed in a venv of its own and the user's project venv activated, ``python`` after
the -- silently became tritondbg's Python, so the program ran against another torch and triton. Now the ``python``
on PATH runs the program when it has triton, as a shell would; a PATH Python without triton is passed over for
tritondbg's own, with a note saying so."""
import os
import sys
import textwrap

from conftest import run_cli

PROG = textwrap.dedent('''
import os, torch, triton, triton.language as tl

@triton.jit
def twice(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, 2 * x, mask=offs < n)

x = torch.ones(10, device="cuda")
twice[(1,)](x, 10, BLOCK=16)
print("ran by", os.environ.get("WHICH_PYTHON", "tritondbg's own"), float(x.sum()))
''')


def _wrapper(folder, name, tag, *flags):
    """An executable ``name`` in ``folder`` that runs this Python (with ``flags``), telling the program its ``tag``."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\nWHICH_PYTHON={tag} exec {sys.executable} {' '.join(flags)} \"$@\"\n")
    path.chmod(0o755)
    return path


def test_the_python_on_path_runs_the_program_when_it_has_triton(cli_env, tmp_path):
    (tmp_path / "prog.py").write_text(PROG)
    _wrapper(tmp_path / "bin", "python", "path")
    env = dict(cli_env, PATH=f"{tmp_path / 'bin'}{os.pathsep}{cli_env['PATH']}")
    p = run_cli(["interpret", "--", "python", "prog.py"], env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ran by path 20.0" in p.stdout, (p.stdout, p.stderr[-2000:])
    assert "tritondbg's own Python" not in p.stderr


def test_a_path_python_without_triton_is_passed_over_with_a_note(cli_env, tmp_path):
    (tmp_path / "prog.py").write_text(PROG)
    _wrapper(tmp_path / "bin", "python", "path", "-S")  # -S: no site-packages, so no triton
    env = dict(cli_env, PATH=f"{tmp_path / 'bin'}{os.pathsep}{cli_env['PATH']}")
    p = run_cli(["interpret", "--", "python", "prog.py"], env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ran by tritondbg's own 20.0" in p.stdout, (p.stdout, p.stderr[-2000:])
    note = [ln for ln in p.stderr.splitlines() if "on your PATH" in ln]
    assert len(note) == 1 and "has no triton" in note[0] and str(tmp_path / "bin" / "python") in note[0], p.stderr
    assert sys.executable in note[0], note


def test_a_console_script_on_path_runs_when_its_python_can(monkeypatch, tmp_path):
    """``pytest`` / ``torchrun`` after the --: the PATH one whose ``#!`` Python has triton, else the one beside
    tritondbg's Python, with a note."""
    from tritondbg.program import launcher

    own = _wrapper(tmp_path / "own", "python", "own")
    good = _wrapper(tmp_path / "good", "python", "good")
    bad = _wrapper(tmp_path / "bad", "python", "bad", "-S")
    for folder, py in (("own", own), ("good", good), ("bad", bad)):
        (tmp_path / folder / "tool-s58").write_text(f"#!{py}\nprint('tool')\n")
        (tmp_path / folder / "tool-s58").chmod(0o755)
    path = os.environ["PATH"]
    monkeypatch.setattr(sys, "executable", str(own))  # tritondbg's Python: its folder holds the venv's scripts
    monkeypatch.setenv("PATH", f"{tmp_path / 'good'}{os.pathsep}{path}")
    assert launcher.resolve(["tool-s58"]) == [str(tmp_path / "good" / "tool-s58")] and not launcher._notes
    monkeypatch.setenv("PATH", f"{tmp_path / 'bad'}{os.pathsep}{path}")
    assert launcher.resolve(["tool-s58"]) == [str(tmp_path / "own" / "tool-s58")]
    assert len(launcher._notes) == 1 and "has no triton" in launcher._notes[0], launcher._notes
    monkeypatch.setenv("PATH", path)  # none on PATH: the one beside
    assert launcher.resolve(["tool-s58"]) == [str(tmp_path / "own" / "tool-s58")] and not launcher._notes


def test_a_program_that_turns_the_interpreter_off_is_interpreted_and_told(cli_env, tmp_path):
    """helper-132: a program that sets TRITON_INTERPRET=0 itself (for its own GPU runs) had its kernels compiled for
    a GPU under `tritondbg interpret` ("0 active drivers", a kernel_error) with a note about is_available()."""
    (tmp_path / "prog.py").write_text('import os\nos.environ["TRITON_INTERPRET"] = "0"\n' + PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "20.0" in p.stdout, (p.stdout, p.stderr[-3000:])
    assert "kernel_error" not in p.stderr and "active drivers" not in p.stderr, p.stderr[-3000:]
    assert "note: the program set TRITON_INTERPRET='0' before importing torch / triton: `tritondbg interpret` set " \
        "it back to 1" in p.stderr, p.stderr[-3000:]
