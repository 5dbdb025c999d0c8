"""Sanitizers for ``tritondbg interpret`` (on by default): an Instrument for the runner.

- out_of_bounds: a load/store/atomic lane outside the argument tensor its pointer derives from (or outside
  every argument). The lane is masked off before the interpreter touches memory: never a segfault, never
  a silent read of a neighbour's memory. Reports line, pid, tensor, element offsets, how far outside.
- race: two programs of one launch writing the same element with plain (non-atomic) stores; a warning where
  each wrote the same bits (a done flag set to 1; or a race the input hides), an error where they differ.
- poison: lanes a masked load leaves undefined (no ``other``) are filled with NaN carrying the load's
  id in its payload (ints: the type's min, unsigned max), so code that reads them fails the reference
  check; reported at the load's line when such a NaN reaches an output, or when such lanes enter a reduction or
  a dot, whatever ops since the load made of the NaN (``tl.where(x > 0, x, 0.0)``: garbage on the GPU).
- masked_reduction: padding lanes (``other``) that change a sum/max/min/dot (see shadow.py).
- nan_inf: when an output holds NaN/Inf where the reference is finite, the first op (line, pid) that
  made a NaN/Inf its inputs did not hold.

Checks are vectorised numpy on each memory op's block; findings are aggregated per (kind, line, tensor) so
a missing mask reports once with the first pid and a count, not once per program. What the outputs hold at the end
of a case (unwritten elements, poison and NaN/Inf that reached them) is output_checks.py's.
"""
from __future__ import annotations

import contextlib
import itertools
import warnings

import numpy as np

from tritondbg.interp import (findings, frames, gpu_compile, guard, hooks, initcheck, layouts, lowp_accum, nan_origin,
                              nan_stores, oob, output_checks, race_bits, races, shadow, shadow_pads, shifts, undo,
                              uninit_reads, unstored)
from tritondbg.interp.memops import HeldLocks, _active, install as _install_memory, uninstall as _uninstall_memory
from tritondbg.interp.spins import SpinWatch
from tritondbg.interp.shadow_values import _debug_raise
from tritondbg.interp.poison import note_payload_stores, payload_ids, poison_array, tell_int_stored  # noqa: F401
from tritondbg.interp.values import element_width
from tritondbg.runner import Instrument
from tritondbg import missing_return

KINDS = ("out_of_bounds", "outside_view", "race", "poison", "uninit", "masked_reduction", "nan_inf", "shift", "cast",
         "layout", "accumulator")
_MAX_NONFINITE_EVENTS = 64
_MAX_RACE_ELEMENTS = 1 << 26  # stop recording stores past 64M elements (memory), say so in the finding


@contextlib.contextmanager
def suspended():
    """No sanitizer checks for the block (watch expressions, pdb commands: the user's code, not the kernel's)."""
    san, sink = _active["san"], shadow._sink["san"]
    _active["san"] = None
    shadow.set_sink(None)
    try:
        yield
    finally:
        _active["san"] = san
        shadow.set_sink(sink)


# ---------------------------------------------------------------------------------------------------------
# the instrument
# ---------------------------------------------------------------------------------------------------------


class Sanitizer(Instrument, hooks.Listener):
    """All sanitizers at once (they share the per-op bookkeeping)."""

    name = "sanitizer"
    max_race_elements = _MAX_RACE_ELEMENTS  # races.py notes a record cut short
    max_nonfinite_events = _MAX_NONFINITE_EVENTS  # nan_stores.py notes a count cut short

    def __init__(self, journal: bool = False, program: bool = False):
        self.check_nonfinite = True
        self.keep_journal = journal  # record what the launch overwrites (undo.Journal: program mode, CPU tensors)
        self.program_mode = program  # program mode: no reference; a NaN an op made and a store wrote is a warning
        self._reset()

    def _reset(self) -> None:
        self.agg: dict[tuple, dict] = {}
        self.nonfinite: list[dict] = []
        self.made_from_finite = False  # an op made NaN/Inf from finite inputs only (nonfinite_event)
        self.nonfinite_reached: set[int] = set()  # events whose NaN/Inf a store wrote to memory (nan_origin.py)
        self.nan_stored: dict[int, dict] = {}      # program mode: event -> the NaN its lanes' stores wrote (nan_stores)
        self.nan_swallowed: dict[tuple, dict] = {}  # (event, line) -> a NaN of it a max / min / clamp turned finite
        self.outputs_nonfinite = 0                 # output elements NaN/Inf where the reference is finite
        self.poison_sites: dict[tuple, int] = {}
        self.poison_info: dict[int, dict] = {}
        self.merged_sids: dict[int, set] = {}  # poison id -> ids whose lanes an op merged into it (shadow_pads.py)
        self.poison_used = False
        # what the program's lanes hold where the checked run put poison: None (the poison itself: a scenario),
        # "0" (program mode ran the launch again with the plain interpreter's filler and kept that run)
        self.program_fill: str | None = None
        self.poison_stores: dict[int, dict] = {}
        self.uninit_sids: set[int] = set()          # poison ids of loads that read initcheck's mark
        self.lane_sids: set[int] = set()            # poison ids of lanes a shift or a cast spoilt (shifts.py, casts.py)
        self.times_zero_sids: set[int] = set()      # poison ids of undefined lanes an exact 0 multiplied
        self.int_sids: set[int] = set()             # poison ids of masked integer loads (poison.tell_int_stored)
        self.accum_lines, self.accum_counts = {}, {}  # adds to loop-carried names; 16-bit ones run (lowp_accum.py)
        self.pad_loads: dict[tuple, str] = {}       # (file, line) of a masked load that padded lanes -> its other=
        self.dot_pads: dict[tuple, tuple] = {}      # (file, line) of a tl.dot padding from undefined lanes -> loads'
        self.uninit_spins: dict[tuple, int] = {}    # atomic_cas line -> compares against the mark
        self.store_spans: dict[tuple, tuple] = {}   # (file, line) of a store -> (lowest, highest) address written
        self.masked_off: dict[tuple, frozenset] = {}  # (file, line) of a store run with no lane live -> the
                                                      # arguments its pointers point into (unstored.masked_off)
        self.skipped_writes: dict[tuple, list] = {}  # (file, line) -> addresses of lanes skipped (oob.skip_writes)
        self.skipped_count = 0                       # how many addresses skipped_writes holds
        self.locks = HeldLocks()                     # lock words the running program holds (memops.py)
        self.abandoned: dict[int, tuple] = {}        # lock words a finished program of the launch still held
        self.spin = SpinWatch()                      # the running program's repeated atomics (memops.py)
        self.last_kernel = "?"
        self.launch_site = ("?", 0, "?")
        self.scenario = None
        self.handed: list[tuple] = []               # (call site, launch, [(lo, hi, arg name)]) per launch
        self.atomic_span: tuple | None = None       # (lowest, highest) address an atomic changed
        self.launch, self.pid, self.pids = None, (0, 0, 0), []
        self.sites: list[tuple] = []
        self.site_index: dict[tuple, int] = {}
        self.writes, self.write_count, self.locked = [], 0, []  # plain stores; those under locks (races.py)
        self.atomics: list[tuple] = []  # (addresses an atomic changed, program index, site id, seq, op, scope cta)
        self.mem_seq = 0                # the order of a launch's stores and atomics
        self.barriers = 0               # tl.debug_barrier calls so far: a program's stores either side are ordered
        self.atomic_depth = 0
        self.unmasked_depth = 0  # inside tl.load/tl.store without mask= (create_load/create_store)
        self.seq = 0
        self.journal = undo.Journal() if self.keep_journal else None

    # -- instrument -------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        self._reset()
        self.scenario = scenario  # None in program mode (no outputs to check against a reference)
        code = getattr(scenario.launch_for(case), "__code__", None) if scenario is not None else None
        # where an unwritten output is reported when its allocation is not known: the scenario's launch function
        self.launch_site = (code.co_filename, code.co_firstlineno, code.co_name) if code else ("?", 0, "?")
        _active["san"] = self
        shadow.set_sink(self)
        checking = lambda: _active["san"] is not None and self.launch is not None  # noqa: E731
        # the poison's NaN in padded rows reaching the interpreter's nanmax (helper-61: numpy's "All-NaN slice
        # encountered" on FlagAttention's runs, which plain TRITON_INTERPRET=1 never prints). Once for the process,
        # not a catch_warnings per launch: each change of the filters resets Python's "once per place" memory, and
        # a kernel's deprecation warning came once per launch (helper-104: 10 times for 10 launches)
        _quiet_all_nan()
        with hooks.listening(self), guard.deferred_to(checking):  # it checks lanes first
            _install_memory()
            shadow.install()
            initcheck.install()  # torch.empty & co. hand out marked memory (uninit findings)
            try:
                yield self
            finally:
                initcheck.uninstall()
                shadow.uninstall()
                _uninstall_memory()
                shadow.set_sink(None)
                _active["san"] = None

    def finish(self, result, out, expected) -> None:
        if out is not None and expected is not None:
            output_checks.check_case(self, result, out, expected)
        if self.program_mode:
            nan_stores.entries(self)
        if self.program_mode or getattr(self.scenario, "reference_is_capture", False):
            nan_stores.swallowed_entries(self)
            nan_stores.overflows(self)  # no reference, or the captured output: an accumulation's Inf
        oob_sites = {(i["file"], i["line"]) for i in self.poison_info.values() if i.get("oob_only")}
        # in the order they happened: the first NaN before the reduction it spoils, whichever was aggregated first
        for entry in sorted(self.agg.values(), key=lambda e: e.get("event", e)["seq"]):
            if entry["kind"] == "poison" and (entry["file"], entry["line"]) in oob_sites:
                continue  # lanes masked off as out of bounds: the out_of_bounds finding says it
            if self.program_fill is not None:
                entry["program_fill"] = self.program_fill
            result.findings.append(findings.finding(entry))

    # -- launch events ----------------------------------------------------------------------------------
    def launch_begin(self, launch) -> None:
        self.launch = launch
        self.launch_token = next(_LAUNCH_TOKENS)  # (byte_marks.read_hits: once per launch; an id() is reused)
        self.last_kernel = launch.kernel
        if self.scenario is not None and initcheck.installed():  # a scenario's outputs: unwritten elements
            self.handed.append((initcheck.caller_site(), launch, [(b.lo, b.hi, b.name) for b in launch.argmap().buffers]))
        self.pids, self.writes, self.write_count, self.atomics, self.locked = [], [], 0, [], []
        lowp_accum.launch_begin(self, launch)
        self.abandoned = {}  # lock address -> (pid, site) of a program that ended holding it (memops.SpinWatch)
        unstored.unnamed_entries(self, launch)  # a tensor argument its code never names (a forgotten store?)
        self.bases_read, self.layout_new = set(), []  # pointers' arguments, new layout warnings (drop_unread)
        try:
            layouts.entries(self, launch)  # a permuted tensor handed without the stride a kernel must apply
        except Exception:  # noqa: BLE001 - a warning's bookkeeping must never stop the user's launch
            _debug_raise()

    def program(self, launch, pid) -> None:
        for addr, site in self.locks.held.items():  # the program before ended holding these lock words
            self.abandoned[addr] = (self.pid, site)
        self._program_ended()
        self.pid = pid
        self.pids.append(pid)
        self.spin = SpinWatch()

    def launch_end(self, launch, error) -> None:
        try:
            self._program_ended()
            races.report(self, launch)
            gpu_compile.entries(self, launch, error), missing_return.entries(self, launch, error)
            if error is None:
                lowp_accum.entries(self, launch)
            layouts.drop_unread(self)
        finally:
            self.writes, self.atomics, self.locked, self.reads, self.read_count = [], [], [], [], 0  # (races.py)
            self.read_capped = False
            self.launch = None

    def _program_ended(self) -> None:
        """The running program's stores under a word it exchanged and never gave back count (a flag, not a lock);
        the next program starts holding nothing."""
        self.writes.extend(self.locks.pending)
        self.locks = HeldLocks()

    # -- bookkeeping ------------------------------------------------------------------------------------
    def _entry(self, kind: str, site: tuple, tensor: str | None, op: str, **first) -> dict:
        key = (kind, site[0], site[1], tensor if kind != "poison" else None,
               op if kind != "poison" or op == "times_zero" else "")
        e = self.agg.get(key)
        if e is None:
            self.seq += 1  # the order findings are listed in: the first made first (a nan_inf its event's)
            e = self.agg[key] = dict(kind=kind, file=site[0], line=site[1], function=site[2], tensor=tensor, op=op,
                                     pid=list(self.pid), kernel=self.launch.kernel if self.launch else "?",
                                     programs=set(), lanes=0, offsets=[], notes=[], seq=self.seq, **first)
        if len(e["programs"]) < 100000:
            e["programs"].add(self.pid)
        return e

    def _site_id(self, site: tuple) -> int:
        i = self.site_index.get(site)
        if i is None:
            i = self.site_index[site] = len(self.sites)
            self.sites.append(site)
        return i

    # -- memory ops -------------------------------------------------------------------------------------
    def check_access(self, op: str, ptrs, mask, from_undefined: bool | str = False,
                     block_ptr: bool = False) -> np.ndarray | None:
        """None when every live lane is inside its tensor; else the mask with the bad lanes off. ``from_undefined``:
        the addresses came from lanes a masked load left undefined (memops.py), which the finding then says."""
        if self.launch is None:
            return None
        p = ptrs.data
        live = None if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), p.shape)
        addrs = p.reshape(-1) if live is None else p[live]
        if addrs.size == 0:
            return None
        addrs = addrs.astype(np.uint64, copy=False)
        width = element_width(ptrs.get_element_ty())
        argmap = self.launch.argmap()
        base = shadow.base_of(ptrs)
        self.bases_read.add(base)
        cands = argmap.by_base(base) if base is not None else []
        if not cands and base is not None and argmap.owner(np.array([base], np.uint64), 1)[0] < 0:
            # a pointer cast from a pointer-table entry: checked against the tensor that entry names
            cands = guard.table_buffer(base, width, str(ptrs.get_element_ty()).replace("triton.language.", ""))
        owner = None  # the argument each lane lies in (-1: none)
        if cands:
            ok = cands[0].contains(addrs, width)
            for b in cands[1:]:
                ok |= b.contains(addrs, width)
        else:
            owner = argmap.owner(addrs, width)
            ok = owner >= 0
            if not ok.all():  # a pointer made from an integer: the tensors the launch was handed by address
                ok |= guard.reachable(addrs, width)
        if ok.all():
            return None
        if owner is None:
            owner = argmap.owner(addrs, width)
        if cands:  # outside the view but inside its storage, in no other argument: what the GPU reads (a warning)
            ok = ok | oob.outside_view(self, op, cands, addrs, ~ok & (owner < 0), width)
            if ok.all():
                return None
        # an atomic without mask= gets an all-true one from Triton's front end: it has no mask, as loads without one
        oob.record(self, op, cands, addrs[~ok], width, int(addrs.size), owner[~ok],
                   unmasked=op == "atomic" and (live is None or bool(live.all())), from_undefined=from_undefined,
                   descriptor=(getattr(ptrs, "attr", None) or {}).get("tdbg_descriptor"), block_ptr=block_ptr)
        bad_full = np.zeros(p.shape, dtype=bool)
        if live is None:
            bad_full = ~ok.reshape(p.shape)
            return ~bad_full
        bad_full[live] = ~ok
        return live & ~bad_full

    def poison_for(self, ptrs, np_dtype, oob_only: bool = False, block_ptr: bool = False):
        """Poison for the undefined lanes of a masked load at the current kernel line: (array, id).
        ``oob_only``: the only masked lanes are the out-of-bounds ones this sanitizer masked off (already
        an out_of_bounds finding at this line: no poison finding of its own)."""
        site = frames.site()
        key = site[:2] + (("oob",) if oob_only else ())  # (out-of-bounds lanes: an id apart from the lanes the
        sid = self.poison_sites.get(key)                  # mask leaves, helper-75: their values were told as those)
        if sid is None:
            sid = self._new_sid(key)
            self.poison_info.setdefault(sid, dict(file=site[0], line=site[1], function=site[2], pid=list(self.pid),
                                                  kernel=self.launch.kernel if self.launch else "?",
                                                  oob_only=oob_only))
        if block_ptr:  # a block pointer's load without padding_option= (its advice differs: no other= there)
            self.poison_info[sid]["block_ptr"] = True
        if np.dtype(np_dtype).kind in "iub":  # an integer load: its advice names an integer sentinel
            self.poison_info[sid]["integer"] = "bool" if np.dtype(np_dtype).kind == "b" else True
            self.int_sids.add(sid)  # (no NaN payload: its stored lanes are told from the shadow, poison.py)
        self.poison_used = True
        return poison_array(ptrs.data.shape, ptrs.get_element_ty(), np_dtype, sid), sid

    def _new_sid(self, key) -> int:
        """A poison id (1..62; 63 is initcheck's mark) for a load line (``key``: (file, line[, "uninit"]))."""
        sid = self.poison_sites[key] = min(len(self.poison_sites) + 1, initcheck.UNINIT_ID - 1)
        return sid

    def uninit_site(self, site, where: dict) -> tuple[int, dict]:
        """(poison id, info) of a load line that read initcheck's mark; ``where``: the first such element."""
        key = (site[0], site[1], "uninit")
        sid = self.poison_sites.get(key)
        if sid is None:
            sid = self._new_sid(key)
            self.poison_info[sid] = dict(file=site[0], line=site[1], function=site[2], pid=list(self.pid),
                                         kernel=self.launch.kernel if self.launch else "?", oob_only=False,
                                         uninit=where, read=0)
            self.uninit_sids.add(sid)
        return sid, self.poison_info[sid]

    def lane_site(self, site, kind: str, what: dict) -> int:
        """The poison id of a line whose op spoilt lanes: ``kind`` "shift" (amounts that leave them undefined,
        shifts.py) or "cast" (a value the integer type cannot hold, casts.py); ``what``: its first."""
        key = (site[0], site[1], kind)
        sid = self.poison_sites.get(key)
        if sid is None:
            sid = self._new_sid(key)
            self.poison_info[sid] = dict(file=site[0], line=site[1], function=site[2], pid=list(self.pid),
                                         kernel=self.launch.kernel if self.launch else "?", oob_only=False,
                                         **{kind: what})
            self.lane_sids.add(sid)
        return sid

    def uninit_entry(self, sid: int) -> dict:
        return self._poison_entry(self.poison_info[sid])

    def atomic_uninit_entry(self, site, op: str, where: dict) -> dict:
        return self._entry("uninit", site, where["tensor"], op, element=where["element"], alloc=where["alloc"])

    def record_atomic(self, changed: np.ndarray, op: str, cta: bool = False) -> None:
        """An atomic of the running program and the addresses whose bits it changed (memops.py reads them back),
        for the races of plain stores against other programs' atomics (races.py)."""
        if self.launch is None or changed.size == 0:
            return
        lo, hi = int(changed.min()), int(changed.max())
        self.atomic_span = (lo, hi) if self.atomic_span is None else (min(self.atomic_span[0], lo),
                                                                        max(self.atomic_span[1], hi))
        if self.write_count >= _MAX_RACE_ELEMENTS:
            return
        self.mem_seq += 1
        self.atomics.append((changed, len(self.pids) - 1, self._site_id(frames.site()), self.mem_seq, op, cta))
        self.write_count += int(changed.size)

    def record_atomic_value(self, ptrs, value, live) -> None:
        """The operand of an atomic add / exchange: its NaN/Inf lanes reach memory as a store's do (helper-107: an
        fp16 sum's NaN added by tl.atomic_add was told as "no NaN made of it was stored")."""
        reached = nan_origin.stored(value, live, ptrs.data.shape)
        self.nonfinite_reached |= reached
        if self.program_mode and reached:
            nan_stores.record(self, ptrs, value, live, frames.site())
        if self.lane_sids:
            shifts.check_store(self, ptrs, value, live)

    def record_store(self, ptrs, value, mask) -> None:
        if self.launch is None:
            return
        p = ptrs.data
        live = np.broadcast_to(np.asarray(mask, dtype=bool), p.shape) if mask is not None else None
        addrs = (p.reshape(-1) if live is None else p[live]).astype(np.uint64, copy=False)
        if addrs.size == 0:
            unstored.masked_off(self, ptrs)
            return
        if self.atomic_depth:  # Triton 3.9's tl.atomic_store reaches the masked store
            self.record_atomic(np.array(addrs, copy=True), "tl.atomic_store")
            return
        site = frames.site()
        lo, hi = int(addrs.min()), int(addrs.max())
        span = self.store_spans.get(site[:2])
        self.store_spans[site[:2]] = (lo, hi) if span is None else (min(span[0], lo), max(span[1], hi))
        released = self.locks.release(ptrs, live)
        # a store made holding a lock (or giving one back) is ordered against the other programs' under that lock
        if self.locks and not released and self.write_count < _MAX_RACE_ELEMENTS:
            races.record_locked(self, addrs, site)
        elif self.write_count < _MAX_RACE_ELEMENTS and not self.locks and not released:
            self.mem_seq += 1
            entry = (np.array(addrs, copy=True), len(self.pids) - 1, self._site_id(site),
                     race_bits.stored_bits(value, live, p.shape), self.mem_seq, race_bits.float_code(value),
                     races.block_places(live, p.shape), self.barriers)
            races.check_lanes(self, entry[0], entry[3], site, live, p.shape, entry[5])
            # under a word an exchange took: a test-and-set lock's critical section, or stores after a flag
            (self.locks.pending if self.locks.tentative else self.writes).append(entry)
            self.write_count += int(addrs.size)
        reached = nan_origin.stored(value, live, p.shape)
        self.nonfinite_reached |= reached
        if self.program_mode and reached:  # (nothing to record where no stored lane carries an event)
            nan_stores.record(self, ptrs, value, live, site)
        if self.poison_used:
            note_payload_stores(self, value, live, site)
        if self.uninit_sids:
            uninit_reads.check_store(self, ptrs, value, live)
        if self.lane_sids:
            shifts.check_store(self, ptrs, value, live)
        if self.int_sids:
            tell_int_stored(self, ptrs, value, live)

    # -- value events (from shadow.py) ------------------------------------------------------------------
    def nonfinite_event(self, name, out, ins, new, frame, from_finite: bool = True, example=None) -> int | None:
        """Record an op that made NaN/Inf in ``new`` lanes; returns the event's id (None past the cap).
        ``from_finite``: some of those lanes came from finite inputs only (0 / 0, not 0 * inf); ``example``: the
        lanes to show the first of (those, when there are some: a dot's first NaN lane can be Inf - Inf)."""
        if from_finite:
            self.made_from_finite = True
        if len(self.nonfinite) >= _MAX_NONFINITE_EVENTS:
            return None
        site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else ("?", 0, "?")
        idx = tuple(int(i) for i in np.argwhere(new if example is None else example)[0]) if new.ndim else ()
        vals, products = [], None
        if name == "dot" and len(ins) >= 2 and len(idx) >= 2:  # a lane of a dot is a row times a column: the
            products = nan_origin.dot_products(ins[0], ins[1], idx)   # inputs at that index say nothing (helper-94)
        for h in ins if products is None else ():
            f = shadow.as_float(h) if hasattr(h, "data") else None
            if f is None:
                continue
            try:
                vals.append(float(np.broadcast_to(f, new.shape)[idx]))
            except (ValueError, IndexError):
                pass
        res = shadow.as_float(out)
        value = float(res[idx]) if res is not None else float("nan")
        self.seq += 1
        self.nonfinite.append(dict(seq=self.seq, file=site[0], line=site[1], function=site[2], pid=list(self.pid),
                                   op=name, lanes=int(new.sum()), value=value, inputs=vals, index=list(idx),
                                   finite=from_finite,  # (program mode: nan_stores.py)
                                   kernel=self.launch.kernel if self.launch else "?", out_dtype=_dtype_name(out)))
        if products is not None:
            self.nonfinite[-1].update(products)
        return self.seq

    def times_zero_sid(self, sid: int, frame) -> int:
        """The pad id for lanes of load ``sid``'s undefined lanes multiplied by an exact 0 (shadow_pads._times_zero): one
        per load line and product line, its info naming that product (the one whose lanes reach a result: helper-122,
        a product only stored was named for the one entering tl.sum); where they reach a result: a warning."""
        info = self.poison_info.get(sid)
        if info is None or "uninit" in info:
            return sid
        line = frame.f_lineno if frame else 0
        key = (info["file"], info["line"], "times_zero", line)
        tz = self.poison_sites.get(key)
        if tz is None:
            tz = self._new_sid(key)
            source = frames.source_line(frame.f_code.co_filename, line) if frame else ""
            self.poison_info[tz] = dict(info, oob_only=False, times_zero=dict(line=line, source=source))
            self.times_zero_sids.add(tz)
        return tz

    def reduction_event(self, kind, x, defined_bad, undefined_bad, p, frame, integer: bool = False,
                        share=None, origin=None) -> None:
        """``share``: (share, padding's part, result) where the padding moves a result most (shadow_pads);
        ``origin``: nan_origin's event ids over ``x`` (the op that made a padding lane's NaN)."""
        site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else ("?", 0, "?")
        if defined_bad.any():
            e = self._entry("masked_reduction", site, None, kind, example=None, share=share or False)
            if e["share"] is not False:  # the most over the launch (False: one was no number, NaN padding)
                e["share"] = False if share is None else max(e["share"], share)
            if integer and kind in ("max", "min"):  # an index's bound with a sentinel other= (scattermoe's
                # tl.minimum(tl.max(E_idxs), E - 1), other=E): clamped, then used to bound a masked loop; a warning
                e["severity"], e["sentinel"] = "warning", True
            e["lanes"] += int(defined_bad.sum())
            if e["example"] is None:
                idx = tuple(int(i) for i in np.argwhere(defined_bad)[0])
                e["example"], e["pad_loads"] = (list(idx), float(x[idx])), list(self.pad_loads.items())[:3]
                e["pad_dots"] = shadow_pads.pad_dots(self)
                made = next((ev for ev in self.nonfinite if origin is not None and ev["seq"] == int(origin[idx])),
                            None)
                if made is not None and np.isnan(x[idx]):  # an op made it there: the cure is before that op
                    e["made"] = (made["line"], made["op"])
        if undefined_bad.any():
            zero_ok = None
            if kind in ("max", "argmax", "min", "argmin"):  # would the 0 today's code reads there ever win?
                with np.errstate(invalid="ignore"):
                    real = x[(p == 0) & ~np.isnan(x)]
                    # (None: under 8 real lanes to tell by, helper-142's 1x1 softmax; every one NaN already)
                    zero_ok = bool((real >= 0).all() if "max" in kind else (real <= 0).all()) if real.size >= 8 else None
            self._poison_reached(p[undefined_bad], f"tl.{kind} at line {site[1]}", zero_ok)

    def dot_event(self, bad, frame, operands=None) -> None:
        """``operands``: the dot's (a, b) as floats, for the finding's example lane (which operand, its value)."""
        def_a, def_b, und_a, und_b, pa, pb = bad
        site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else ("?", 0, "?")
        n_def = int(def_a.sum() + def_b.sum())
        if n_def:
            e = self._entry("masked_reduction", site, None, "dot", example=None, operands=[])
            e["lanes"] += n_def
            for name, d, x in (("first", def_a, None if operands is None else operands[0]),
                               ("second", def_b, None if operands is None else operands[1])):
                if not d.any():
                    continue
                if name not in e["operands"]:
                    e["operands"].append(name)
                if e["example"] is None and x is not None:
                    idx = tuple(int(i) for i in np.argwhere(d)[0])
                    e["example"] = (list(idx), float(np.broadcast_to(x, d.shape)[idx]), name)
                    e["pad_dots"] = shadow_pads.pad_dots(self)
        for und, p in ((und_a, pa), (und_b, pb)):
            if und.any():
                self._poison_reached(p[und], f"tl.dot at line {site[1]}")

    def _poison_reached(self, pad_values, where: str, zero_ok: bool | None = None) -> None:
        """``zero_ok``: for a max / min, whether every real lane it reduces is >= 0 (<= 0 for a min), so the 0
        today's code reads in the undefined lanes never wins (SageAttention's ``tl.max(tl.abs(x))``, where the
        -inf other= a max usually wants would become +inf; helper-94); the entry keeps whether that held each time."""
        ids = pad_values.astype(np.int64) - 2
        lanes = shadow_pads.with_merged(self.merged_sids, {int(s): int((ids == s).sum()) for s in np.unique(ids)})
        for sid, n in lanes.items():
            info = self.poison_info.get(sid)
            if info is None:
                continue
            e = self._poison_entry(info)
            e["lanes"] += n
            if where not in e["reaches"]:
                e["reaches"].append(where)
            if zero_ok is not None:
                e["zero_ok"] = e.get("zero_ok", True) and zero_ok

    def _poison_entry(self, info) -> dict:
        saved = self.pid
        self.pid = tuple(info["pid"])
        site = (info["file"], info["line"], info["function"])
        if "uninit" in info:  # a load that read initcheck's mark
            where = info["uninit"]
            e = self._entry("uninit", site, where["tensor"], "load", reaches=[], output=None, element=where["element"],
                            alloc=where["alloc"])
            e["read"] = info["read"]
            if where.get("carried"):
                e["carried"] = True
        elif "shift" in info:  # lanes a shift by the width or more left undefined, used (shifts.py): a warning
            what = info["shift"]
            e = self._entry("shift", site, None, what["op"], reaches=[], stored=None, example=what["example"],
                            width=what["width"], dtype=what["dtype"])
            e["severity"] = "warning"
        elif "cast" in info:  # lanes a cast to an integer type spoilt, used (casts.py): a warning
            what = info["cast"]
            e = self._entry("cast", site, None, what["op"], reaches=[], stored=None,
                            **{k: what[k] for k in ("example", "implicit", "src", "dst", "lo", "hi")})
            e["severity"] = "warning"
        elif "times_zero" in info:  # undefined lanes times an exact 0: 0 for finite garbage (a warning)
            e = self._entry("poison", site, None, "times_zero", reaches=[], output=None)
            products = e.setdefault("products", [])  # every product line of this load that reached a result
            if info["times_zero"] not in products:
                products.append(info["times_zero"])
            e["times_zero"], e["severity"] = min(products, key=lambda t: t["line"]), "warning"
        else:
            e = self._entry("poison", site, None, "load", reaches=[], output=None, block_ptr=info.get("block_ptr"),
                            integer=info.get("integer"))
        self.pid = saved
        return e

    # -- at the end of the case -------------------------------------------------------------------------
    def check_program_outputs(self, out: dict, neutral: dict) -> None:
        """Program mode: the launch's tensors as this sanitized run left them (``out``, name -> tensor) against the
        same launch run again with the plain interpreter's filler (``neutral``): poison that reached them."""
        output_checks.check(self, out, neutral, nonfinite=False)

    def _nonfinite_entry(self, first_bad, count: int, among: list | None = None) -> dict:
        """The nan_inf finding at the first op that made a NaN/Inf its inputs did not hold; ``first_bad``: the first
        NaN/Inf output element (name, index), None when the outputs are finite but wrong (``among``: the events
        that can explain that)."""
        events = among or self.nonfinite
        reached = [d for d in events if d["seq"] in self.nonfinite_reached]
        # the first whose NaN/Inf a store wrote: one a tl.where dropped (a guarded divide) is no cause
        ev = min(reached or events, key=lambda d: d["seq"])
        return self._event_entry(ev, first_bad and first_bad[0], output_count=count,
                                 output=first_bad and f"{first_bad[0]}[{', '.join(str(i) for i in first_bad[1])}]")

    def _event_entry(self, ev: dict, tensor: str | None, **first) -> dict:
        """The nan_inf entry at the op of event ``ev`` (``nonfinite_event``: its line, in its program), with the
        event's lanes and kernel (also program mode's stored NaN: nan_stores.entries)."""
        saved = self.pid
        self.pid = tuple(ev["pid"])
        e = self._entry("nan_inf", (ev["file"], ev["line"], ev["function"]), tensor, ev["op"], event=ev, **first)
        self.pid = saved
        e["lanes"] += ev["lanes"]
        e["kernel"] = ev["kernel"]
        return e


_LAUNCH_TOKENS = itertools.count(1)
_ALL_NAN = "All-NaN (slice|axis) encountered"


def _quiet_all_nan() -> None:
    """The filter, added where it is not (a test's catch_warnings may have taken it away since)."""
    if not any(f[0] == "ignore" and getattr(f[1], "pattern", None) == _ALL_NAN for f in warnings.filters):
        warnings.filterwarnings("ignore", message=_ALL_NAN, category=RuntimeWarning)


def _dtype_name(h) -> str:
    """The tl type name of a value handle's elements (float16, bfloat16, float32)."""
    if shadow._is_bf16(h):
        return "bfloat16"
    return str(getattr(getattr(h, "data", None), "dtype", "?"))
