"""Where the program read ``torch.version.cuda`` and heard None (torch's CPU build, under ``interpret -- CMD``).

Libraries decide by it beside ``torch.cuda.is_available()``: lmdeploy's ``is_bf16_supported`` reads it, so its bf16
tests skipped without a word under tritondbg (helper-135), though the interpreter runs bf16 kernels. The value is
left None (a CUDA version string would send libraries after CUDA binaries that are not there); the first reads
outside torch, Triton and tritondbg are kept, and the run's note names the first (``note``).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

_state: dict = {"reads": []}


def install(torch) -> None:
    """Record the reads of ``torch.version.cuda`` while it is None (idempotent)."""
    version = getattr(torch, "version", None)
    if version is None or getattr(version, "cuda", "") is not None or isinstance(version, _Recording):
        return
    spec = importlib.util.find_spec("triton")
    skip = tuple(os.path.dirname(p) + os.sep for p in (torch.__file__, spec and spec.origin,
                                                        os.path.dirname(__file__)) if p)  # tritondbg/
    _state["skip"] = skip
    version.__class__ = _Recording


class _Recording(types.ModuleType):
    @property
    def cuda(self):
        value = self.__dict__.get("cuda")
        if value is None and len(_state["reads"]) < 8:
            f = sys._getframe(1)  # the code that read it: torch's own reads (torch.compile's) are not the program's
            if not f.f_code.co_filename.startswith(_state["skip"]) and not f.f_code.co_filename.startswith("<"):
                site = f"{f.f_code.co_filename}:{f.f_lineno}"
                if site not in _state["reads"]:
                    _state["reads"].append(site)
        return value

    @cuda.setter
    def cuda(self, value):
        self.__dict__["cuda"] = value


def reads() -> list[str]:
    """file:line of each place outside torch, Triton and tritondbg that read torch.version.cuda (None)."""
    return list(_state["reads"])


def note(summaries) -> str | None:
    """The run's line on it, over the program's processes' summaries (``cuda_version_read``), or None."""
    sites = list(dict.fromkeys(s for summary in summaries for s in summary.get("cuda_version_read", ())))
    if not sites:
        return None
    from tritondbg.interp.frames import short_path

    file, _, line = sites[0].rpartition(":")
    more = f" (and {len(sites) - 1} more place(s))" if len(sites) > 1 else ""
    return (f"the program read torch.version.cuda at {short_path(file)}:{line}{more} and got None (torch's CPU "
            "build here): what it decides by it (a bf16 or fp8 support check, a test's skipif) took its no-CUDA "
            "path, and tests that skip on it, if any, were skipped, though the interpreter runs bf16 kernels")
