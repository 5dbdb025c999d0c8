"""The sanitizers' wrappers of the interpreter's memory ops (loads, stores, atomics), and the locks a program holds.

Each wrapper asks the running Sanitizer (``_active["san"]``, sanitize.py) to check the op's lanes first: lanes out
of bounds are masked off before the interpreter touches memory, a masked load's undefined lanes get poison, what
a load or an atomic reads is checked for initcheck's mark of uninitialized memory, and plain stores are recorded
for the race check.

Locks. A program that takes a lock with ``tl.atomic_cas(lock, free, taken)`` (the compare succeeded: it read
``free``) and gives it back with ``tl.atomic_xchg`` / a store / a CAS on the same word (Triton's layer-norm backward
tutorial) orders its stores in between against every other program's: those stores are not races. ``HeldLocks``
keeps, per program, the lock words it holds; the race check skips stores made while one is held. A test-and-set
lock takes the word with ``tl.atomic_xchg(lock, taken)`` (it read another value); an exchange is also how a
program sets a flag, so such a word is held tentatively: the stores made while it is held wait (``pending``), are
dropped as ordered when the program gives the word back, and count as ordinary stores if it never does.

Waits for another program: ``spins.SpinWatch`` (the sanitizer polls it from the atomics and volatile loads here).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tritondbg.interp import byte_marks, guard, initcheck, race_reads, shadow, spins, uninit_reads, unstored
from tritondbg.interp.values import array

_active: dict[str, Any] = {"san": None}
_plain: dict[str, Any] = {"fill": None}  # the value a masked load without other= reads off-mask with no sanitizer
_saved: dict[str, Any] = {}
_saved_block: dict[str, Any] = {}  # Triton 3.8's tl.core._block_ptr methods (``_lowered_block_pointers``)


class HeldLocks:
    """Lock words (addresses) the running program holds."""

    def __init__(self):
        self.held: dict[int, tuple] = {}  # address -> the site (file, line, function) that took it
        self.tentative: set[int] = set()  # words an exchange changed: a test-and-set lock, or a flag
        self.pending: list[tuple] = []    # stores made while a tentative word is held (the race check's entries)

    def __bool__(self) -> bool:
        return bool(self.held)

    def exchanged(self, changed: np.ndarray) -> None:
        """A ``tl.atomic_xchg`` that gave back no held word: the words whose value it changed (``changed``, as
        ``_changed`` reads them back) are held tentatively."""
        self.tentative.update(int(a) for a in np.unique(changed).tolist() if int(a) not in self.held)

    def cas(self, ptr, cmp, old, live, site=None) -> None:
        """A compare-and-swap: where it succeeded on a word not held, the program takes it; on a held word, gives
        it back."""
        addrs = np.broadcast_to(np.asarray(ptr.data), np.shape(old.data))
        won = np.asarray(old.data) == np.broadcast_to(np.asarray(cmp.data), np.shape(old.data))
        if live is not None:
            won = won & np.broadcast_to(np.asarray(live, dtype=bool), won.shape)
        for a in np.unique(addrs[won]).tolist():
            if a in self.held:
                del self.held[a]
            else:
                self.held[a] = site

    def release(self, ptr, live) -> bool:
        """An exchange or a store: gives back the held words among its lanes (a tentative one proves a lock: the
        stores made while it was held are ordered, and dropped). True when it wrote a held word."""
        if not self.held and not self.tentative:
            return False
        addrs = np.asarray(ptr.data)
        if live is not None:
            addrs = addrs[np.broadcast_to(np.asarray(live, dtype=bool), addrs.shape)]
        written = set(np.unique(addrs).tolist())
        hit = self.held.keys() & written
        for a in hit:
            del self.held[a]
        taken = self.tentative & written
        if taken:
            self.tentative -= taken
            self.pending = []
        return bool(hit or taken)


def _changed(ptr, old, live) -> np.ndarray:
    """The addresses of an atomic's lanes (``live``: None for every lane) whose memory no longer holds the bits the
    atomic read: what it changed (a poll such as ``tl.atomic_add(flag, 0)`` or a failed CAS changes nothing)."""
    from triton.runtime.interpreter import _interpreter

    p = np.asarray(ptr.data)
    o = np.broadcast_to(np.asarray(old.data), p.shape)
    if live is not None:
        on = np.broadcast_to(np.asarray(live, dtype=bool), p.shape)
        p, o = p[on], o[on]
    addrs = np.ascontiguousarray(p.reshape(-1), dtype=np.uint64)
    if addrs.size == 0 or o.dtype.itemsize not in (1, 2, 4, 8):
        return addrs
    bits = np.dtype(f"u{o.dtype.itemsize}")
    now = _interpreter.load(addrs, np.ones(addrs.shape, dtype=bool), np.zeros(addrs.shape, bits), bits)
    return addrs[now != np.ascontiguousarray(o.reshape(-1)).view(bits)]


def _cta(rest) -> bool:
    """An atomic's trailing (sem, scope) arguments name scope="cta": atomic among one program's threads only."""
    return any(str(r).upper().endswith(".CTA") for r in rest)


def _block_pointer(ptrs) -> bool:
    """Whether this masked access is a block pointer's (``tl.load(block_ptr, boundary_check=...)``, Triton <= 3.8:
    the interpreter's ``create_tensor_pointer_load/store`` materialise its pointers and masks). Its pointers then
    carry the block's base tensor, so a lane out of bounds is named against it (helper-72: "in no argument tensor
    (1 element(s) past the end of matQ)")."""
    block = _active.get("block")
    if block is None:
        return False
    if shadow.base_of(ptrs) is None and getattr(ptrs, "attr", None) is not None:
        base = shadow.base_of(getattr(block, "base", None))
        if base is not None:
            ptrs.attr[shadow.BASE] = base
    return True


def _note_pad_load(san, other) -> None:
    """The kernel line of a masked load that pads lanes with its ``other=``, and that value (one number, or
    "varies"), for the masked_reduction its padding may reach (helper-132: "other=0 when the loaded value is reduced
    as it is" for a softmax whose other=0.0 went through an exp; the load was not named)."""
    import sys

    from tritondbg.interp import frames

    f = frames.kernel_frame(sys._getframe(1))
    if f is None:
        return
    data = array(other)
    if data is None:
        return
    value = "varies" if data.size and not (data == data.flat[0]).all() else (
        f"{data.flat[0].item():g}" if data.size and data.dtype.kind == "f" else
        str(data.flat[0].item()) if data.size else "?")
    san.pad_loads.setdefault((f.f_code.co_filename, f.f_lineno), value)


def _dropped_other():
    """The ``other=`` of a ``tl.load`` that Triton's frontend dropped on its way here: it passes
    ``other.handle if other else None``, and the interpreter's ``bool()`` of a one-element tensor is its value, so a
    scalar load's ``other=0`` (mamba's ``tl.load(seq_idx_ptr + ..., mask=pid >= 1, other=0)``, helper-68) arrived
    as no ``other`` and its masked-off lane was poisoned, the run failing on a correct kernel. Found in the
    frontend's frame (``load``: ``semantic.load`` / ``TritonSemantic.load``, Triton 3.6 to 3.9), else None."""
    import sys

    f = sys._getframe(2)
    for _ in range(3):
        if f is None:
            break
        if f.f_code.co_name == "load" and "semantic" in f.f_code.co_filename:
            other = f.f_locals.get("other")
            return getattr(other, "handle", None)
        f = f.f_back
    return None


def _undefined_inputs(san, ptrs, mask, what: str) -> bool | str:
    """A load's or store's mask, or its live lanes' addresses, computed from lanes a masked load left undefined
    (``tl.store(y, v, mask=x > 0)`` with x loaded without other=): on the GPU garbage decides which lanes run or
    where they go, and the poison (NaN > 0 is False; an int's minimum as an offset) hid it. A poison finding at
    the load, reaching this op. True when live lanes' addresses came from such lanes: the out-of-bounds finding
    they make then says so (not an int32 overflow)."""
    if san.launch is None or san.atomic_depth:
        return False
    pm = None if mask is None else shadow.pad_of(mask)
    pp = shadow.pad_of(ptrs)
    if pm is None and pp is None:
        return False
    from tritondbg.interp import frames

    shape = np.shape(ptrs.data)
    line = None
    if pm is not None:
        pm = np.broadcast_to(pm, shape)
        if (pm >= 3).any():
            line = frames.site()[1]
            san._poison_reached(pm[pm >= 3], f"the mask of {what} at line {line}")
    if pp is not None:
        und = np.broadcast_to(pp, shape) >= 3
        if mask is not None:
            und = und & np.broadcast_to(np.asarray(mask.data, dtype=bool), shape)
        if und.any():
            line = line or frames.site()[1]
            pads = np.broadcast_to(pp, shape)[und]
            san._poison_reached(pads, f"the addresses of {what} at line {line}")
            ids = {int(i) - 2 for i in np.unique(pads)}
            # "uninit": every such lane came from memory nothing wrote (initcheck's mark), not a load's missing
            # other= (helper-83: an index read one entry too far was told to "give that load other=")
            if all("uninit" in san.poison_info.get(i, {}) for i in ids):
                return "uninit"
            oob = [san.poison_info[i] for i in ids if san.poison_info.get(i, {}).get("oob_only")]
            if len(oob) == len(ids):  # values an out-of-bounds load read (helper-111: no poison finding to name)
                return f"oob:{oob[0]['line']}"
            return True
    return False


# ---------------------------------------------------------------------------------------------------------
# memory-op wrappers (Triton 3.6: load(ptrs, mask, other, cache_modifier, eviction_policy, is_volatile);
# 3.9: load(ptrs, mask, other, cache_policy, is_volatile); both reach here through *rest)
# ---------------------------------------------------------------------------------------------------------

def install() -> None:
    import triton.language as tl
    from triton.runtime import interpreter as I

    B = I.InterpreterBuilder
    if _saved:
        return
    names = ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas",
             "create_atomic_store", "create_atomic_load", "create_load", "create_store",
             "create_tensor_pointer_load", "create_tensor_pointer_store",  # (these two: Triton <= 3.8)
             "create_barrier")
    for n in names:
        if n in B.__dict__:
            _saved[n] = B.__dict__[n]
    orig = dict(_saved)

    def _mask_handle(m):
        return I.TensorHandle(np.ascontiguousarray(m), tl.int1)

    def create_masked_load(self, ptrs, mask, other, *rest, **kw):
        san = _active["san"]
        if san is None:
            fill = _plain["fill"]  # (program/filler_rerun.py: another value than the interpreter's)
            if fill is not None and other is None and mask is not None and not np.asarray(mask.data).all():
                # values of their own in each lane, 1 to 8 times the fill's sign (helper-120: attorch's MSE, `d = a
                # - b` over two loads filled alike, made 0 whatever the fill: "nothing depends on them" where the loss
                # did; helper-121: fills by load line cancel in 2 * a - b)
                ty = ptrs.get_element_ty()
                shape = np.asarray(ptrs.data).shape
                rng = _plain.get("rng")
                if rng is None:
                    rng = _plain["rng"] = np.random.default_rng(abs(int(fill)))
                np_ty = np.dtype(I._get_np_dtype(ty))
                if np_ty.kind in "iu":  # bits across the whole word: 1..8 unpacked to 0 by `(q >> 4) & 0xF`, as
                    info = np.iinfo(np_ty)  # the interpreter's 0 (helper-150: AWQ's int32 zero points)
                    lo, hi = (1, int(info.max)) if fill > 0 or info.min == 0 else (int(info.min), -1)
                    values = rng.integers(lo, hi, size=shape, dtype=np_ty, endpoint=True)
                    other = I.TensorHandle(values, ty)
                else:
                    values = rng.integers(1, 9, size=shape)
                    other = I.TensorHandle((np.sign(fill) * values).astype(np_ty), ty)
            return orig["create_masked_load"](self, ptrs, mask, other, *rest, **kw)
        user_partial = mask is not None and not np.asarray(mask.data).all()
        block = _block_pointer(ptrs)
        new = san.check_access("atomic" if san.atomic_depth else "load", ptrs, None if mask is None else mask.data,
                               from_undefined=_undefined_inputs(san, ptrs, mask, "tl.load"), block_ptr=block)
        asked = None if mask is None else np.broadcast_to(np.asarray(mask.data, dtype=bool), ptrs.data.shape)
        if new is not None:
            mask = _mask_handle(new)
        sid = 0
        m = None if mask is None else np.broadcast_to(np.asarray(mask.data, dtype=bool), ptrs.data.shape)
        partial = m is not None and not m.all()
        if other is None and partial:
            other = _dropped_other()
        # lanes the mask lets through and the sanitizer masked off (out of bounds): undefined too, under an id of
        # their own whose findings the out_of_bounds one stands for
        oob = (~m if asked is None else asked & ~m) if new is not None and m is not None else None
        oob_sid = 0
        if oob is not None and oob.any() and not san.atomic_depth:
            oob_poison, oob_sid = san.poison_for(ptrs, I._get_np_dtype(ptrs.get_element_ty()), oob_only=True,
                                                 block_ptr=block)
        if other is None and partial and not san.atomic_depth:
            dtype_tt = ptrs.get_element_ty()
            if user_partial:
                poison, sid = san.poison_for(ptrs, I._get_np_dtype(dtype_tt), block_ptr=block)
                if oob_sid:
                    poison = np.where(oob, oob_poison, poison)
            else:
                poison, sid = oob_poison, oob_sid
            other = I.TensorHandle(poison, dtype_tt)
        out = orig["create_masked_load"](self, ptrs, mask, other, *rest, **kw)
        if rest and rest[-1] is True and san.launch is not None and not san.atomic_depth:  # is_volatile: a poll?
            san.spin.poll(san, "a volatile tl.load", ptrs, out, m)
        if san.launch is not None and not san.atomic_depth:  # another program's store of what it read (race_reads.py)
            from tritondbg.interp import frames

            race_reads.record_read(san, ptrs, out, m, frames.site())
        if partial:
            if not sid and len(san.pad_loads) < 8:  # its other= fills padding: a masked_reduction names it
                _note_pad_load(san, other)
            fill = sid + 2 if sid else 2  # shadow.py: 2 padding, 2 + poison id undefined
            pad = np.where(m, 0, fill).astype(np.uint8)
            if oob_sid:
                # out-of-bounds lanes hold other= (or poison), yet are no padding and no lanes the mask left:
                # undefined, of their own id (helper-72: a masked_reduction "filled by a masked load's other="
                # followed mlstm's unmasked out-of-bounds block loads; helper-75: megablocks' `<=` mask)
                pad[oob] = oob_sid + 2
            out.attr[shadow.PAD] = pad
        if initcheck.installed() and not san.atomic_depth and san.launch is not None:
            uninit_reads.check_load(san, ptrs, out, m)
        return out

    def create_masked_store(self, ptrs, value, mask, *rest, **kw):
        san = _active["san"]
        if san is not None:
            new = san.check_access("atomic" if san.atomic_depth else "store", ptrs,
                                   None if mask is None else mask.data,
                                   from_undefined=_undefined_inputs(san, ptrs, mask, "tl.store"),
                                   block_ptr=_block_pointer(ptrs))
            if new is not None:
                mask = _mask_handle(new)
            san.record_store(ptrs, value, None if mask is None else mask.data)
            byte_marks.record(ptrs, None if mask is None else mask.data)  # small-dtype memory a launch wrote
            if san.journal is not None:
                san.journal.record(ptrs, None if mask is None else mask.data)
        return orig["create_masked_store"](self, ptrs, value, mask, *rest, **kw)

    def create_barrier(self, *args, **kw):  # tl.debug_barrier: a program's stores either side are ordered
        san = _active["san"]
        if san is not None:
            san.barriers += 1
        return orig["create_barrier"](self, *args, **kw)

    def create_atomic_rmw(self, rmw_op, ptr, val, mask, *rest, **kw):
        san = _active["san"]
        if san is not None:
            if mask is not None and not np.asarray(mask.data).any():  # every lane masked off (unstored.py)
                unstored.masked_off(san, ptr)
            new = san.check_access("atomic", ptr, None if mask is None else mask.data)
            if new is not None:
                mask = _mask_handle(new)
            byte_marks.record(ptr, None if mask is None else mask.data)
            if san.journal is not None:
                san.journal.record(ptr, None if mask is None else mask.data)
        old = orig["create_atomic_rmw"](self, rmw_op, ptr, val, mask, *rest, **kw)
        if san is None or san.launch is None:
            return old
        op, live = str(rmw_op).rsplit(".", 1)[-1].lower(), None if mask is None else mask.data
        if op != "xchg" and initcheck.installed():  # an exchange does not read what it replaces
            uninit_reads.check_atomic(san, op, ptr, old, live)
        changed = _changed(ptr, old, live)
        if op == "xchg" and not san.locks.release(ptr, live):  # tl.atomic_xchg(lock, 0): given back
            san.locks.exchanged(changed)  # or taken, test-and-set (or a flag set)
        what = spins.atomic_name(rmw_op)
        san.record_atomic(changed, what, _cta(rest))
        if op in ("add", "fadd", "xchg"):
            san.record_atomic_value(ptr, val, live)
        san.spin.poll(san, what, ptr, old, live)
        return old

    def create_atomic_cas(self, ptr, cmp, val, *rest, **kw):
        san = _active["san"]
        live = None
        if san is not None:
            new = san.check_access("atomic", ptr, None)
            if new is not None:  # CAS has no mask: point the bad lanes at a scratch word instead
                data = np.array(ptr.data, dtype=np.uint64, copy=True)
                data[~np.broadcast_to(new, data.shape)] = np.uint64(guard.SCRATCH.ctypes.data)
                ptr = I.TensorHandle(data, ptr.dtype)
            byte_marks.record(ptr, None)  # (the bad lanes point at a scratch word)
            if san.journal is not None:
                san.journal.record(ptr, None)
            live = new
        old = orig["create_atomic_cas"](self, ptr, cmp, val, *rest, **kw)
        if san is not None and san.launch is not None:
            from tritondbg.interp import frames

            san.locks.cas(ptr, cmp, old, live, frames.site())
            san.record_atomic(_changed(ptr, old, live), "tl.atomic_cas", _cta(rest))
            if initcheck.installed():
                uninit_reads.check_atomic(san, "cas", ptr, old, live)
            san.spin.poll(san, "tl.atomic_cas", ptr, old, live)
        return old

    def _atomic(name):
        def wrapper(self, *args, **kw):
            san = _active["san"]
            if san is not None:
                san.atomic_depth += 1
            try:
                return orig[name](self, *args, **kw)
            finally:
                if san is not None:
                    san.atomic_depth -= 1
        return wrapper

    def _unmasked(name):
        def wrapper(self, *args, **kw):
            san = _active["san"]
            if san is not None:
                san.unmasked_depth += 1
            try:
                return orig[name](self, *args, **kw)
            finally:
                if san is not None:
                    san.unmasked_depth -= 1
        return wrapper

    def _block(name):
        def wrapper(self, ptr, *args, **kw):
            saved, _active["block"] = _active.get("block"), ptr
            try:
                return orig[name](self, ptr, *args, **kw)
            finally:
                _active["block"] = saved
        return wrapper

    B.create_masked_load, B.create_masked_store = create_masked_load, create_masked_store
    for n in ("create_tensor_pointer_load", "create_tensor_pointer_store"):
        if n in orig:
            setattr(B, n, _block(n))
    _lowered_block_pointers(tl)
    for n in ("create_load", "create_store"):  # tl.load/tl.store without mask=: they call the masked ones
        if n in orig:
            setattr(B, n, _unmasked(n))
    if "create_barrier" in orig:
        B.create_barrier = create_barrier
    if "create_atomic_rmw" in orig:
        B.create_atomic_rmw = create_atomic_rmw
    if "create_atomic_cas" in orig:
        B.create_atomic_cas = create_atomic_cas
    for n in ("create_atomic_store", "create_atomic_load"):  # 3.9: these call the masked load/store
        if n in orig:
            setattr(B, n, _atomic(n))


def _lowered_block_pointers(tl) -> None:
    """Triton 3.8 lowers a block pointer's load / store in Python (``tl.core._block_ptr``: its pointers and
    boundary mask, then a plain masked load), past ``create_tensor_pointer_load``: the access is marked as a block
    pointer's there (helper-114: trident's loads were told "mask without other=", advised other=)."""
    cls = getattr(tl.core, "_block_ptr", None)
    if cls is None:
        return
    for n in ("load", "store"):
        orig = cls.__dict__.get(n)
        if orig is None:
            continue
        _saved_block[n] = orig

        def wrapper(self, *args, _orig=orig, **kw):
            saved, _active["block"] = _active.get("block"), _BlockView(getattr(self.base, "handle", None))
            try:
                return _orig(self, *args, **kw)
            finally:
                _active["block"] = saved
        setattr(cls, n, wrapper)


class _BlockView:
    """What ``_block_pointer`` reads of a block pointer: its base pointer's handle."""

    def __init__(self, base):
        self.base = base


def uninstall() -> None:
    import triton.language as tl
    from triton.runtime import interpreter as I

    for n, f in _saved.items():
        setattr(I.InterpreterBuilder, n, f)
    _saved.clear()
    for n, f in _saved_block.items():
        setattr(tl.core._block_ptr, n, f)
    _saved_block.clear()
