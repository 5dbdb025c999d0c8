"""Where the program asked ``torch.cuda.is_available()`` and heard False (no GPU here, under ``interpret -- CMD``).

The answer stays False; the sites that asked are kept (the first caller outside torch, Triton, tritondbg and
Python's own code), for the run's note (``asked``) and for the hint on an error a library's CPU branch then raises
(``library_asked``: Liger-Kernel's DyT backward has none, ``UnboundLocalError: NUM_SMS``).
"""
from __future__ import annotations

import os
import sys

_state: dict = {"asks": [], "ask_callers": {}}

_COMPILERS = tuple(os.sep + d + os.sep for d in ("_dynamo", "_inductor"))  # torch.compile's packages (asks of its own)


def record(torch) -> None:
    """``torch.cuda.is_available()`` stays False; where a library first asked it is kept (file, line, function of
    the first caller outside torch), for the hint on an error its CPU branch then raises (``library_asked``)."""
    import importlib.util
    import sysconfig

    original = torch.cuda.is_available
    # torch's own asks are not a library's, nor Triton's driver asking for one (a library that calls
    # ``driver.is_active()``: DeepSpeed turns its Triton ops off on it, helper-64); triton is not imported here
    spec = importlib.util.find_spec("triton")  # (tritondbg's own frames neither: its torch.load, cpu_fallbacks.py)
    skip = tuple(os.path.dirname(p) + os.sep for p in (torch.__file__, spec and spec.origin, os.path.dirname(__file__))
                 if p)
    stdlib = sysconfig.get_paths()["stdlib"] + os.sep

    def skip_file(file: str) -> bool:
        """torch's, Triton's, tritondbg's, and Python's own (contextlib's: a decorator's ask), not site-packages
        (a Python without a venv keeps them under its stdlib folder)."""
        return file.startswith(skip) or (file.startswith(stdlib) and "-packages" + os.sep not in file)

    def is_available(*args, **kwargs):
        answer = original(*args, **kwargs)
        asks = _state["asks"]
        if not answer and len(asks) < 16:  # every site that asked (a test's skipif after a library's import)
            f, compiling = sys._getframe(1), False
            while f is not None and skip_file(f.f_code.co_filename):
                compiling = compiling or any(d in f.f_code.co_filename for d in _COMPILERS)
                f = f.f_back
            if compiling:  # torch.compile's own ask, not the program's (helper-100: the note named the line that
                return answer  # called a compiled function)
            site = (f.f_code.co_filename, f.f_lineno, f.f_code.co_name) if f is not None else None
            if site is not None and site not in asks:
                asks.append(site)
            if site is not None:  # the functions it was asked under (module bodies aside: an import is no call)
                callers = _state["ask_callers"].setdefault(site, set())
                for _ in range(40):
                    if f is None:
                        break
                    if f.f_code.co_name != "<module>":
                        callers.add(f.f_code)
                    f = f.f_back
        return answer

    is_available.__wrapped__ = original  # (tritondbg's own asks: no site recorded)
    torch.cuda.is_available = is_available


def library_asked(tb) -> tuple[str, int, str] | None:
    """Where the program asked ``torch.cuda.is_available()`` (and heard False), when an error's traceback ``tb``
    ends in the same installed package and runs through a function that was on the stack when it asked: that
    package likely chose its CPU branch by the answer (Liger-Kernel's DyT backward has none: ``UnboundLocalError:
    NUM_SMS``). An ask at import time (FlagGems' get_arch) explains no later error."""
    from tritondbg.errors import raised_in

    last = raised_in(tb)
    package = _package(last) if last else None
    failed = set()  # the functions the error went through: the answer matters to it only if one of them asked
    while tb is not None:  # (FlagGems asks at import; its later errors were blamed on that answer)
        failed.add(tb.tb_frame.f_code)
        tb = tb.tb_next
    callers = _state["ask_callers"]
    return next((a for a in _state["asks"] if package and _package(a[0]) == package
                 and failed & callers.get(a, set())), None)


def _package(file: str) -> str | None:
    """The top-level package of an installed file (``liger_kernel`` of .../site-packages/liger_kernel/...)."""
    from tritondbg.errors import installed_path

    inside = installed_path(file)
    return inside.split(os.sep, 1)[0] if inside else None


def asked() -> str | None:
    """file:line of the first caller outside torch that asked ``torch.cuda.is_available()`` (False), or None."""
    from tritondbg.errors import not_users_file

    asks = _state["asks"]  # a test file's ask first (its skipif / skipUnless: helper-149, torchtitan's tests named
    # the library probe its import ran first), then the program's own, else a library's
    tests = [a for a in asks if os.path.basename(a[0]).startswith("test_") or a[0].endswith("_test.py")]
    where = next(iter(tests), None) or next((a for a in asks if not not_users_file(a[0])), asks[0] if asks else None)
    return f"{where[0]}:{where[1]}" if where else None
