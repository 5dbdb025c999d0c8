"""Limits that hold for the whole program, not per process: claims in the run folder (``capture``'s
``--max-per-kernel`` and ``--max-mb``, the reproducers' names).

A program runs its kernels in several processes (a ``multiprocessing`` pool, pytest-xdist workers, a script
that starts Python): each process has its own Capturer, so limits counted in memory held per process (N
reproducers of a kernel in each worker). A claim is a file in ``RUN_DIR/.claims/`` created with
``O_CREAT | O_EXCL``: exactly one process gets it, whichever process asks first. They are asked for on capture's
slow path only (a new signature of a kernel not yet at its limit, a launch about to be saved); once a kernel's
slots are all taken the Capturer stops watching it (its ``done`` set), so the fast path costs nothing more.

- ``first(run_dir, key)``: True for the one process that asks first (a signature saved once per program);
- ``slot(run_dir, key, limit)``: the lowest free index below ``limit``, or None (the kernel's reproducers);
- ``Budget``: bytes reserved from a total shared by the processes (a locked counter file; per process where
  ``fcntl`` is missing).

The parent (``modes.py``) removes ``.claims/`` after the program exited, and before it starts when a run folder is
used again.
"""
from __future__ import annotations

import hashlib
import os
import re

DIR = ".claims"


def key_of(*parts) -> str:
    """A file name for ``parts`` (a kernel's module and qualname, a signature): readable head, hashed tail."""
    text = "\x00".join(str(p) for p in parts)
    head = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(parts[-1]))[:40] if parts else ""
    return f"{head}-{hashlib.sha1(text.encode()).hexdigest()[:16]}"


def first(run_dir: str, key: str) -> bool:
    """Whether this process is the first of the program to claim ``key`` (the claim is kept)."""
    path = os.path.join(run_dir, DIR, key)
    for attempt in (0, 1):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return True
        except FileExistsError:
            return False
        except FileNotFoundError:
            if attempt or not _make_dir(run_dir):
                return True   # no run folder: nothing shared to respect, behave as one process
        except OSError:
            return True       # a folder claims cannot be written in: per process, as before
    return True


def release(run_dir: str, key: str) -> None:
    """Give up a claim this process made (``first``): a launch that turned out not to be the program's."""
    try:
        os.remove(os.path.join(run_dir, DIR, key))
    except OSError:
        pass


def _make_dir(run_dir: str) -> bool:
    """``RUN_DIR/.claims`` made when missing; never the run folder itself (False when it does not exist)."""
    try:
        os.mkdir(os.path.join(run_dir, DIR))
    except FileExistsError:
        pass
    except OSError:
        return False
    return True


def slot(run_dir: str, key: str, limit: int, start: int = 0) -> int | None:
    """The lowest index in [start, limit) this process claims for ``key``, or None when all are taken."""
    for i in range(start, limit):
        if first(run_dir, f"{key}.{i}"):
            return i
    return None


class Budget:
    """``total`` bytes shared by the program's processes: ``reserve(n)`` takes n if they fit, ``give_back(n)``
    returns some. The counter is a file under ``.claims/`` read and written under ``fcntl.flock``."""

    def __init__(self, run_dir: str, total: float):
        self.run_dir = run_dir
        self.path = os.path.join(run_dir, DIR, "bytes")
        self.total = float(total)
        self.local = 0.0          # without fcntl or a writable folder: this process's own count

    def _open(self) -> int | None:
        for attempt in (0, 1):
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:
                if attempt or not _make_dir(self.run_dir):
                    return None
            except OSError:
                return None
        return None

    def _update(self, change):
        """Apply ``change(used) -> new used or None`` to the shared counter; returns the new value or None."""
        try:
            import fcntl
        except ImportError:
            fcntl = None
        if fcntl is not None:
            fd = self._open()
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    raw = os.pread(fd, 64, 0).strip()
                    try:
                        used = float(raw or 0)
                    except ValueError:
                        used = 0.0
                    new = change(used)
                    if new is not None:
                        data = repr(float(new)).encode()
                        os.pwrite(fd, data.ljust(64), 0)
                    return new
                finally:
                    os.close(fd)     # closing releases the lock
        new = change(self.local)
        if new is not None:
            self.local = new
        return new

    def reserve(self, nbytes: float) -> bool:
        return self._update(lambda used: used + nbytes if used + nbytes <= self.total else None) is not None

    def give_back(self, nbytes: float) -> None:
        if nbytes > 0:
            self._update(lambda used: max(0.0, used - nbytes))

    def used(self) -> float:
        value = self._update(lambda used: used)
        return float(value or 0.0)
