"""``torch.version.cuda`` as the program reads it under ``interpret -- CMD``: a CUDA version, where torch's CPU
build says None.

Libraries and test suites decide by it: lmdeploy's ``is_bf16_supported`` (its bf16 tests skipped without a word,
helper-135), FBGEMM's fp8 row GEMM (its ROCm branch and fnuz fp8 types on None, helper-138), ColossalAI's kernel
tests (``version.parse(torch.version.cuda)`` at import: InvalidVersion, every test module failed, helper-142). So
code outside torch, Triton and tritondbg reads ``ANSWER`` while the stand-in's target is an NVIDIA GPU (None under
``--arch gfx942``, as a ROCm build says); torch's own reads (torch.compile's, cpp_extension's) keep None, so torch
does not go after CUDA binaries. The first reads are kept, and the run's note names the first (``note``).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

ANSWER = "12.8"  # a CUDA that builds for every target the stand-in takes (sm_75 .. sm_120)
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
        f = sys._getframe(1)  # the code that read it: torch's own reads (torch.compile's) are not the program's
        if value is None and not f.f_code.co_filename.startswith(_state["skip"]) and _nvidia_target():
            site = f"{f.f_code.co_filename}:{f.f_lineno}"
            if len(_state["reads"]) < 8 and site not in _state["reads"] and not site.startswith("<"):
                _state["reads"].append(site)
            return ANSWER
        return value

    @cuda.setter
    def cuda(self, value):
        self.__dict__["cuda"] = value


def _nvidia_target() -> bool:
    standin = sys.modules.get("tritondbg.standin")
    arch = standin.current() if standin is not None else None
    return arch is not None and arch.backend == "cuda"


def reads() -> list[str]:
    """file:line of each place outside torch, Triton and tritondbg that read torch.version.cuda (answered)."""
    return list(_state["reads"])


def note(summaries) -> str | None:
    """The run's line on it, over the program's processes' summaries (``cuda_version_read``), or None."""
    sites = list(dict.fromkeys(s for summary in summaries for s in summary.get("cuda_version_read", ())))
    if not sites:
        return None
    from tritondbg.interp.frames import short_path

    file, _, line = sites[0].rpartition(":")
    more = f" (and {len(sites) - 1} more place(s))" if len(sites) > 1 else ""
    return (f"the program read torch.version.cuda at {short_path(file)}:{line}{more}: the stand-in answered "
            f"{ANSWER!r} (torch's CPU build says None), so what it decides by it (a bf16 or fp8 support check, a "
            "test's skipif) took its CUDA path, as on a GPU")
