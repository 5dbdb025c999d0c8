"""The program's frames above a launch (program mode): which of them are the program's own code, and how a
finding names the launch site (``describe_site``). attach.py records ``user_stack()`` on each ``Launch``.

Left out of a launch's stack: Triton's and tritondbg's own frames, torch.compile's machinery between a compiled
model's call and its kernels' launch, and a library's launch plumbing (methods of its autotuner or heuristics
subclasses). This module imports neither torch nor triton at import time (attach.py is imported at the child's
startup).
"""
from __future__ import annotations

import os
import sys

_SKIP_DIRS: list[str] = []
kernel_interface: tuple = ()  # Triton's KernelInterface (kernels, autotuners, heuristics): set by attach.install


def _skip_dirs() -> list[str]:
    if not _SKIP_DIRS:
        import triton

        import tritondbg

        # Triton's frames and tritondbg's own (its wrappers: the CPU stand-in, shims); not its bundled kernels.
        # torch.compile's machinery between a compiled model's call and its kernels' launch (dynamo, Inductor's
        # runtime, fx), so that the frames kept reach the user's code.
        _SKIP_DIRS.extend([os.path.dirname(os.path.abspath(triton.__file__)) + os.sep,
                           os.path.dirname(os.path.abspath(tritondbg.__file__)) + os.sep])
        torch = sys.modules.get("torch")
        if torch is not None and getattr(torch, "__file__", None):
            root = os.path.dirname(os.path.abspath(torch.__file__))
            _SKIP_DIRS.extend(os.path.join(root, d) + os.sep for d in ("_dynamo", "_inductor", "fx", "_functorch",
                                                                        "_library", "_higher_order_ops"))
            # a custom op's dispatch (torch.library.triton_op / custom_op: torchao's kernels)
            _SKIP_DIRS.extend(os.path.join(root, f) for f in ("_ops.py", "_compile.py"))
    return _SKIP_DIRS


_PLUMBING = frozenset({"run", "__call__", "_bench", "warmup", "prune_configs"})  # a kernel wrapper's own methods


_INLINE = ("<string>", "<stdin>")


def user_stack(limit: int = 8) -> list[tuple[str, int, str]]:
    """The frames of the program above the launch (Triton's and tritondbg's own frames left out, and a library's
    launch plumbing: methods of its autotuner or heuristics subclasses, e.g. flash-linear-attention's
    ``CachedAutotuner.run``, which would otherwise be named as the launch site)."""
    skip = tuple(_skip_dirs())
    out = []
    f = sys._getframe(2)
    while f is not None:
        fname = f.f_code.co_filename
        path = os.path.abspath(fname)
        code = f.f_code
        plumbing = code.co_name in _PLUMBING and code.co_varnames[:1] == ("self",) \
            and isinstance(f.f_locals.get("self"), kernel_interface)
        own = fname in _INLINE  # `python -c CODE`, a script piped in: the program's own code has no file
        if (own or not path.startswith(skip) and not fname.startswith("<")) and not plumbing:
            frame = (fname if own else path, f.f_lineno, f.f_code.co_name)
            if len(out) < limit:
                out.append(frame)
                if len(out) == limit and program_frame(out) is not None:
                    break
            elif program_frame([frame]) is not None:  # a library's call deeper than ``limit``: its caller still
                out[-1] = frame                       # ends the stack (fla's chunk_gla named only fla's frames)
                break
        f = f.f_back
    return out


def short_stack(stack, n: int = 6) -> list:
    """The first ``n`` frames of a launch's stack, the program's own frame kept when it is further up."""
    head = [list(s) for s in stack[:n]]
    mine = program_frame(stack)
    if mine is not None and program_frame(head) is None and head:
        head[-1] = list(mine)
    return head


def program_frame(stack) -> tuple[str, int, str] | None:
    """The first frame of the user's own code: not in an installed package (site-packages), not tritondbg's."""
    import tritondbg

    ours = os.path.dirname(os.path.dirname(os.path.abspath(tritondbg.__file__))) + os.sep
    from tritondbg.program.inductor import is_generated

    for frame in stack:
        path = os.path.abspath(frame[0])
        if "-packages" + os.sep in path or path.startswith(ours + "tritondbg" + os.sep) \
                or path.startswith(ours + "kernels" + os.sep) or is_generated(path):
            continue
        return tuple(frame)
    return None


def describe_site(stack) -> str:
    """``file:line (function)`` of the launching frame, and of the user's frame above it when different."""
    if not stack:
        return "?"
    first = tuple(stack[0])
    text = f"{_normal(first[0])}:{first[1]} ({first[2]})"
    mine = program_frame(stack)
    if mine is not None and mine != first:
        text += f" <- {_normal(mine[0])}:{mine[1]} ({mine[2]})"
    return text


def _normal(path) -> str:
    """``drv/../pkg/x.py`` as ``pkg/x.py`` (a sys.path entry with ``..`` in it: helper-97)."""
    return os.path.normpath(path) if isinstance(path, str) and not path.startswith("<") else str(path)
