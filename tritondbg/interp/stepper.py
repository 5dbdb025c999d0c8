"""Line-by-line tracing of one program instance: ``--pid``, ``--trace``, ``--watch``, ``--break``.

``sys.settrace`` is switched on only while the selected program runs (the interpreter runs programs one
after another; ``set_grid_idx`` marks each start), so the other programs run at full interpreter speed.
Only frames of user ``@triton.jit`` code are traced (see frames.py); every line of those is one step:
the source line, its hit count (loops show each iteration), and a summary of every local it (re)bound,
taken when the next line starts. Watch expressions are evaluated in the kernel's frame after each step.
The log goes to ``steps-<case>-<dtype>.json`` in the run's folder, referenced from the result.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from tritondbg.interp import frames, hooks, values
from tritondbg.configs import FN_CHAIN
from tritondbg.runner import Instrument

MAX_STEPS = 20000  # per case: ~150 bytes of JSON a step; a loop that long is better read with --watch


class DebuggerQuit(SystemExit):
    """The user quit pdb: the whole run ends here (exit status 1, the message on stderr).

    A SystemExit, not an Exception: the runner records an Exception from a launch as a kernel error and
    goes on with the next case, which would stop at the breakpoint again."""

    ends_run = True  # the runner lets it through (scenario code's own sys.exit is an error result there)


class Stepper(Instrument, hooks.Listener):
    name = "stepper"

    def __init__(self, pid=(0, 0, 0), *, trace: bool = False, watch=(), breaks=(), out_dir=None,
                 max_steps: int = MAX_STEPS, stdin=None, stdout=None):
        self.pid = tuple(pid) + (0,) * (3 - len(pid))
        self.trace = trace
        self.watch = [check_watch(w) for w in watch]
        self.breaks = list(breaks)      # (file or None, line)
        self.out_dir = Path(out_dir) if out_dir else None
        self.max_steps = max_steps
        self.stdin, self.stdout = stdin, stdout
        self.dbg = None
        self._reset()

    @property
    def recording(self) -> bool:
        return self.trace or bool(self.watch)

    def _reset(self) -> None:
        self.launches: list[dict] = []
        self.launch = None
        self.steps: list[dict] = []
        self.frames: dict[int, dict] = {}
        self.seq = 0
        self.truncated = False
        self.breaks_hit: set = set()
        self.watch_seen: set = set()  # --watch expressions that evaluated (no NameError, no other error) at some step
        self.watch_errors: dict = {}  # --watch expression -> the first error it raised (other than a NameError)
        self.tracing = False
        self.prev_trace = None
        self.busy = False
        self.pid_seen = False

    def argmap(self):
        return self.launch.argmap() if self.launch is not None else None

    # -- instrument -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        self._reset()
        self.case = case
        with hooks.listening(self):
            try:
                yield self
            finally:
                self._off()

    def finish(self, result, out, expected) -> None:
        log = {"pid": list(self.pid), "launches": self.launches, "steps": self.steps, "truncated": self.truncated,
               "watch": self.watch, "breaks": [f"{f + ':' if f else ''}{ln}" for f, ln in self.breaks],
               "breaks_hit": sorted(f"{f}:{ln}" for f, ln in self.breaks_hit)}
        result.extra["trace_pid"] = list(self.pid)
        result.extra["trace_launches"] = self.launches
        if not self.pid_seen:
            grids = ", ".join(f"{la['kernel']} grid {tuple(la['grid'])}" for la in self.launches) or "no launch"
            result.extra["trace_note"] = f"pid {self.pid} is outside every launch's grid ({grids})"
        never = {w: self._never_reason(w) for w in self.watch if w not in self.watch_seen}
        if never and self.pid_seen and self.steps:
            result.extra["watch_never"] = never  # commands/execute.py: one failing everywhere is a usage error
            result.extra["watch_note"] = "; ".join(f"--watch {w!r}: {why}" for w, why in never.items())
        missed = [b for b in self.breaks if not any(ln == b[1] for _, ln in self.breaks_hit)]
        kernels = {la["kernel"] for la in self.launches}
        if missed and self.pid_seen:
            result.extra["break_note"] = ("breakpoint(s) never reached by pid " + str(self.pid) + ": "
                                         + ", ".join(f"{f + ':' if f else ''}{ln}{_no_statement(f, ln, kernels)}"
                                                     for f, ln in missed))
        if not self.recording:
            return
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            path = self.out_dir / f"steps-{result.case}-{result.dtype}.json"
            path.write_text(json.dumps(log, indent=1))
            result.extra["step_log"] = str(path)
        else:
            result.extra["steps"] = log

    # -- launch events ----------------------------------------------------------------------------------
    def launch_begin(self, launch) -> None:
        if hooks.in_rerun():  # tritondbg's own run again of a launch traced already
            return
        self.launch = launch
        self.launches.append({"launch": launch.index, "kernel": launch.kernel, "file": launch.file,
                              "grid": list(launch.grid), "traced": False})

    def program(self, launch, pid) -> None:
        if hooks.in_rerun():
            self._off()
            return
        self.launches[-1]["grid"] = list(launch.grid)
        if pid == self.pid:
            self.pid_seen = True
            self.launches[-1]["traced"] = True
            self._on()
        else:
            self._off()

    def launch_end(self, launch, error) -> None:
        self._off()
        self.launch = None

    def _on(self) -> None:
        if not self.tracing:
            self.prev_trace = sys.gettrace()
            sys.settrace(self._global)
            self.tracing = True

    def _off(self) -> None:
        if self.tracing:
            sys.settrace(self.prev_trace)
            self.tracing = False
        self.frames.clear()

    # -- trace functions --------------------------------------------------------------------------------
    def _global(self, frame, event, arg):
        if event != "call" or self.busy or frame.f_code not in frames.kernel_codes():
            return None
        depth = len(self.frames)
        st = {"step": None, "snap": {}, "depth": depth, "hits": {}}
        self.frames[id(frame)] = st
        if self.recording:
            call = self._new_step(frame, st, event="call")
            if call is not None:
                call["values"] = self._bind_diff(frame, {}, skip_private=True)
        return self._local

    def _local(self, frame, event, arg):
        if self.busy:
            return self._local
        st = self.frames.get(id(frame))
        if st is None:
            return None
        if event == "line":
            stmt = frames.statement_lines(frame.f_code.co_filename).get(frame.f_lineno, frame.f_lineno)
            if stmt == st.get("stmt"):
                # the statement running now, reported again for another of its lines (a call spread over
                # lines: 209, 210, 211, back to 209): one step. A loop's next iteration passes its header.
                return self._local
            st["stmt"] = stmt
            self._complete(frame, st)
            if self._should_break(frame):
                self._break(frame)
            st["hits"][frame.f_lineno] = st["hits"].get(frame.f_lineno, 0) + 1
            if self.recording:
                st["step"] = self._new_step(frame, st)
                st["snap"] = self._snapshot(frame)
        elif event == "return":
            self._complete(frame, st)
            if self.recording and arg is not None:
                ret = self._new_step(frame, st, event="return")
                if ret is not None:
                    ret["values"] = {"<return>": self._summ(arg)}
            if self.dbg is not None:
                self.dbg.frame_returned(frame)
            self.frames.pop(id(frame), None)
        return self._local

    # -- steps ------------------------------------------------------------------------------------------
    def _new_step(self, frame, st, event="line"):
        if len(self.steps) >= self.max_steps:
            self.truncated = True
            return None
        self.seq += 1
        line = frame.f_lineno
        step = {"seq": self.seq, "event": event, "launch": self.launch.index if self.launch else None,
                "kernel": self.launch.kernel if self.launch else None, "file": frame.f_code.co_filename,
                "function": frame.f_code.co_name, "line": line, "depth": st["depth"],
                "hit": st["hits"].get(line, 1) if event == "line" else None,
                "source": frames.source_line(frame.f_code.co_filename, line), "values": {}}
        self.steps.append(step)
        return step

    @staticmethod
    def _snapshot(frame) -> dict:
        return {k: id(v) for k, v in frame.f_locals.items()}

    def _summ(self, v) -> dict:
        try:
            return values.summarize(v, self.argmap())
        except Exception as exc:  # a value the summary does not know must not stop the kernel
            return {"kind": "error", "error": f"{type(exc).__name__}: {exc}"}

    def _bind_diff(self, frame, snap, skip_private=False) -> dict:
        out = {}
        for k, v in frame.f_locals.items():
            if k.startswith("__") or (skip_private and k.startswith("_")):
                continue
            if snap.get(k) != id(v):
                out[k] = self._summ(v)
        return out

    def _complete(self, frame, st) -> None:
        step = st.get("step")
        if step is None:
            return
        st["step"] = None
        self.busy = True
        try:
            step["values"] = self._bind_diff(frame, st["snap"])
            if self.watch:
                step["watch"] = {expr: self._eval(expr, frame) for expr in self.watch}
                for e, v in step["watch"].items():
                    if v.get("kind") == "error":
                        self.watch_errors.setdefault(e, v.get("error", "error"))
                    elif v.get("kind") != "undefined":
                        self.watch_seen.add(e)
        finally:
            self.busy = False

    def _never_reason(self, expr: str) -> str:
        """Why ``expr`` showed no value at any traced line of the pid."""
        err = self.watch_errors.get(expr)
        if err is None:
            return (f"a name in it was never defined at any traced line of pid {self.pid} (a typo, or a name of "
                    "another kernel?)")
        hint = ""
        if "[" in expr and ("index" in err or "iterable" in err):  # a[0]: the interpreter's blocks take no indexing
            hint = " (a block takes no indexing here: watch the whole block, shown as min/max/mean and a few values)"
        return f"it failed at every traced line of pid {self.pid}: {err}{hint}"

    def _eval(self, expr: str, frame) -> dict:
        from tritondbg.interp import sanitize

        try:
            with sanitize.suspended():
                return self._summ(eval(expr, frame.f_globals, dict(frame.f_locals)))
        except NameError:  # a name the kernel has not assigned yet: not shown until it is
            return {"kind": "undefined"}
        except Exception as exc:
            return {"kind": "error", "error": f"{type(exc).__name__}: {exc}"}

    # -- breakpoints ------------------------------------------------------------------------------------
    def _should_break(self, frame) -> bool:
        line, file = frame.f_lineno, frame.f_code.co_filename
        hit = any(ln == line and (f is None or _same_file(f, file)) for f, ln in self.breaks)
        if hit:
            self.breaks_hit.add((frame.f_code.co_filename, line))
        if self.dbg is not None and not hit:
            return self.dbg.should_stop(frame)
        return hit

    def _break(self, frame) -> None:
        from tritondbg.interp import debugger, sanitize

        if self.dbg is None:
            self.dbg = debugger.KernelPdb(self, stdin=self.stdin, stdout=self.stdout)
        self.busy = True
        try:
            with sanitize.suspended():
                self.dbg.interact(frame, f"line {frame.f_lineno} of {frame.f_code.co_name}")
        finally:
            self.busy = False
        if self.dbg.quit_requested:
            self.dbg.quit_requested = False
            where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
            self.dbg.message(f"stopped in the debugger at line {frame.f_lineno}: the run ends here")
            raise DebuggerQuit(f"quit at breakpoint {where} in pid {tuple(self.pid)}: run stopped, no verdict")


def _same_file(wanted: str, actual: str) -> bool:
    import os

    return os.path.realpath(wanted) == os.path.realpath(actual) or actual.endswith(os.sep + wanted) \
        or os.path.basename(actual) == wanted


def parse_pid(text: str | None) -> tuple[int, int, int]:
    """``"3"`` / ``"3,1"`` / ``"3,1,0"`` -> (x, y, z); bad input is a UsageError (exit 2)."""
    from tritondbg.errors import UsageError

    if text is None or text == "":
        return (0, 0, 0)
    try:
        parts = [int(p) for p in str(text).replace(" ", "").split(",")]
    except ValueError:
        raise UsageError(f"bad --pid {text!r}: expected X[,Y[,Z]] with integers, e.g. 3 or 3,1") from None
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise UsageError(f"bad --pid {text!r}: expected 1 to 3 non-negative integers, e.g. 3 or 3,1")
    return tuple(parts + [0] * (3 - len(parts)))


def check_watch(expr: str) -> str:
    """A --watch expression that compiles (it is evaluated at every line: a typo is refused up front)."""
    from tritondbg.errors import UsageError

    try:
        compile(str(expr), "<--watch>", "eval")
    except SyntaxError as exc:
        raise UsageError(f"bad --watch {expr!r}: {exc.msg} (column {exc.offset}); expected a Python expression "
                         f"such as 'tl.sum(acc, 0)'") from None
    return expr


def parse_break(text: str):
    """``"57"`` or ``"kernels/add.py:57"`` -> (file or None, line)."""
    from tritondbg.errors import UsageError

    file, sep, line = str(text).rpartition(":")
    try:
        n = int(line)
    except ValueError:
        raise UsageError(f"bad --break {text!r}: expected LINE or FILE:LINE") from None
    if n <= 0:
        raise UsageError(f"bad --break {text!r}: line numbers start at 1")
    return (file or None, n)


def jit_functions(kernels) -> list:
    """The Python functions of every @triton.jit function in the modules of ``kernels`` (helpers included)."""
    import inspect
    import sys

    def unwrap(obj):
        for _ in range(FN_CHAIN):
            if inspect.isfunction(obj):
                return obj
            obj = getattr(obj, "fn", None)
            if obj is None:
                return None
        return None

    found, modules = {}, set()
    for k in kernels:
        fn = unwrap(k)
        if fn is not None:
            found[id(fn)] = fn
            modules.add(fn.__module__)
    for name in modules:
        mod = sys.modules.get(name)
        for value in vars(mod).values() if mod else ():
            if type(value).__name__ in ("InterpretedFunction", "JITFunction", "Autotuner", "Heuristics"):
                fn = unwrap(value)
                if fn is not None:
                    found[id(fn)] = fn
    return list(found.values())


def check_breaks(breaks, kernels) -> None:
    """Every ``--break`` must name a line inside a @triton.jit function of the scenario (else exit 2)."""
    import inspect
    import os

    from tritondbg.errors import UsageError

    ranges = []
    for fn in jit_functions(kernels):
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            continue
        ranges.append((inspect.getsourcefile(fn) or "", start, start + len(lines) - 1, fn.__name__))
    for file, line in breaks:
        ok = any(lo <= line <= hi and (file is None or _same_file(file, f)) for f, lo, hi, _ in ranges)
        if not ok:
            where = ", ".join(f"{os.path.basename(f)}:{lo}-{hi} {name}" for f, lo, hi, name in ranges)
            raise UsageError(f"--break {(file + ':') if file else ''}{line} is not a line of a @triton.jit "
                             f"function of this scenario ({where})")


def _no_statement(file: str, line: int, launched=()) -> str:
    """" (line N holds no statement ...)" when a kernel file the run used matches ``file`` and that line starts no
    statement: a blank line or a comment (a breakpoint there is never reached, whatever the program does)."""
    codes = frames.kernel_codes()
    if launched:  # the files of the kernels this run launched (a process may hold other kernels of that name)
        codes = {c for c in codes if c.co_name in launched}
    paths = {c.co_filename for c in codes if not file or c.co_filename == file or
             os.path.basename(c.co_filename) == os.path.basename(file)}
    if len(paths) != 1:
        return ""
    path = next(iter(paths))
    if line in frames.statement_lines(path):
        return ""
    return f" (that line of {os.path.basename(path)} holds no statement: a blank line, a comment, or past the end)"
