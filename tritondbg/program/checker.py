"""`tritondbg interpret -- CMD`: tritondbg's interpreter instruments on every launch of a program.

Each launch runs inside the same instruments ``tritondbg interpret KERNEL`` uses for one case
(``interp.attribution.KernelReport``: kernel errors and device asserts at the kernel line and pid;
``interp.sanitize.Sanitizer``: out of bounds, races, masked-lane poison, padded reductions), entered
around the launch with the launch's arguments. There is no reference to compare with, so the checks that
need one (an output NaN where the reference is finite) do not apply: a NaN an op made from finite inputs and a store
wrote is a ``nan_inf`` warning (interp/nan_stores.py). Each finding gets the kernel, the
launch's number among the kernel's launches (``launch``: from 0; ``launch_number``: from 1, as the lines tell it: "its
2nd launch") and the call site in the program, goes to ``findings.jsonl`` at once and is printed to
stderr as one line. An out-of-bounds lane is masked off: the program goes on.

Masked-lane poison. The sanitizers fill the lanes a masked load leaves undefined (no ``other=``) with a NaN
that names the load, so their uses show. A scenario compares the outputs with its reference; a program has
none, and must go on computing what it computes without tritondbg. So a launch whose sanitized run made
poison is run again from the state before it, with the plain interpreter's filler (0): the program keeps what
that run wrote, and that run is the reference the first run's tensors are checked against
(``Sanitizer.check_program_outputs``: the test ``interpret KERNEL`` applies to its reference). Poison that
reached a tensor is then a ``poison`` finding at the load's line, as in a scenario. The state before the launch
comes back from what the sanitizer's journal recorded the first run overwrote (``interp.undo``: CPU tensors,
the cost follows what the launch writes), else from the bytes copied before it (``capture.copy_before``: other
devices, and ``--capture-on-finding``, which saves them; its reference is what the second run wrote).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

from tritondbg.interp.findings import nth, stop_last
from tritondbg.program import attach, capture, child, cpu_device, poison_rerun, readwatch, replay, stacks


class _Result:
    """What the instruments' ``finish`` writes into (the runner's CaseResult, reduced)."""

    def __init__(self):
        self.status, self.message, self.findings, self.extra = "pass", "", [], {}


def instruments(sanitize: bool = True, journal: bool = False) -> list:
    """The instruments for one launch (new ones each time: they keep per-launch state); ``journal``: the sanitizer
    records what the launch overwrites (``interp.undo``)."""
    from tritondbg.interp.attribution import KernelReport

    out = [KernelReport()]
    if sanitize:
        from tritondbg.interp.sanitize import Sanitizer

        out.append(Sanitizer(journal=journal, program=True))
    return out


_COPY_MAX_BYTES = 2 << 30  # bytes of non-CPU tensors copied before a sanitized launch (to run it again)


def on_cpu(snap) -> bool:
    return all(g["device"] == "cpu" for g in snap.groups)


_PENDING_MAX = 16  # launches' unwritten bands held (their tensors too) until the program ends


WROTE_NOTHING = ("<none>", 0)  # instrument_launch's stores of a launch that changed no byte (no store, no atomic)
MASKED_OFF = ("<masked off>", 0)  # its stores' lines that ran with no lane live and stored nowhere -> arguments


def instrument_launch(proceed, args: dict, *, sanitize: bool = True, snap=None):
    """Run ``proceed()`` (one interpreted launch) under the instruments; returns (value, findings, error, stores:
    {(file, line) of a store: (lowest, highest) address it wrote}).
    ``snap``: a ``capture.Snapshot`` of the launch's tensors. Where the sanitized run filled undefined lanes with
    poison, the launch runs again from the state before it (module docstring): the bytes ``copy_before`` took, or
    else, for CPU tensors, what the sanitizer's journal recorded the run overwrote."""
    journal = bool(sanitize and snap is not None and not snap.before and on_cpu(snap))
    insts = instruments(sanitize, journal)
    san = insts[-1] if sanitize else None
    result = _Result()
    value, error = None, None
    import numpy as np

    from tritondbg.interp import guard

    try:
        with contextlib.ExitStack() as stack:
            # numpy's "invalid value encountered in divide" named the interpreter's line for a 0/0 in lanes a
            # kernel never stores (the GPU says nothing); nan_inf reports a NaN that matters, at the kernel's line
            stack.enter_context(np.errstate(over="ignore", invalid="ignore", divide="ignore"))
            for inst in insts:
                stack.enter_context(inst.active(None, None, args))
            if san is None:  # what the guard keeps out from here on is this launch's, with no sanitizer to say so
                guard.reset()
            value = proceed()
    except Exception as exc:  # noqa: BLE001 - re-raised by the caller: the program sees its own error
        error = exc
        result.status = "error"
        result.message = f"{type(exc).__name__}: {exc}"
    for inst in insts:
        if inst is not san:
            inst.finish(result, None, None)
    if san is None:  # --no-sanitize: lanes outside every tensor are still errors (helper-57: a silent pass)
        result.findings += guard.kept_findings()

    if san is not None:
        note = None
        if error is None and san.poison_used and snap is not None:
            value, error, note = poison_rerun.without_poison(proceed, san, snap, result, value)
            if note is None:  # the program has the run without poison: its undefined lanes read 0
                san.program_fill = "0"
        san.journal = None
        san.finish(result, None, None)
        stop_last(result.findings)
        for f in result.findings if note else ():
            if f["kind"] == "poison":
                f.setdefault("notes", []).append(note)
    if san is None:
        return value, result.findings, error, {}
    dead = {site: into for site, into in san.masked_off.items() if site not in san.store_spans}
    stores = {**san.store_spans, **({MASKED_OFF: dead} if dead else {})}
    if error is None and not san.store_spans and san.atomic_span is None:
        stores[WROTE_NOTHING] = None  # the caller asks the source (stores_nothing)
    return value, result.findings, error, stores


def stores_nothing(launch, stores: dict) -> dict | None:
    """A warning for a launch that wrote no memory (no store, no atomic changed a byte) of a kernel whose source has
    no write at all: a forgotten ``tl.store`` (helpers 81 and 83: 0 findings where the program's output came from
    torch.zeros, or a grouped kernel's pointer tables); not for a kernel that stores under a mask false this time."""
    from tritondbg.interp import kernel_stores

    if WROTE_NOTHING not in stores or kernel_stores.writes(launch.fn) is not False:
        return None
    return dict(kind="not_stored", severity="warning", file=launch.file, line=launch.line, pid=None, tensor=None,
                offsets=[], op=None, source="",
                message=f"{launch.name} writes no memory: its source has no tl.store, atomic or descriptor store, and "
                        "the launch changed no byte (a forgotten tl.store?)")


def _carried_band(read: dict, band: tuple, stores: dict) -> bool:
    """A band of ``band``'s tensor inside the range this launch's stores wrote, in a launch that read marked
    memory (``read``, its finding): said in the read's finding, not as elements left unwritten (helper-82: "left 76
    of 77 unwritten" where every element was stored with a value read from memory nothing wrote)."""
    from tritondbg.interp import initcheck

    name, t, left, _ = band
    if not initcheck.stores_cover(t, left, stores):
        return False
    read["message"] += (f"; after the launch {int(left.sum())} element(s) of {name} inside the range its stores wrote "
                        "hold the mark: values computed from what it read (or elements its store mask skipped)")
    return True


def _stores_elsewhere(args: dict, stores: dict) -> list:
    """[((file, line), argument name)] for the launch's stores, each with the tensor argument it wrote into."""
    from tritondbg.interp import initcheck

    import torch

    out = []
    for site in sorted(stores):
        for name, t in args.items():
            if isinstance(t, torch.Tensor) and site in initcheck.stores_into(t, {site: stores[site]}):
                out.append((site, name))
                break
    return out


def _read_outside(findings: list) -> list:
    """[(kind, line, tensor)] of the launch's loads that went outside their tensor (out_of_bounds, outside_view):
    a plain run reads there what another argument (or the storage) holds, the mark of memory nothing wrote too."""
    return [(f["kind"], f.get("line"), f.get("tensor"), f.get("lands_in") or ()) for f in findings
            if f["kind"] in ("out_of_bounds", "outside_view") and f.get("op") in ("load", None)]


def _causes(causes: list, name: str, into, wrote: int) -> list:
    """The loads outside their tensor (``_read_outside``) to which the marks a launch's stores left in ``name``
    are a follow-on: any of them where its stores wrote nothing but the mark; where they wrote some elements, those
    whose lanes landed in ``name`` itself (helper-129: B's rows read past its end into the output C, uninitialized,
    and the mark came back through the products; "left these: a store mask too strict?" sent the user astray)."""
    if not into:
        return []
    if not wrote:  # the loads whose lanes landed in an argument first: a lane outside every one reads 0, no mark
        return [c[:3] for c in sorted(causes, key=lambda c: (name not in c[3], not c[3]))]   # (helper-155)
    return [c[:3] for c in causes if name in c[3]]


class _LaunchSite:
    """What a finding says of a launch (``Checker._tell``), without its arguments: a watched launch
    (readwatch.py) must not keep the program's tensors alive."""

    def __init__(self, launch):
        self.name, self.qualname, self.file, self.line = launch.name, launch.qualname, launch.file, launch.line
        self.stack, self.call_site = launch.stack, launch.call_site
        self.empty_grid = _empty_grid(launch)


def _empty_grid(launch) -> tuple | None:
    """The grid of a launch that ran no program, as the program passed it ((0,), (7, 0)); else None."""
    try:
        grid = launch.resolved_grid()
    except Exception:  # noqa: BLE001 - a grid callable that fails here: not this case
        return None
    if all(g > 0 for g in grid):
        return None
    return tuple(int(g) for g in (launch.grid if isinstance(launch.grid, tuple) else grid))


class Checker(attach.Observer):
    def __init__(self, cfg: dict):
        self.patterns = list(cfg.get("kernels") or ())
        self.sanitize = bool(cfg.get("sanitize", True))
        self.capture_on_finding = bool(cfg.get("capture_on_finding"))
        self.out_dir = cfg["run_dir"]
        self.command = cfg.get("command", "")
        self.skip: set[int] = set()
        self.launches: dict[str, int] = {}
        self.unchecked: dict[str, int] = {}  # launches that raised outside the kernel's code: nothing ran to check
        self.findings: dict[str, int] = {}
        self.told: dict[tuple, int] = {}  # (kind, op, file, line, tensor, kernel) -> times found: a repeat is not printed
        self.told_repeats: set[str] = set()  # kernels whose repeats were said to be counted, not printed
        self.told_first: dict[tuple, int] = {}  # the launch a finding was first told at
        self.told_errors: set[tuple] = set()  # findings told as errors (a later error of a warning's line is told)
        self.told_tests: dict[tuple, list] = {}  # the pytest tests a finding was printed in (a repeat in another: once)
        self.captured: dict[str, int] = {}
        self.capture_names: dict[tuple, str] = {}  # (kernel, launch index) -> its reproducer (--capture-on-finding)
        self.running = None
        self.band_read = False  # a band was told because a later launch read values computed from it
        self.pending: list = []  # (launch, index, name, tensor, unwritten, wrote): told at exit if still unwritten
        self.watches: dict = {}  # id of a pending entry -> readwatch.watch_of its tensor when it was left
        child._exits().on_term(self.on_term)
        child._exits().on_exit(self.flush_holes)
        if self.sanitize:  # the program's torch code reading what a launch left unwritten (readwatch.py)
            readwatch.set_teller(self._told_read)

    def on_term(self, frame) -> None:
        if self.running is not None:
            attach.say_interrupted(*self.running, frame=frame, how="terminated (SIGTERM)")
        else:
            attach.say_terminated_outside(frame)

    def wants(self, fn) -> bool:
        if id(fn) in self.skip:
            return False
        if not attach.matches(fn, self.patterns):
            self.skip.add(id(fn))
            return False
        return True

    def around(self, launch, proceed):
        with readwatch.paused():  # the interpreter's torch calls and tritondbg's own are no program's reads
            try:
                return self._around(launch, proceed)
            finally:
                self.running = None

    def _around(self, launch, proceed):
        index = self.launches.get(launch.name, 0)
        # SIGTERM says where it landed (on_term): from the copy before the launch to the checks after it (helper-142:
        # a --timeout during them named the launch's line "outside any launch")
        self.running = (launch, index)
        snap = None
        if self.capture_on_finding:
            snap = capture.snapshot(launch)
            capture.copy_before(snap)
        elif self.sanitize:  # the state a run without the poison starts from (instrument_launch)
            try:
                snap = capture.snapshot(launch)
                if not on_cpu(snap) and snap.nbytes <= _COPY_MAX_BYTES:
                    capture.copy_before(snap)
            except Exception:  # noqa: BLE001 - tensors that cannot be read as bytes: no second run
                snap = None
        from tritondbg.interp import initcheck

        marks = initcheck.marks_of(launch.args) if self.sanitize else {}
        from tritondbg import watchdog

        t0 = time.monotonic()
        try:
            # a launch that never ends says so (the program form has no --timeout)
            with watchdog.activity(kernel=launch.name, launch=nth(index + 1)), \
                    watchdog.heartbeat(hint="Ctrl-C stops it and says where"):
                value, findings, error, stores = instrument_launch(proceed, launch.args, sanitize=self.sanitize,
                                                                   snap=snap)
        except KeyboardInterrupt as exc:  # Ctrl-C in a launch (a kernel that spins): where it was, not "checked"
            attach.say_interrupted(launch, index, exc)
            raise
        if error is not None and attach.sigint_hid_in(error, launch, index, t0):
            raise KeyboardInterrupt from None
        self.launches[launch.name] = index + 1
        nothing = stores_nothing(launch, stores) if self.sanitize and index == 0 else None
        stores.pop(WROTE_NOTHING, None)
        masked = stores.pop(MASKED_OFF, {})
        if nothing is not None:
            findings = [*findings, nothing]
        if error is not None and not any(f["kind"] in ("kernel_error", "device_assert") for f in findings):
            # raised outside the kernel's code (an argument the interpreter cannot take): no program ran, so
            # nothing was checked; the program may catch the error, so it is told here (helper-50: FlagGems'
            # StridedBuffer arguments were "1 launches, 1 checked, 0 findings")
            self.unchecked[launch.name] = self.unchecked.get(launch.name, 0) + 1
            findings = [*findings, dict(kind="kernel_error", severity="error", file=None, line=None, pid=None,
                                        tensor=None, offsets=[], op=None, source="",
                                        message=f"the launch raised outside the kernel's code, so no program ran and "
                                                f"nothing was checked: {type(error).__name__}: {error}")]
        host, cuda = cpu_device.host_arguments(launch.args) if error is None else ([], [])
        if host:  # the interpreter ran what a GPU refuses (helper-79: ``y = torch.ones(n)`` beside "cuda" tensors)
            findings = [*findings, cpu_device.host_finding(host, cuda)]
        if error is None and marks:  # told at the program's end, if no later launch writes them
            after = {name: initcheck.marked_elements(launch.args[name]) for name in marks}
            found = initcheck.bands(launch.args, marks, after)
            read = [f for f in findings if _read_the_mark(f)]
            if read:  # it read marked memory: marks inside its stores' range are what it computed from them
                found = [h for h in found if not _carried_band(read[0], h, stores)]
            left = any(m is not None and m.any() for m in after.values())
            # --capture-on-finding: the launch's bytes before and after, saved if a band or a read of what it left
            # unwritten is told; a launch with findings of its own is saved for those, once (helper-84: twice)
            saved = {"snap": snap, "after": capture.copy_after(snap), "done": False} \
                if left and self.capture_on_finding and snap is not None and not findings else None
            self._watch(launch, index, marks, after, stores, saved, read=any(map(_read_the_mark, findings)),
                        causes=_read_outside(findings), masked=masked)
            new = [(launch, index, attach.current_test(), saved, initcheck.stores_into(h[1], stores), *h)
                   for h in found]
            for entry in new:  # (which launch's marks the program's reads of its tensor are about)
                self.watches[id(entry)] = readwatch.watch_of(entry[6])
            self.pending += new
            while len(self.pending) > _PENDING_MAX:
                oldest = self.pending.pop(0)
                if not self._read_around(oldest):  # (as at the program's end: flush_holes)
                    self._settle(oldest)
        if self.sanitize and any(f["kind"] == "uninit" and f.get("carried") for f in findings):
            self._read_watched(launch)  # values computed from holes a launch left: that launch, told first
        if any(map(_read_the_mark, findings)) and self.pending:
            # a launch read the mark: the bands left unwritten so far are the likely cause, told first (not at exit)
            # and, since they were read, as errors
            pending, self.pending = self.pending, []
            for entry in pending:
                self.band_read |= self._settle(entry, later=f"and no launch wrote them before {launch.name} (below) "
                                                            "read values computed from them", severity="error")
        if self.band_read:  # values computed from a band already told: this kernel is where they show, not the bug
            for f in findings:
                if f["kind"] == "uninit" and f.get("carried"):
                    f["severity"] = "warning"
                    f["message"] += " (a follow-on of the unwritten band told above, the error)"
        for f in findings:
            self._tell(f, launch, index, attach.current_test())
        if findings:
            self.findings[launch.name] = self.findings.get(launch.name, 0) + len(findings)
            if self.capture_on_finding:
                self._capture(launch, snap, error, index=index)
        if error is not None:
            raise error
        return value

    def _watch(self, launch, index: int, marks: dict, after: dict, stores: dict, saved, read: bool,
               causes: list = (), masked: dict | None = None) -> None:
        """The arguments still holding the mark after the launch, watched for the program's torch reads; a launch
        that read the mark (its own finding) ends the watch of its arguments: that finding told it. ``causes``: the
        launch's reads outside a tensor (``_read_outside``), which a read of the mark its stores wrote is told as a
        follow-on of; an argument nothing stored into whose kernel has no store through it is a forgotten store."""
        from tritondbg.interp import byte_marks, initcheck, kernel_stores

        light = _LaunchSite(launch)
        for name, was in marks.items():
            t, now = launch.args[name], after.get(name)
            if byte_marks.small(t):  # int8 / fp8 ...: a torch read of a byte is data (told at exit, if left)
                continue
            if now is None or read or not now.any():
                readwatch.forget(t)
                continue
            wrote = int((was & ~now).sum()) if now.shape == was.shape else 0
            into = initcheck.stores_into(t, stores)
            if not wrote and not into and not was.all():  # memory the program filled in part (a cache), which
                readwatch.forget(t)                           # the launch only read: no output of this launch
                continue
            elsewhere = _stores_elsewhere(launch.args, stores) if not wrote and not into else []
            forgotten = bool(elsewhere) and kernel_stores.forgotten(launch.fn, name, [n for _, n in elsewhere])
            off = [site for site, names in (masked or {}).items() if name in names] if not wrote and not into else []
            readwatch.watch(t, launch=light, index=index, test=attach.current_test(), name=name, wrote=wrote,
                            stores=into, saved=saved, full=launch if saved is not None else None,
                            elsewhere=elsewhere, forgotten=forgotten, causes=_causes(causes, name, into, wrote),
                            masked_off=off)

    def _read_watched(self, launch) -> None:
        import torch

        for name, t in launch.args.items():
            if isinstance(t, torch.Tensor):
                found = readwatch.read_by_launch(t, launch.name, name)
                if found is not None:
                    self._told_read(*found)
                    return

    def _told_read(self, entry: dict, f: dict) -> None:
        """The program's torch code read what a launch left unwritten (readwatch.py): an error, and no band
        warning at exit for the same memory."""
        launch = entry["launch"]
        self._tell(f, launch, entry["index"], entry["test"])
        self.findings[launch.name] = self.findings.get(launch.name, 0) + 1
        self.pending = [p for p in self.pending if readwatch._storage_ptr(p[6]) != entry["origin"]]
        self.band_read = True  # what torch computed from them and a launch reads later: a follow-on of this
        saved = entry.get("saved")
        if saved is not None and not saved["done"]:  # --capture-on-finding: the launch that left them
            saved["done"] = True
            self._capture(entry["full"], saved["snap"], None, after=saved["after"], index=entry["index"])
        self._note_read(launch, entry["index"], f)

    def _tell(self, f: dict, launch, index: int, test) -> None:
        """A finding: to findings.jsonl and one line on stderr."""
        from tritondbg.interp import frames

        site = launch.call_site
        if f.get("file") is None:  # a finding of the whole launch (holes): the kernel's definition
            f["file"], f["line"] = launch.file, launch.line
        # launch: the kernel's launches counted from 0 (as before); launch_number: from 1, as the lines say
        f.update(kernel=launch.name, qualname=launch.qualname, launch=index, launch_number=index + 1,
                 call_site=list(site) if site else None, stack=stacks.short_stack(launch.stack),
                 pid_process=os.getpid(), **({"test": test} if test else {}))
        child.append("findings.jsonl", f)
        label = f"warning: {f['kind']}" if f.get("severity", "error") == "warning" else f["kind"]
        key = (f["kind"], f.get("op"), f.get("file"), f.get("line"), f.get("tensor"), launch.name)
        seen = self.told[key] = self.told.get(key, 0) + 1
        first = self.told_first.setdefault(key, index)
        error = f.get("severity", "error") != "warning"
        if seen > 1 and error and key not in self.told_errors:  # (helper-107: a race told as a harmless warning
            # in the 1st launch, whose values differ in the 2nd, was an error told only as "findings come again")
            self.told_errors.add(key)
            self._print(f, launch, label, test, f" (an error at its {nth(index + 1)} launch: the same line was a "
                                                "warning before)")
            return
        if error:
            self.told_errors.add(key)
        tests = self.told_tests.setdefault(key, [])  # the first told's test (None: outside any), then each other
        if seen > 1 and f["kind"] != "kernel_error" and test and test not in tests:
            # a repeat in another pytest test: pytest shows a failing test's own output only, so the finding is
            # printed there once, self-contained (h88: later failing tests said "findings come again ... (its 5th
            # launch ...)" or nothing, never what the finding was)
            told = f"in test {tests[0]}" if tests[0] else "outside any test"
            tests.append(test)
            self._print(f, launch, label, test, f" (told first {told}, at its {nth(first + 1)} launch; repeats "
                                                "within a test are counted in the summary, not printed)")
            return
        if seen == 1:
            tests.append(test)
        if seen > 1 and f["kind"] != "kernel_error":  # (helper-62: 21 lines of the same 3 findings for topk)
            if launch.name not in self.told_repeats:
                self.told_repeats.add(launch.name)
                where = "in the same launch" if index == first else "in its later launches"  # (helper-81)
                print(f"tritondbg: {launch.name}'s findings come again {where} (its {nth(index + 1)} launch: "
                      f"{label} at {frames.site_name(f.get('file'))}:{f.get('line')}); repeats are counted in the "
                      "summary, not printed", file=sys.stderr, flush=True)
            return
        # (a kernel error is raised into the program, which may catch it: the summary then calls it a warning)
        raised = " (raised into the program: the summary says whether it caught it)" \
            if f["kind"] == "kernel_error" and f.get("raised", True) else ""  # (a host tensor's: not raised here)
        self._print(f, launch, label, test, raised)

    @staticmethod
    def _print(f: dict, launch, label: str, test, tail: str) -> None:
        """The finding's line on stderr."""
        from tritondbg.interp import frames

        pid = f" pid {tuple(f['pid'])}" if f.get("pid") else ""
        beside = tuple(launch.stack[0])[0] if launch.stack else None
        # a line in a @triton.jit helper the kernel calls names it (helper-111: ScatterMoE's _compute_expert_block)
        fn = f.get("function")
        helper = f" (in {fn})" if fn and fn not in ("?", "<module>") and fn != launch.name.split(".")[-1] else ""
        print(f"tritondbg: {label} in {launch.name} at {frames.site_name(f.get('file'), beside)}:{f.get('line')}"
              f"{helper}{pid}: {f.get('message', '')} "
              f"[launched from {stacks.describe_site(launch.stack)}{f' in test {test}' if test else ''}]{tail}",
              file=sys.stderr, flush=True)

    def _settle(self, entry, later: str = "and no later launch wrote them", severity: str = "warning") -> bool:
        """A launch's unwritten band, told now if no later launch wrote it (a buffer filled in parts is not)."""
        from tritondbg.interp import initcheck

        launch, index, test, saved, stores, name, t, unwritten, wrote = entry
        try:
            now = initcheck.marked_elements(t)
        except Exception:  # noqa: BLE001 - a tensor gone bad at exit: nothing to tell
            return False
        if now is None or now.shape != unwritten.shape or not (unwritten & now).any():
            return False
        f = initcheck.band_finding(name, t, unwritten & now, wrote, later=later)
        f["severity"] = severity
        initcheck.at_stores(f, name, stores)
        self._tell(f, launch, index, test)
        if saved is not None and not saved["done"]:  # one reproducer per launch, however many bands it left
            saved["done"] = True
            try:
                self._capture(launch, saved["snap"], None, after=saved["after"], index=index)
            except Exception as exc:  # noqa: BLE001 - at exit: say it, lose nothing else
                print(f"tritondbg: could not save a reproducer of {launch.name} (its {nth(index + 1)} launch): {exc}",
                      file=sys.stderr, flush=True)
        if severity == "error":
            self._note_read(launch, index, f)
        return True

    def flush_holes(self) -> None:
        pending, self.pending = self.pending, []
        with readwatch.paused():
            for entry in pending:
                if not self._read_around(entry):  # (read by the program around the band: left by design)
                    self._settle(entry)

    def _read_around(self, entry) -> bool:
        """Whether the program read the tensor of a pending band around it, never into it (readwatch.read_around)."""
        return readwatch.read_around(entry[6], self.watches.pop(id(entry), None))

    def _note_read(self, launch, index: int, f: dict) -> None:
        """An unwritten band of a launch saved as a reproducer was read (an error): its reproducer says so, and its
        replay's band is an error too (helper-144: the replay of fused_moe passed, warning only, where the program
        failed; a CI gate over reproducers let 40% of an output unwritten through)."""
        name = self.capture_names.get((launch.name, index))
        if name is not None and f.get("tensor"):
            replay.note_read(self.out_dir, name, f["tensor"], f.get("read_by"), f.get("read_at"))

    def _capture(self, launch, snap, error, after=None, index: int = 0) -> None:
        n = self.captured.get(launch.name, 0)
        self.captured[launch.name] = n + 1
        name = capture.capture_name(launch.name, n, self.out_dir)
        if after is None and error is None:
            after = capture.copy_after(snap)
        entry = capture.save(self.out_dir, name, launch, snap, after, command=self.command,
                             error=f"{type(error).__name__}: {error}" if error else None)
        child.append("captures.jsonl", entry)
        self.capture_names[(launch.name, index)] = name

    def summary(self) -> dict:
        from tritondbg.interp import dots

        checked = {k: n - self.unchecked.get(k, 0) for k, n in self.launches.items()}
        return {"checked": checked, "findings_per_kernel": dict(self.findings),
                "captured": dict(self.captured), "tf32_dots": dots.tf32_sites()}


def _read_the_mark(f: dict) -> bool:
    """Whether finding ``f`` says the launch read memory nothing wrote (not the warning that an argument is never
    named: unstored.unnamed_entries, which ended the watch of a torch read that names the wrong pointer's store)."""
    return f["kind"] == "uninit" and f.get("op") != "unnamed"
