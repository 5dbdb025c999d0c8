"""The run folder and the torch.profiler session that writes a trace into it.

A run folder is built under a hidden name, ``<out>/.<name>.partial``, and renamed to ``<out>/<name>`` only
when the whole run is done, so ``tensorboard --logdir <out>`` never shows a half-written run. TensorBoard
and torch-tb-profiler both walk hidden folders too (checked: tensorboard 2.21 io_wrapper, torch-tb-profiler
0.4.3 plugin.py), so the hidden name alone is not enough:
- traces are written as ``<worker>.<ns>.pt.trace.json.partial`` (the plugin lists ``*.pt.trace.json``
  only) and get their final name at commit;
- TensorBoard event files are written last, in the second before the commit;
- Ctrl-C and SIGTERM remove the partial folder; a folder left by a killed run (SIGKILL) is removed by the
  next profile run in the same output folder (its process id, the last part of the name, is gone).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

from tritondbg import stops

PARTIAL = ".partial"
_TRACE_SUFFIX = ".pt.trace.json"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def sweep_stale(base: Path) -> list[Path]:
    """Remove ``.<name>-<pid>.partial`` folders under ``base`` whose process is gone; returns them."""
    removed = []
    if not base.is_dir():
        return removed
    for p in base.iterdir():
        m = re.fullmatch(r"\..*-(\d+)" + re.escape(PARTIAL), p.name)
        if p.is_dir() and m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


class RunFolder:
    """A run folder written atomically: use as a context manager, call ``commit()`` when complete."""

    def __init__(self, final: Path):
        self.final = Path(final)
        self.partial = self.final.parent / f".{self.final.name}{PARTIAL}"
        self.committed = False
        self._noting = stops.noting()

    @property
    def path(self) -> Path:
        """Where files go now: the partial folder until committed, then the final one."""
        return self.final if self.committed else self.partial

    def __enter__(self) -> "RunFolder":
        self.final.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(self.final.parent)
        if self.final.exists():
            raise FileExistsError(f"run folder {self.final} already exists")
        self.partial.mkdir()
        # SIGTERM (kill, a CI timeout) and Ctrl-C become a noted KeyboardInterrupt: __exit__ removes the partial folder
        self._noting.__enter__()
        return self

    def commit(self) -> Path:
        """Give traces their final names, then rename the folder: the run appears in one step."""
        for p in self.partial.rglob("*" + PARTIAL):
            os.replace(p, p.with_name(p.name[: -len(PARTIAL)]))
        os.replace(self.partial, self.final)
        self.committed = True
        return self.final

    def __exit__(self, exc_type, exc, tb) -> None:
        self._noting.__exit__(exc_type, exc, tb)
        if not self.committed:
            shutil.rmtree(self.partial, ignore_errors=True)


# a run folder's handler, and what a case calls on an error caught while its interrupt unwound (``tritondbg.stops``)
_raise_interrupt, reraise_if_terminated = stops.handler, stops.reraise


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM that arrive within the block act when it ends (main thread only). For the torch
    profiler's start and stop: a KeyboardInterrupt raised between the Python steps of its stop (disable,
    collect, export the trace) leaves the profiler half stopped, and the process can then die of SIGSEGV at
    exit instead of exiting 130 (seen once in CI, ``test_real_profile_run_killed_midway...``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        if got:  # delivered again, now to the handler the block held back (Python's raise KeyboardInterrupt)
            signal.raise_signal(got[0])


def cuda_tool_attached() -> bool:
    """True under ncu/compute-sanitizer/nsys: they inject through CUDA_INJECTION64_PATH and hold CUPTI."""
    return bool(os.environ.get("CUDA_INJECTION64_PATH"))


def activities(cuda: bool) -> list:
    """CPU always; CUDA when the run is on a GPU and no other CUDA tool holds CUPTI (it takes one subscriber)."""
    from torch.profiler import ProfilerActivity

    acts = [ProfilerActivity.CPU]
    if cuda and not cuda_tool_attached():
        acts.append(ProfilerActivity.CUDA)
    return acts


def _handler(folder: Path, worker: str, written: list[str]):
    """tensorboard_trace_handler's naming (``<worker>.<ns>.pt.trace.json``) plus ``.partial`` until commit."""

    def handler(prof) -> None:
        name = f"{worker}.{time.time_ns()}{_TRACE_SUFFIX}"
        prof.export_chrome_trace(str(folder / (name + PARTIAL)))
        written.append(name)

    return handler


def worker_name(*parts: str) -> str:
    """A worker name the profiler plugin shows as is: no dots (its file-name pattern splits on them)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", "-".join(parts))


@contextlib.contextmanager
def trace_session(folder: Path, worker: str, *, cuda: bool) -> Iterator["TraceSession"]:
    """A torch.profiler session (record_shapes) whose trace lands in ``folder`` when the block ends."""
    import torch

    quiet_kineto()
    written: list[str] = []
    kept: list[str] = []
    with keeping_profiler_warnings(kept):
        prof = torch.profiler.profile(activities=activities(cuda), record_shapes=True,
                                      on_trace_ready=_handler(folder, worker, written))
        session = TraceSession(prof, written)
        try:
            with signals_deferred(), no_lazy_inductor(torch):  # `with prof:` in two halves: its start
                prof.__enter__()                                  # without importing inductor
            try:
                yield session
            finally:
                with signals_deferred():
                    prof.__exit__(*sys.exc_info())
        finally:
            session.warnings = kept
    session.file = written[-1] if written else None


@contextlib.contextmanager
def keeping_profiler_warnings(kept: list[str]) -> Iterator[None]:
    """Within the block, the torch profiler's own warnings go to ``kept`` (the record), not the console; every
    other warning is shown as the filters say. No "always" filter and no list of every warning: a kernel under
    the interpreter can warn millions of times (memory grew past 9 GB in the test suite when each was kept)."""
    import warnings

    with warnings.catch_warnings():
        warnings.showwarning = _showwarning_keeping_profilers(warnings.showwarning, kept)
        yield


_PROFILER_FILES = ("torch/profiler/", "torch/autograd/profiler", "torch\\profiler\\", "torch\\autograd\\profiler")
_KEEP_AT_MOST = 50


def _showwarning_keeping_profilers(show, kept: list[str]):
    """A ``warnings.showwarning`` that keeps the torch profiler's own warnings (raised in torch/profiler or
    torch/autograd/profiler, C++ ones included) in ``kept`` (at most 50) and hands any other warning (the
    kernel's, the user's) to ``show``."""

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if any(p in (filename or "") for p in _PROFILER_FILES):
            if len(kept) < _KEEP_AT_MOST:
                kept.append(f"{category.__name__}: {message}")
        else:
            show(message, category, filename, lineno, file, line)

    return showwarning


@contextlib.contextmanager
def no_lazy_inductor(torch):
    """torch.profiler's ``prepare_trace`` asks ``hasattr(torch, "_inductor")`` (to read inductor's cudagraphs
    setting), and that imports inductor and dynamo: 1.5 s on the CPU dev machine, in a program that may never
    use them. While ours starts, a torch._inductor not imported yet reads as absent (its setting's default,
    no cudagraphs, is what the profiler then assumes); a program that imported inductor is left as it is."""
    orig = torch.__dict__.get("__getattr__")
    if "torch._inductor" in sys.modules or orig is None:
        yield
        return

    def getattr_(name):
        if name == "_inductor":
            raise AttributeError(name)
        return orig(name)

    torch.__getattr__ = getattr_
    try:
        yield
    finally:
        torch.__getattr__ = orig


def quiet_kineto() -> None:
    """Kineto (torch >= 2.12 builds) prints ``USDT: ... profiler_start``/``profiler_stop`` on stderr for every
    session. Its levels are VERBOSE 0, INFO 1, WARNING 2, STAGE 3, ERROR 4, USDT 5: only 6 hides the USDT lines
    (read when a session starts, so setting it here works). A KINETO_LOG_LEVEL the user set is kept."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")


class TraceSession:
    """The live profiler plus, after the block, the trace's file name (relative to the run folder)."""

    def __init__(self, prof, written: list[str]):
        self.prof = prof
        self._written = written
        self.file: str | None = None
        self.warnings: list[str] = []  # the profiler's own warnings, kept out of the console

    def add_metadata(self, key: str, value) -> None:
        """Embed JSON-able ``value`` at the top level of the trace (Perfetto and the plugin keep it)."""
        import json

        self.prof.add_metadata_json(key, json.dumps(finite(value), default=str, allow_nan=False))


def finite(value):
    """``value`` with every NaN/inf float replaced by None: strict JSON (the trace viewers reject NaN)."""
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
