"""A permuted tensor whose strides a kernel was not handed.

A transposed or permuted view (``x.t()``, ``x.transpose(1, 2)``, ``x.permute(...)``, an ``empty_like`` of one) covers
its whole storage, so a kernel that ignores one of its strides (``x_ptr + row * stride_row + cols``: the columns taken
as contiguous) reads and writes only the tensor's own elements, in the wrong places: no out-of-bounds, no
outside_view, silent wrong values (helper-126: xformers' softmax backward handed a non-contiguous gradient). What a
launch says about it: the kernel addresses memory by strides (it names stride-named integers: ``stride_xm``,
``x_row_stride``, a bare ``stride``, ``ldx``), names the tensor, and is handed no such integer equal to the stride of a
dimension whose stride is neither 1 nor the one a contiguous tensor of that shape has there. Where stride arguments
speak of the tensor (``stride_bk`` of ``b_ptr``, or a bare ``stride`` for every tensor), only those count: nn.Linear's
``w.t()`` has the row stride of the activation beside it (helper-128). A stride the kernel could build from its
constexprs (``D``, ``H * D``: a layout it knows) counts as handed. A warning at the kernel's ``def``, once per kernel
and argument.

Left alone: a kernel handed no stride-named integer (flat elementwise kernels over a dense view, with an output made
by ``empty_like``, are right on any dense layout); views with gaps (slices: outside_view says where they read); a
dimension of stride 1 (``w.t()`` read as the row-major ``w`` by design).
"""
from __future__ import annotations


def _contiguous_strides(shape) -> list[int]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return out[::-1]


def ints(name: str, value) -> list[tuple[str, int]]:
    """(name, value) of an integer argument, or of each integer in a tuple argument (Triton 3.9's ``x.stride()``)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [(name, value)]
    value = getattr(value, "value", value)  # a constexpr
    if isinstance(value, int) and not isinstance(value, bool):
        return [(name, value)]
    if isinstance(value, tuple):
        return [(f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, int) and not isinstance(v, bool)]
    return []


def stride_named(name: str) -> bool:
    low = name.lower().split("[")[0]
    return "stride" in low or any(tok == "ld" or (tok.startswith("ld") and len(tok) <= 3) for tok in low.split("_"))


def _base(tensor: str) -> str:
    return tensor.lower().removesuffix("_ptr").removesuffix("ptr").strip("_") or tensor.lower()


def _tokens(name: str) -> list[str]:
    toks = [t for t in name.lower().split("[")[0].split("_") if t and t not in ("stride", "strides", "ld")]
    return [t.removeprefix("ld") if t.startswith("ld") and len(t) <= 3 else t for t in toks]


def _related(name: str, tensor: str, bases: frozenset = frozenset()) -> bool:
    """A stride argument's name that speaks of ``tensor`` (``stride_xm``, ``x_row_stride``, ``ldx`` of x_ptr), or of
    none of the launch's tensors (``bases``: a bare ``stride``, ``stride_tok``, ``row_stride``: every tensor's,
    helper-130: tutorial 06's backward hands one set of strides for q, k, v and o)."""
    toks = _tokens(name)
    if any(t.startswith(_base(tensor)) for t in toks):
        return True
    return not any(t.startswith(b) for t in toks for b in bases)


def unhanded(buf, strides: dict[str, int], built: frozenset = frozenset(), bases: frozenset = frozenset(),
             twins: tuple = ()) -> dict | None:
    """For a dense, non-contiguous view ``buf`` (memory.Buffer): its first dimension whose stride is neither 1 nor a
    contiguous tensor's there, that no stride argument equals (``strides``: name -> value, those the kernel names;
    only those that speak of ``buf``, or of ``twins``, the launch's tensors of its shape and strides, where there are
    any: helper-140, Cut Cross-Entropy addresses dC = zeros_like(c) with c's strides) and that ``built`` (what the
    kernel's constexprs make) does not hold; None otherwise."""
    if not buf.dense or any(s < 0 for s in buf.strides):
        return None
    dims = [d for d, n in enumerate(buf.shape) if n > 1]
    if len(dims) < 2:
        return None
    want = _contiguous_strides([buf.shape[d] for d in dims])
    pool = {k: v for k, v in strides.items() if any(_related(k, n, bases) for n in (buf.name, *twins))} or strides
    handed = {d: [k for k, v in pool.items() if v == buf.strides[d]] for d in dims}
    for d, w in zip(dims, want):
        if buf.strides[d] not in (1, w) and not handed[d] and buf.strides[d] not in built:
            given = [f"{names[0]} = {buf.strides[k]} (its stride({k}))" for k, names in handed.items() if names]
            others = [f"{k} = {v}" for k, v in pool.items()][:3]
            return {"dim": d, "stride": buf.strides[d], "contiguous": w, "given": given[:3],
                    "others": [] if given else others}
    return None


def _built(fn, args: dict) -> frozenset:
    """The integers a kernel could build a stride from: its constexpr integers (``D``) and the products of two of
    its integers greater than 1 (``H * D``, a runtime ``H`` too: helper-130)."""
    from tritondbg.interp import kernel_stores

    func = kernel_stores.function(fn)
    notes = getattr(func, "__annotations__", {}) or {}
    consts, ints_ = [], []
    for name, value in args.items():
        v = getattr(value, "value", value)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 1:
            continue
        ann = notes.get(name)
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
        (consts if text.endswith("constexpr") else ints_).append(v)
    both = consts + ints_
    return frozenset(consts) | frozenset(a * b for i, a in enumerate(both) for b in both[i + 1:])


def entries(san, launch) -> None:
    """The launch's warnings (sanitize.launch_begin)."""
    from tritondbg.interp import kernel_stores
    from tritondbg.missing_return import kernel_line

    fn = launch.fn
    if fn is None:
        return
    strides = {}
    for name, value in launch.args.items():
        if stride_named(name) and not kernel_stores.unused(fn, name):
            strides.update(ints(name, value))
    if not strides:
        return
    built = None
    bases = frozenset(_base(b.name) for b in launch.argmap().buffers)
    for buf in launch.argmap().buffers:
        if buf.numel < 2 or not buf.dense or kernel_stores.unused(fn, buf.name):
            continue
        if built is None:
            built = _built(fn, launch.args)
        twins = tuple(b.name for b in launch.argmap().buffers
                      if b is not buf and tuple(b.shape) == tuple(buf.shape) and tuple(b.strides) == tuple(buf.strides))
        u = unhanded(buf, strides, built, bases, twins)
        if u is None:
            continue
        line = (kernel_line(fn, 1) or (None, 0))[1]
        before = len(san.agg)
        e = san._entry("layout", (launch.file, line, launch.kernel), buf.name, "unhanded_stride", shape=list(buf.shape),
                       strides=list(buf.strides), **u)
        e["severity"], e["pid"], e["programs"] = "warning", [], set()
        if len(san.agg) > before:
            san.layout_new.append((e, buf.data_ptr))


def drop_unread(san) -> None:
    """At the launch's end: this launch's layout warnings on a tensor none of its pointers came from (helper-139:
    kernl hands x as the bias placeholder under HAS_BIAS=False, named in the source, never read). Kept where an
    access's pointer had no known argument (it might have been that tensor's)."""
    new, san.layout_new = san.layout_new, []
    if None in san.bases_read:
        return
    for e, base in new:
        if base not in san.bases_read:
            key = next((k for k, v in san.agg.items() if v is e), None)
            if key is not None:
                del san.agg[key]


def message(e: dict) -> str:
    t = e["tensor"]
    handed = (f"was handed {', '.join(e['given'])}" if e["given"] else
              f"was handed none of its strides (only {', '.join(e['others'])})")
    return (f"the tensor handed as {t} is a permuted view (shape {tuple(e['shape'])}, strides {tuple(e['strides'])}: a "
            f"transpose?) and the kernel {handed}, no stride argument equal to its stride({e['dim']}) = "
            f"{e['stride']}: a kernel that takes that dimension's stride as {e['contiguous']} (a contiguous tensor's) "
            f"addresses {t}'s own elements in the wrong places, with no out-of-bounds to tell. Hand its "
            f"stride({e['dim']}) to the kernel and use it, or make the tensor contiguous in the wrapper")
