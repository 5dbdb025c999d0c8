"""What a program's CUDA path asks of torch that a CPU build lacks, for the "cuda" tensors cpu_device.py serves.

Its tensors say cuda:0, so a library takes its CUDA path, and some of those call torch functions only CUDA has
(helper-79): Liger-Kernel's fused linear cross entropy accumulates its weight gradient with
``torch.addmm(..., out_dtype=torch.float32, out=...)`` under bf16 autocast ("Could not run 'aten::addmm.dtype_out'
with arguments from the 'CPU' backend"); scripts load checkpoints with ``torch.load(f, map_location="cuda")``
("Attempting to deserialize object on a CUDA device"). And torch pickles a tensor's Python attributes, so a
checkpoint saved under tritondbg carried cpu_device's tag into the user's file.

- ``out_dtype_matmul``: ``mm`` / ``addmm`` / ``bmm`` / ``baddbmm`` with ``out_dtype`` that the CPU refuses run on
  float32 copies (products exact, float32 sums, as the GPU's tensor cores accumulate) and are cast to ``out_dtype``;
- ``integer_histc``: ``torch.histc`` of an integer tensor counts a float32 copy;
- ``torch.load`` onto a CUDA ``map_location`` (a name, a device, a dict's values) loads onto the CPU and tags what
  it returns; one on "cpu" untags it; a checkpoint whose storages name CUDA loads onto the CPU, tagged;
- ``torch._utils._get_obj_state`` (what ``torch.save`` pickles of a tensor) leaves the tag out;
- ``ctx.saved_tensors`` gives back the tag of what ``ctx.save_for_backward`` saved on "cuda" (``_keep_saved_tags``).
"""
from __future__ import annotations

import functools


def out_dtype_matmul(func, args, kwargs, torch):
    """``func`` (a matmul given ``out_dtype``) on float32 copies of its operands, cast to ``out_dtype``, into
    ``out=`` when given; for the CPU, which has no kernel for those overloads."""
    kwargs = dict(kwargs)
    dtype, out = kwargs.pop("out_dtype"), kwargs.pop("out", None)

    def up(v):
        return v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v

    result = func(*(up(a) for a in args), **{k: up(v) for k, v in kwargs.items()}).to(dtype)
    if out is None:
        return result
    out.copy_(result)
    return out


def integer_histc(func, args, kwargs, torch):
    """``torch.histc`` of an integer tensor, which CUDA counts and the CPU refuses ("histogram_cpu" not implemented
    for 'Long'; helper-146: native-sparse-attention's top-k scores): counted on a float32 copy, in the input's dtype
    as CUDA returns it (bins of integers: exact in float32 below 2**24)."""
    x = args[0]
    return func(x.float(), *args[1:], **kwargs).to(x.dtype)


def matmuls(torch) -> frozenset:
    """The functions (module and method forms) ``out_dtype_matmul`` stands in for."""
    names = ("mm", "addmm", "bmm", "baddbmm")
    return frozenset(f for n in names for f in (getattr(torch, n, None), getattr(torch.Tensor, n, None))
                     if f is not None)


def _cuda_location(location, cpu) -> bool:
    """Whether a ``map_location`` sends storages to CUDA (a name, a device, or a dict mapping to one)."""
    if isinstance(location, dict):
        return any(cpu(v) is not v for v in location.values())
    return location is not None and not callable(location) and cpu(location) is not location


def install(torch, tag_one, cpu, name: str) -> None:
    """Patch ``torch.load`` and the pickled state (``tag_one(t, on)`` sets cpu_device's tag, the attribute ``name``,
    on a tensor; ``cpu(device)`` is ``device`` with CUDA replaced by the CPU)."""

    def tag(value, on: bool) -> None:
        tag_all(value, on, tag_one, torch)

    import torch._utils as torch_utils

    get_state = torch_utils._get_obj_state

    def _get_obj_state(obj):
        state = get_state(obj)
        if isinstance(state, dict) and name in state:
            return {k: v for k, v in state.items() if k != name}
        if isinstance(state, tuple) and state and isinstance(state[0], dict) and name in state[0]:
            return ({k: v for k, v in state[0].items() if k != name}, *state[1:])
        return state

    torch_utils._get_obj_state = _get_obj_state
    load = torch.load

    @functools.wraps(load)
    def torch_load(f, map_location=None, *args, **kwargs):
        if _cuda_location(map_location, cpu):
            result = load(f, "cpu", *args, **kwargs)
            tag(result, True)
            return result
        try:
            result = load(f, map_location, *args, **kwargs)
        except RuntimeError as exc:  # saved from CUDA tensors on a GPU, loaded where it lands: on "cuda" there
            if "on a CUDA device" not in str(exc):
                raise
            if hasattr(f, "seek"):
                f.seek(0)
            result = load(f, "cpu", *args, **kwargs)
            tag(result, True)
            return result
        if map_location is not None and not callable(map_location):
            tag(result, False)  # onto the host: host tensors, whatever their pickled attributes said
        return result

    torch.load = torch_load
    _save_cuda_locations(torch, lambda t: getattr(t, name, False))
    _keep_saved_tags(torch, lambda t: getattr(t, name, False), tag_one)


def _save_cuda_locations(torch, on_cuda) -> None:
    """``torch.save`` writes the storages of "cuda" tensors with the location a GPU's would have (``cuda:0``), so
    the checkpoint loads back as it would on a GPU: without map_location onto "cuda" (``torch_load`` above), where
    the tag left out of the pickle had it come back on the host, and the launch that took it was refused (helper-136:
    gemlite's own serialization test)."""
    import torch.serialization as ser

    save = torch.save

    @functools.wraps(save)
    def torch_save(obj, f, *args, **kwargs):
        cuda: set = set()
        try:
            tag_all(obj, True, lambda t, on: cuda.add(t.untyped_storage().data_ptr()) if on_cuda(t) else None, torch)
        except Exception:  # noqa: BLE001 - saved as the CPU tensors they are
            cuda.clear()
        location = ser.location_tag
        if not cuda or not callable(location):
            return save(obj, f, *args, **kwargs)

        def location_tag(storage):
            try:
                if storage.data_ptr() in cuda:
                    return "cuda:0"
            except Exception:  # noqa: BLE001
                pass
            return location(storage)

        ser.location_tag = location_tag
        try:
            return save(obj, f, *args, **kwargs)
        finally:
            ser.location_tag = location

    torch.save = torch_save


def _keep_saved_tags(torch, on_cuda, tag_one) -> None:
    """``ctx.saved_tensors`` in a custom Function's backward: a tensor saved as an output of forward comes back as
    a new tensor object (autograd saves outputs without their graph), without the tag, so a "cuda" output read
    cpu there and the launch that took it was refused as mixing devices (helper-114: trident's softmax backward).
    Which saved tensors were on "cuda" is noted at ``save_for_backward`` and put back on what comes out."""
    from torch.autograd import function as F

    save, base = F.FunctionCtx.save_for_backward, getattr(torch._C._FunctionBase, "saved_tensors", None)
    if base is None or not hasattr(F, "BackwardCFunction"):
        return

    @functools.wraps(save)
    def save_for_backward(self, *tensors):
        save(self, *tensors)
        try:  # (set each time: a second save replaces the first one's marks)
            self._tdbg_saved_cuda = tuple(bool(on_cuda(t)) for t in tensors)
        except AttributeError:
            pass

    def saved_tensors(self):
        out = base.__get__(self)
        for t, on in zip(out, getattr(self, "_tdbg_saved_cuda", ())):
            if on and t is not None and not on_cuda(t):
                tag_one(t, True)
        return out

    F.FunctionCtx.save_for_backward = save_for_backward
    F.BackwardCFunction.saved_tensors = property(saved_tensors, doc=getattr(base, "__doc__", None))


def tag_all(value, on: bool, tag_one, torch) -> None:
    """``tag_one(t, on)`` on every tensor in a loaded object (dicts, lists, tuples, a state_dict, a Module)."""
    seen = set()

    def walk(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, torch.Tensor):
            tag_one(v, on)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple, set)):
            for x in v:
                walk(x)
        elif isinstance(v, torch.nn.Module):
            for x in (*v.parameters(), *v.buffers()):
                walk(x)

    walk(value)
