"""Error types the CLI turns into one clear line and an exit status, and where an error is: ``not_users_file``,
``installed_path``; ``short_blocks`` for an error text that prints whole blocks; ``version_hint`` for what this
Triton lacks."""
from __future__ import annotations

import os
import re
import sys


class UsageError(Exception):
    """Bad input from the user (unknown kernel, case, config, file): exit status 2."""

    exit_code = 2


class ScenarioCodeError(Exception):
    """A scenario's own callable (``make_inputs``) raised, or returned what it must not: the message is the one line
    every command says (``runner.build_inputs``: `check`, `interpret`, `run`, `ir`)."""


class KernelError(Exception):
    """A mixin: an error of the kernel's own code (a failed device_assert, a combine function with no ``return``, a
    lock nothing wrote) that tritondbg's interpreter raises for it from its own frames. A traceback keeps the
    program's and the kernel's frames and leaves tritondbg's out, as for an error Triton raises
    (``program/tracebacks.py``; an error of tritondbg itself keeps them all)."""


class ModeError(RuntimeError):
    """Interpreted and compiled execution mixed in one process (TRITON_INTERPRET is read at @triton.jit time)."""


def not_users_file(path: str) -> bool:
    """Frames of Python itself, installed packages and tritondbg's own code: not where a user's error or hang is
    (the innermost frame outside them is what an error line names)."""
    if str(path).startswith("<"):  # <string> (a dataclass's generated __init__), <frozen ...>, <stdin>
        return True
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    path = os.path.abspath(path)
    return (path.startswith(here) or "site-packages" in path or "dist-packages" in path
            or path.startswith(os.path.dirname(os.__file__) + os.sep)
            # the console scripts beside the interpreter (bin/tritondbg: helper-75's --timeout named its line 8)
            or os.path.dirname(path) == os.path.dirname(os.path.abspath(sys.executable)))


def raised_in(tb) -> str | None:
    """The file of a traceback's innermost frame: where the error was raised."""
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last


def installed_path(path: str) -> str | None:
    """The path of ``path`` inside the site-packages (or dist-packages) folder it is installed in, else None:
    ``fla/ops/gla/chunk.py`` for .../site-packages/fla/ops/gla/chunk.py."""
    path = str(path)
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        at = path.rfind(marker)
        if at >= 0:
            return path[at + len(marker):]
    return None


class PytestCalled(Exception):
    """pytest.skip / xfail / fail raised by a scenario's code (a helper shared with the user's tests): their
    exceptions are BaseExceptions, which ended a run with a traceback wall and a check item with no reason."""


def pytest_outcome(exc: BaseException) -> str | None:
    """``pytest.skip('why')`` for pytest's skip / xfail / fail exceptions, else None (no pytest import)."""
    kinds = {"Skipped": "skip", "XFailed": "xfail", "Failed": "fail"}
    if not any(c.__name__ == "OutcomeException" and c.__module__ == "_pytest.outcomes" for c in type(exc).__mro__):
        return None
    msg = getattr(exc, "msg", None) or str(exc)
    return f"pytest.{kinds.get(type(exc).__name__, type(exc).__name__)}({msg!r})"


def short_blocks(text: str) -> str:
    """``text`` with each numpy array's repr (``array([0.74, -1.44, ...], dtype=float32)``, a whole block over many
    lines) cut to ``array(<32 float32 values>)``: an error about a tuple of blocks printed both in full."""
    out, i = [], 0
    while (j := text.find("array([", i)) >= 0:
        depth, k = 0, j + len("array")
        while k < len(text):
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        seg = text[j:k + 1]
        m = re.search(r"dtype=(\w+)\)$", seg)
        body = seg[len("array(["):].rsplit("]", 1)[0]
        n = len([v for v in re.split(r"(?:[\s,\[\]]|\\n)+", body) if v and v != "..."])
        out.append(text[i:j] + f"array(<{n}{'+' if '...' in body else ''} {m.group(1) if m else 'float64'} values>)")
        i = k + 1
    return "".join(out) + text[i:]


def version_hint(detail: str) -> str:
    """What to do when this Triton lacks what the kernel uses (helper-94: native-sparse-attention's
    ``tl.make_block_ptr`` under Triton 3.9 said only "Block pointers have been removed ...")."""
    if "Block pointers have been removed" in detail:
        import triton

        return (f"this Triton ({triton.__version__}) has no tl.make_block_ptr: run the kernel with Triton 3.8 or older "
                "(pip install 'triton<3.9'), or port it to tl.make_tensor_descriptor")
    m = re.search(r"module 'triton\.language\.math' has no attribute '(\w+)'", detail)
    if m:  # (helper-117: matmulfreellm's tl.math.round, from Triton 2)
        from triton.language.extra import libdevice

        name = m.group(1)
        if hasattr(libdevice, name):
            import triton

            extra = " (round half away from zero; libdevice.rint rounds half to even)" if name == "round" else ""
            return (f"this Triton ({triton.__version__}) has no tl.math.{name}: its libdevice has it, "
                    f"`from triton.language.extra import libdevice`, then libdevice.{name}(x){extra}")
    if "module 'triton.language' has no attribute 'libdevice'" in detail:  # (helper-139: kernl, from Triton 2.0)
        import triton

        return (f"this Triton ({triton.__version__}) has no tl.libdevice (Triton 2.0's): `from triton.language.extra "
                "import libdevice`, then libdevice.NAME(x) (tanh, erf, rsqrt, pow, ...)")
    if re.search(r"No module named 'triton\.ops\b", detail):  # (helper-139: kernl's triton.ops.matmul_perf_model)
        import triton

        return (f"this Triton ({triton.__version__}) has no triton.ops (matmul, matmul_perf_model, blocksparse: "
                "removed in Triton 3.0): run the program with Triton 2.x, or copy the module it needs from Triton "
                "2.3's triton/ops into the program")
    return ""
