"""The observer of `tritondbg capture -- CMD`: which of the program's launches are saved (``capture.py`` writes them).

A signature is distinct by tensor dtype/shape/strides/device, integer values, the grid and the config.
After ``max_per_kernel`` saved launches of a kernel its later distinct launches are only counted ("not saved: N
more"), and ``max_mb`` caps the data written, with a line for each launch skipped. Both limits, and "distinct",
hold for the program, not for each of its processes (a pool's workers, pytest-xdist's): ``claims.py``.
"""
from __future__ import annotations

import os
import sys
import time

from tritondbg.configs import Withdrawn
from tritondbg.errors import short_blocks
from tritondbg.program import attach, child, claims
from tritondbg.program.autotuned import will_benchmark
from tritondbg.program.capture import (capture_name, copy_after, copy_before, early_bytes, save, signature, size,
                                       snapshot)

_COUNTED_MAX = 1000  # distinct signatures of one kernel kept to count the unsaved ones


class Capturer(attach.Observer):
    """Saves the first ``max_per_kernel`` distinct launches of each kernel (``kernels``: only those), counted over
    the program's processes (``claims``)."""

    def __init__(self, cfg: dict):
        self.out_dir = cfg["run_dir"]
        self.max_per_kernel = int(cfg.get("max_per_kernel", 1))
        self.budget = float(cfg.get("max_mb", 256)) * 1e6
        self.kernels = set(cfg.get("kernels") or ())
        self.command = cfg.get("command", "")
        self.done: set[int] = set()       # kernels whose slots are taken (their new signatures are counted)
        self.ignored: set[int] = set()    # kernels not watched: not matching --kernel, or counted past the cap
        self.unsaved: dict[str, int] = {}  # kernel -> distinct launches not saved (its slots were taken)
        self.seen: dict[str, set] = {}
        self.saved: dict[str, int] = {}
        self.used = 0.0                   # bytes this process wrote (the limit is the program's: ``shared``)
        self.shared = claims.Budget(self.out_dir, self.budget)
        self.next_slot: dict[str, int] = {}  # claims key of a kernel -> the first of its slots not known taken
        self.skipped: list[str] = []
        self.early: dict[int, dict] = {}  # id(kernel) -> its arguments' bytes when its autotuner was called
        self.running = None               # the launch under way (launch, number, snap, slot, bytes): for SIGTERM
        child._exits().on_term(self.on_term)

    def on_term(self, frame) -> None:
        if self.running is None:
            attach.say_terminated_outside(frame)
            return
        launch, number, snap, index, need = self.running
        if launch.interpreted:
            attach.say_interrupted(launch, number, frame=frame, how="terminated (SIGTERM)")
        try:  # kept as a Ctrl-C'd one is: its inputs, marked unfinished (replay it to see it hang)
            self._write(launch, snap, None, "SIGTERM: the program was terminated during this launch", index, need)
        except Exception:  # noqa: BLE001 - the process is ending: what could not be written is not listed
            pass

    def tuner_enter(self, fn, tuner, args, kwargs) -> None:
        """Before an autotuner times its configs (each timed run writes the outputs), keep the bytes of its
        arguments: the captured launch's state before it (``copy_before``), not what the timed runs left."""
        self.early.pop(id(fn), None)
        if will_benchmark(tuner, args, kwargs):
            early = early_bytes(tuner, args, kwargs, self.budget - self.used)
            if early is not None:
                self.early[id(fn)] = early

    def wants(self, fn) -> bool:
        if id(fn) in self.ignored:
            return False
        if not attach.matches(fn, self.kernels):
            self.ignored.add(id(fn))
            return False
        return True

    def around(self, launch, proceed):
        key = signature(launch)
        seen = self.seen.setdefault((launch.module, launch.qualname), set())
        if key in seen:
            return proceed()
        seen.add(key)
        if id(launch.fn) in self.done:  # its slots are taken: counted, so the summary says what was not saved
            self.unsaved[launch.name] = self.unsaved.get(launch.name, 0) + 1
            if len(seen) > _COUNTED_MAX:
                self.ignored.add(id(launch.fn))
            return proceed()
        # The limits are the program's, whichever process launches (claims.py): a kernel whose last slot another
        # process took is done here too; a signature another process saved is not saved again.
        kernel = claims.key_of(launch.module, launch.qualname)
        if os.path.exists(os.path.join(self.out_dir, claims.DIR, f"{kernel}.{self.max_per_kernel - 1}")):
            self.done.add(id(launch.fn))
            return proceed()
        if not claims.first(self.out_dir, f"{kernel}.sig-{claims.key_of(repr(key))}"):
            return proceed()
        snap = snapshot(launch)
        need = 2 * snap.nbytes
        if not self.shared.reserve(need):
            line = (f"{launch.name} launch from {_site(launch)}: {size(snap.nbytes)} of inputs would pass "
                    f"--max-mb {self.budget / 1e6:g} (used {size(self.shared.used())}): not saved")
            self.skipped.append(line)
            child.note(f"capture skipped: {line}")
            print(f"tritondbg capture: skipped {line}", file=sys.stderr)
            return proceed()
        index = claims.slot(self.out_dir, kernel, self.max_per_kernel, self.next_slot.get(kernel, 0))
        if index is None:                  # the program's other processes took every slot meanwhile
            self.shared.give_back(need)
            self.done.add(id(launch.fn))
            return proceed()
        self.next_slot[kernel] = index + 1
        if index + 1 >= self.max_per_kernel:
            self.done.add(id(launch.fn))
        # launched by its autotuner (config set): the bytes from before its timed runs, where it timed
        early = self.early.pop(id(launch.fn), None) if launch.config is not None else None
        copy_before(snap, early)
        snap.benchmarked = early is not None and not launch.interpreted  # (interpreted: pinned, never timed)
        error = None
        number = max(0, attach.counts().get(launch.name, 1) - 1)  # this launch's number, for the interrupt line
        self.running = (launch, number, snap, index, need)
        t0 = time.monotonic()
        try:
            result = proceed()
        except Withdrawn:  # a default config tried and refused: not the program's launch, nothing kept of it
            self.running = None
            seen.discard(key)
            claims.release(self.out_dir, f"{kernel}.sig-{claims.key_of(repr(key))}")
            claims.release(self.out_dir, f"{kernel}.{index}")
            self.next_slot[kernel] = index
            self.done.discard(id(launch.fn))
            self.shared.give_back(need)
            raise
        except BaseException as exc:
            self.running = None
            if isinstance(exc, KeyboardInterrupt) and launch.interpreted:  # where it was, as interpret says it
                attach.say_interrupted(launch, number, exc)
            hid = attach.sigint_hid_in(exc, launch, number, t0)
            text = short_blocks(str(exc)).strip()  # (an InterpreterError's repr of a TypeError printing two blocks)
            error = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
            if hid:
                error = f"KeyboardInterrupt (Ctrl-C during the launch; it surfaced as {error.rstrip(': ')})"
            self._write(launch, snap, None, error, index, need)
            if hid:
                raise KeyboardInterrupt from None
            raise
        finally:
            self.running = None
        self._write(launch, snap, copy_after(snap), None, index, need)
        return result

    def _write(self, launch, snap, after, error, index: int, reserved: float) -> None:
        name = capture_name(launch.name, index, self.out_dir)
        entry = save(self.out_dir, name, launch, snap, after, error=error, command=self.command)
        child.append("captures.jsonl", entry)  # listed at once: a Ctrl-C after it leaves no reproducer unlisted
        self.used += entry["bytes"]
        self.shared.give_back(reserved - entry["bytes"])
        shown = launch.qualname + launch.name[len(launch.qualname.rsplit(".", 1)[-1]):]  # (NAME__MODULE: a 2nd NAME)
        self.saved[shown] = self.saved.get(shown, 0) + 1

    def summary(self) -> dict:
        return {"captured": dict(self.saved), "skipped": self.skipped, "bytes": self.used,
                "unsaved": dict(self.unsaved)}


def _site(launch) -> str:
    s = launch.call_site
    return f"{os.path.basename(s[0])}:{s[1]}" if s else "?"
