"""The name tritondbg gives each kernel of a program: its ``__name__``, unless another kernel took it first."""
from __future__ import annotations

import os

_names: dict[tuple, str] = {}   # (file, qualname) of a kernel function -> the name tritondbg gives it
_named: dict[str, tuple] = {}   # that name -> the kernel it was given to


def module_name(inner) -> str:
    """``NAME__MODULE``: the kernel's ``__name__`` and the last part of its module's, as an identifier."""
    name = getattr(inner, "__name__", None) or "?"
    code = getattr(inner, "__code__", None)
    module = str(getattr(inner, "__module__", None) or
                 os.path.splitext(os.path.basename(code.co_filename if code is not None else "?"))[0])
    return f"{name}__{''.join(c if c.isalnum() or c == '_' else '_' for c in module.rsplit('.', 1)[-1])}"


def display_name(inner) -> str:
    """The kernel function's ``__name__``, or, where another kernel of the program (another file or scope) took
    that name first, ``NAME__MODULE`` (helper-88: lightllm defines ``_fwd_kernel`` ten times; two of them were one
    kernel in the summary, and capture kept the first one's reproducer only). An identifier: reproducers are named
    after it."""
    name = getattr(inner, "__name__", None) or "?"
    code = getattr(inner, "__code__", None)
    key = (code.co_filename if code is not None else "?", getattr(inner, "__qualname__", name))
    given = _names.get(key)
    if given is not None:
        return given
    given = name
    if _named.get(name, key) != key:
        given = module_name(inner)
        n = 1
        while _named.get(given, key) != key:
            n += 1
            given = f"{name}__{n}"
    _names[key], _named[given] = given, key
    return given
