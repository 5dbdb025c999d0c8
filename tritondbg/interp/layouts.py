"""A permuted tensor handed with some of its strides but not the one a kernel must apply.

A transposed or permuted view (``x.t()``, ``x.transpose(1, 2)``, ``x.permute(...)``) covers its whole storage, so a
kernel that ignores one of its strides (``x_ptr + row * stride_row + cols``: the columns taken as contiguous) reads
only the tensor's own elements, in the wrong places: no out-of-bounds, no outside_view, silent wrong values
(helper-126: xformers' softmax backward handed a non-contiguous gradient). What a launch says about it: the kernel
names the tensor and a stride-named integer whose name speaks of it (``stride_xm`` of ``x_ptr``) equal to one of its
strides (it addresses the tensor by strides), but no stride-named integer it names equals the stride of a dimension
whose stride is neither 1 nor the one a contiguous tensor of that shape has there. A warning at the kernel's
``def``, once per kernel and argument.

Left alone: a kernel handed none of the tensor's strides (flat elementwise kernels over a dense view, with an output
made by ``empty_like``, are right on any dense layout); views with gaps (slices: outside_view says where they read);
a stride equal to some other stride-named integer (a coincidence passes, silently).
"""
from __future__ import annotations


def _contiguous_strides(shape) -> list[int]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return out[::-1]


def _ints(name: str, value) -> list[tuple[str, int]]:
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


def _related(name: str, tensor: str) -> bool:
    """A stride argument's name that speaks of ``tensor``: ``stride_xm``, ``x_row_stride``, ``stride_x`` of x_ptr."""
    base = tensor.lower().removesuffix("_ptr").removesuffix("ptr").strip("_") or tensor.lower()
    return any(tok.startswith(base) for tok in name.lower().split("[")[0].split("_") if tok != "stride")


def unhanded(buf, strides: dict[str, int]) -> dict | None:
    """For a dense, non-contiguous view ``buf`` (memory.Buffer) handed some of its strides by stride-named integers
    whose names speak of it (``strides``: name -> value, those the kernel names): its first dimension whose stride
    is neither 1 nor a contiguous tensor's there and that no stride-named integer equals; None otherwise. (A
    dimension of stride 1 is one a kernel may take as contiguous by design: ``w.t()`` read as the row-major ``w``.)"""
    if not buf.dense or any(s < 0 for s in buf.strides):
        return None
    dims = [d for d, n in enumerate(buf.shape) if n > 1]
    if len(dims) < 2:
        return None
    want = _contiguous_strides([buf.shape[d] for d in dims])
    handed = {d: [k for k, v in strides.items() if v == buf.strides[d]] for d in dims}
    if not any(_related(k, buf.name) for names in handed.values() for k in names):
        return None
    for d, w in zip(dims, want):
        if buf.strides[d] not in (1, w) and not handed[d]:
            given = [f"{next((n for n in names if _related(n, buf.name)), names[0])} = {buf.strides[k]} "
                     f"({buf.name}.stride({k}))" for k, names in handed.items() if names]
            return {"dim": d, "stride": buf.strides[d], "contiguous": w, "given": given[:3]}
    return None


def entries(san, launch) -> None:
    """The launch's warnings (sanitize.launch_begin)."""
    from tritondbg.interp import kernel_stores
    from tritondbg.missing_return import kernel_line

    fn = launch.fn
    if fn is None:
        return
    strides = {}
    for name, value in launch.args.items():
        if "stride" in name.lower() and not kernel_stores.unused(fn, name):
            strides.update(_ints(name, value))
    if not strides:
        return
    for buf in launch.argmap().buffers:
        if buf.numel < 2 or kernel_stores.unused(fn, buf.name):
            continue
        u = unhanded(buf, strides)
        if u is None:
            continue
        line = (kernel_line(fn, 1) or (None, 0))[1]
        e = san._entry("layout", (launch.file, line, launch.kernel), buf.name, "unhanded_stride", shape=list(buf.shape),
                       strides=list(buf.strides), **u)
        e["severity"], e["pid"], e["programs"] = "warning", [], set()


def message(e: dict) -> str:
    given = ", ".join(e["given"])
    return (f"{e['tensor']} is a permuted view (shape {tuple(e['shape'])}, strides {tuple(e['strides'])}: a "
            f"transpose?) and the kernel was handed {given} but no stride-named integer equal to its "
            f"stride({e['dim']}) = {e['stride']}: a kernel that takes that dimension's stride as {e['contiguous']} "
            f"(a contiguous tensor's) reads and writes {e['tensor']}'s own elements in the wrong places, with no "
            f"out-of-bounds to tell. Hand {e['tensor']}.stride({e['dim']}) to the kernel and use it, or make "
            f"{e['tensor']} contiguous in the wrapper")
