"""Where host code read the CPU stand-in's GPU target (``StandinDriver.get_current_target``).

aiter's arch_info.py reads ``get_current_target().arch`` at import, then looks for configs named after it: under
the default sm_90 it failed on "90-GEMM-A8W8.json" with no word that ``--arch gfx942`` was forgotten (helper-157).
The first reader outside Triton, torch and tritondbg is kept, for the note of a run that failed
(program/modes.py). Triton's own reads, one per launch, cost a look at one frame.
"""
from __future__ import annotations

import functools
import os

_reads: list = []  # (file, line)


def note(frame) -> None:
    if _reads or frame is None:
        return
    file = frame.f_code.co_filename  # the caller itself: Triton's read at each launch is no host code's
    if not file.startswith(("<", *_skipped_dirs())):
        _reads.append((os.path.abspath(file), frame.f_lineno))


@functools.lru_cache(maxsize=1)
def _skipped_dirs() -> tuple:
    import torch
    import triton

    here = os.path.dirname(os.path.abspath(__file__))
    return tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (triton, torch)) + (here + os.sep,)


def first() -> str | None:
    """file:line of the first host code that read the target, or None."""
    return f"{_reads[0][0]}:{_reads[0][1]}" if _reads else None
