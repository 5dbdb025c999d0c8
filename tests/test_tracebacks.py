"""program/tracebacks.py: the frames a program's traceback leaves out (tritondbg's own, and torch's dispatch into
tritondbg's torch function modes)."""
from __future__ import annotations

import os

from tritondbg.program import tracebacks


def _frames(exc) -> list[str]:
    out, tb = [], exc.__traceback__
    while tb is not None:
        out.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return out


def _interrupted(entry: str, *defs: tuple[str, str]) -> KeyboardInterrupt:
    """A KeyboardInterrupt raised under ``entry``, through functions ``defs`` ((source, file name)) defined in
    files of those names, as Python's traceback sees them."""
    ns: dict = {}
    for source, filename in defs:
        exec(compile(source, filename, "exec"), ns)

    def user_body():
        raise KeyboardInterrupt

    try:
        ns[entry](user_body)
    except KeyboardInterrupt as exc:
        return exc
    raise AssertionError("no interrupt")


def test_torch_dispatch_into_a_tritondbg_mode_is_left_out_and_the_programs_frames_stay(tmp_path):
    """helper-107: a Ctrl-C's traceback showed ``overrides.py handle_torch_function`` and the mode twice."""
    caught = _interrupted(
        "program_op",
        ("def mode_call(f):\n    return f()\n", os.path.join(tracebacks.ROOT, "program", "fake_mode.py")),
        ("def handle_torch_function(f):\n    return mode_call(f)\n", os.path.join(str(tmp_path), "torch", "overrides.py")),
        ("def program_op(f):\n    return handle_torch_function(f)\n", os.path.join(str(tmp_path), "prog.py")))
    assert _frames(caught)[-4:] == ["program_op", "handle_torch_function", "mode_call", "user_body"]
    tracebacks.strip(caught)
    names = _frames(caught)
    assert "handle_torch_function" not in names and "mode_call" not in names, names
    assert names[-2:] == ["program_op", "user_body"], names


def test_torch_dispatch_not_into_tritondbg_stays(tmp_path):
    caught = _interrupted(
        "handle_torch_function",
        ("def handle_torch_function(f):\n    return f()\n", os.path.join(str(tmp_path), "torch", "overrides.py")))
    tracebacks.strip(caught)
    assert _frames(caught)[-2:] == ["handle_torch_function", "user_body"]
