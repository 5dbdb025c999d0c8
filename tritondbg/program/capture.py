"""`tritondbg capture`: each distinct launch of a kernel saved as a standalone reproducer.

For a launch it keeps (``replay.py`` reads it back as a Scenario):

- ``data/NAME.json``: the kernel (module, qualname, file:line), the call site and user stack, the resolved
  grid, every argument encoded (tensors by reference with shape/dtype/strides/storage offset/device,
  scalars, constexprs, triton/torch dtypes, tuples, dataclass-like descriptors), launch options, the
  autotune config that ran, what could not be saved;
- ``data/NAME.pt``: the bytes of each storage the tensor arguments view (one buffer per storage, so views
  and in-place aliasing replay as they ran), before the launch, and after it for the storages it wrote;
- ``src/MODULE.py``: the kernel's module file (used when the module is not importable at replay);
- ``NAME.py``: a scenario file (``tritondbg interpret NAME.py``).

A signature is distinct by tensor dtype/shape/strides/device, integer values, the grid and the config.
Which launches are saved (the limits, "distinct" over the program's processes) is ``capturer.py``'s.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import shutil
import sys
import time
from typing import Any

from tritondbg.configs import config_dict
from tritondbg.program import attach, autotuned, claims, kernel_globals, stacks, tables

_ALIGN = 128
_INT_OF_SIZE = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


# ---------------------------------------------------------------------------------------------------------
# encoding arguments
# ---------------------------------------------------------------------------------------------------------

class Snapshot:
    """Tensor arguments grouped by storage, each storage's bytes copied to the host before the launch."""

    def __init__(self):
        self.tensors: list[Any] = []      # the live tensors, in encounter order
        self.specs: list[dict] = []       # per tensor: group, byte offset in the group buffer, dtype, shape...
        self.groups: list[dict] = []      # per storage: device, start byte, end byte
        self.before: list[Any] = []       # per group: uint8 host tensor
        self.unsaved: list[str] = []
        self.args: dict[str, Any] = {}
        self.pointers: list[dict] = []    # table entries that hold a tensor's address (tables.py)
        self.benchmarked = False          # ``before`` is from before its autotuner's timed runs (``early_bytes``)

    @property
    def nbytes(self) -> int:
        return sum(g["end"] - g["start"] for g in self.groups)


def _encode(value, snap: Snapshot, where: str):
    import torch

    if value is None or isinstance(value, (bool, int, str)):
        return {"v": value}
    if isinstance(value, float):
        return {"f": repr(value)}
    if isinstance(value, torch.Tensor):
        snap.tensors.append(value)
        return {"t": len(snap.tensors) - 1}
    if isinstance(value, torch.dtype):
        return {"torch_dtype": str(value).replace("torch.", "")}
    if isinstance(value, (tuple, list)):
        return {"tuple" if isinstance(value, tuple) else "list": [_encode(v, snap, f"{where}[{i}]")
                                                                   for i, v in enumerate(value)]}
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        return {"constexpr": _encode(value.value, snap, where)}
    if isinstance(value, tl.dtype):
        return {"tl_dtype": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):   # TensorDescriptor and the like
        cls = type(value)
        fields = {f.name: _encode(getattr(value, f.name), snap, f"{where}.{f.name}")
                  for f in dataclasses.fields(value) if f.init}
        return {"dataclass": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    snap.unsaved.append(f"{where}: {type(value).__module__}.{type(value).__qualname__} {repr(value)[:80]}")
    return {"unsaved": f"{type(value).__qualname__}: {repr(value)[:200]}"}


def _extent(t) -> int:
    if t.numel() == 0:
        return 0
    return (t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1) * t.element_size()


_AROUND = 64 << 10  # bytes of a storage kept on each side of the views a launch was handed (at least)
_AROUND_MAX = 16 << 20


def _around(lo: int, hi: int, nbytes: int) -> tuple[int, int]:
    """The bytes [lo, hi) of a storage that its views span, widened by up to their own size (64 KiB at least, 16
    MiB at most) on each side within the storage: a kernel that reads or writes next to a view (a padded buffer
    addressed in whole blocks, an off-by-one past a slice of a pool) meets the same bytes in the replay, where it
    met them in the program (helper-62: triton_kernels' bitmatrix, whose storage past the view was not saved,
    replayed as out of bounds what the program saw inside the storage)."""
    margin = min(max(_AROUND, hi - lo), _AROUND_MAX)
    lo, hi = max(0, lo - margin), min(nbytes, hi + margin)
    return lo - lo % _ALIGN, hi


def _bytes_of(storage, device, start: int, end: int):
    """The bytes [start, end) of a storage as a uint8 host tensor (a copy)."""
    return group_view({"storage": storage, "device": device, "start": start, "end": end}).to("cpu", copy=True)


def group_view(g: dict):
    """A group's bytes (``Snapshot.groups``: its storage's [start, end)) as a uint8 tensor over them (no copy)."""
    import torch

    return torch.empty(0, dtype=torch.uint8, device=g["device"]).set_(g["storage"])[g["start"]:g["end"]]


def snapshot(launch: attach.Launch) -> Snapshot:
    """Encode the launch's arguments and copy the bytes its tensors view (before the launch)."""
    snap = Snapshot()
    snap.args = {k: _encode(v, snap, k) for k, v in launch.args.items()}
    tables.addressed(snap)  # tensors reached through tables of their addresses (grouped GEMM, MoE)
    by_storage: dict[tuple, int] = {}
    for t in snap.tensors:
        storage = t.untyped_storage()
        key = (str(t.device), storage.data_ptr())
        gi = by_storage.get(key)
        lo = t.storage_offset() * t.element_size()
        hi = max(_extent(t), lo)
        if gi is None:
            gi = by_storage[key] = len(snap.groups)
            snap.groups.append({"device": str(t.device), "start": lo, "end": hi, "storage": storage,
                                "storage_bytes": storage.nbytes(),
                                "address": storage.data_ptr()})  # (tables.relocate: addresses a launch wrote)
        g = snap.groups[gi]
        g["start"], g["end"] = min(g["start"], lo), max(g["end"], hi)
        snap.specs.append({"group": gi, "byte_offset": lo, "dtype": str(t.dtype).replace("torch.", ""),
                           "shape": list(t.shape), "stride": list(t.stride()),
                           "storage_offset": t.storage_offset(), "device": str(t.device)})
    for g in snap.groups:
        g["start"], g["end"] = _around(g["start"], g["end"], g["storage_bytes"])
    _uninit_groups(snap)
    return snap


def _uninit_groups(snap: Snapshot) -> None:
    """Under ``interpret -- CMD``'s sanitizers: a group in memory a factory handed out marked (``torch.empty``) says
    where (``uninit_from``), so its reproducer's replay counts it as uninitialized memory too."""
    from tritondbg.interp import initcheck

    if not initcheck.installed():
        return
    for g in snap.groups:
        where = initcheck.allocated_at(g["storage"].data_ptr() + g["start"])
        if where:
            g["uninit_from"] = where
            site = initcheck.allocation_site(g["storage"].data_ptr() + g["start"])
            if site:  # (file, line, function): where the replay places what it says of this memory
                g["uninit_site"] = list(site)


def copy_before(snap: Snapshot, early: dict | None = None) -> None:
    """The bytes of each group before the launch; ``early`` (``early_bytes``: taken when the autotuner was
    called, before its benchmark runs wrote the outputs) serves the groups it covers."""
    snap.before = []
    for g in snap.groups:
        hit = (early or {}).get((g["device"], g["storage"].data_ptr()))
        if hit is not None and hit[0] <= g["start"] and g["end"] <= hit[1]:
            snap.before.append(hit[2][g["start"] - hit[0]:g["end"] - hit[0]].clone())
        else:
            snap.before.append(_bytes_of(g["storage"], g["device"], g["start"], g["end"]))


def early_bytes(tuner, args: tuple, kwargs: dict, budget: float) -> dict | None:
    """(device, storage pointer) -> (start, end, bytes) of the tensors an autotuner was called with, less the
    ones it resets or restores itself before the launch (``reset_to_zero``, ``restore_value``: their state after
    its hooks is the launch's); None when the copy would pass ``budget`` bytes."""
    import torch

    own = set(getattr(tuner, "reset_to_zero", None) or ()) | set(getattr(tuner, "restore_value", None) or ())
    spans: dict[tuple, list] = {}
    for name, v in {**dict(zip(tuner.arg_names, args)), **kwargs}.items():
        if not isinstance(v, torch.Tensor) or name in own or v.numel() == 0:
            continue
        storage = v.untyped_storage()
        lo = v.storage_offset() * v.element_size()
        span = spans.setdefault((str(v.device), storage.data_ptr()), [lo, max(_extent(v), lo), storage])
        span[0], span[1] = min(span[0], lo), max(span[1], _extent(v))
    if sum(hi - lo for lo, hi, _ in spans.values()) > budget:
        return None
    out = {}
    for (device, ptr), (lo, hi, storage) in spans.items():
        lo, hi = _around(lo, hi, storage.nbytes())
        out[(device, ptr)] = (lo, hi, _bytes_of(storage, device, lo, hi))
    return out


def _view(buf, spec: dict, start: int):
    """The tensor ``spec`` over a host byte buffer that starts at byte ``start`` of its storage."""
    import torch

    dtype = getattr(torch, spec["dtype"])
    esize = torch.empty(0, dtype=dtype).element_size()
    offset = (spec["byte_offset"] - start) // esize
    return torch.empty(0, dtype=dtype).set_(buf.untyped_storage(), offset, spec["shape"], spec["stride"])


def _bits(t):
    import torch

    size = t.element_size()
    return t.view(getattr(torch, _INT_OF_SIZE[size])) if size in _INT_OF_SIZE and t.dtype != torch.bool else t


def _same_bytes(a, b) -> bool:
    """Bytewise equality of two uint8 host buffers, compared 8 bytes at a time."""
    import torch

    if a.numel() != b.numel():
        return False
    n8 = a.numel() // 8 * 8
    if n8 and not torch.equal(a[:n8].view(torch.int64), b[:n8].view(torch.int64)):
        return False
    return torch.equal(a[n8:], b[n8:])


def _contiguous(shape, stride) -> bool:
    expected = 1
    for size, st in zip(reversed(shape), reversed(stride)):
        if size != 1 and st != expected:
            return False
        expected *= size
    return True


def written(snap: Snapshot, after: list) -> tuple[list[int], list[int]]:
    """(groups whose bytes changed, tensors whose elements changed) after the launch."""
    import torch

    groups = [gi for gi in range(len(snap.groups)) if not _same_bytes(snap.before[gi], after[gi])]
    members: dict[int, list[int]] = {}
    for i, spec in enumerate(snap.specs):
        members.setdefault(spec["group"], []).append(i)
    tensors = []
    for gi in groups:
        start = snap.groups[gi]["start"]
        for i in members[gi]:
            spec = snap.specs[i]
            if len(members[gi]) == 1 and _contiguous(spec["shape"], spec["stride"]):
                tensors.append(i)    # the changed bytes are this tensor's elements (and alignment padding)
                continue
            b, a = _view(snap.before[gi], spec, start), _view(after[gi], spec, start)
            if not torch.equal(_bits(b), _bits(a)):
                tensors.append(i)
    return groups, sorted(tensors)


def arg_paths(args: dict) -> dict[int, str]:
    """Tensor index -> the argument path that holds it (``x_ptr``, ``desc.base``, ``ptrs[1]``)."""
    paths: dict[int, str] = {}

    def walk(enc, path):
        if "t" in enc:
            paths.setdefault(enc["t"], path)
        for key in ("tuple", "list"):
            for i, e in enumerate(enc.get(key, ())):
                walk(e, f"{path}[{i}]")
        if "fields" in enc:
            for k, e in enc["fields"].items():
                walk(e, f"{path}.{k}")
        if "constexpr" in enc:
            walk(enc["constexpr"], path)
    for name, enc in args.items():
        walk(enc, name)
    return paths


# ---------------------------------------------------------------------------------------------------------
# saving a reproducer
# ---------------------------------------------------------------------------------------------------------

SCENARIO_TEMPLATE = '''"""tritondbg reproducer: {kernel} ({kernel_file}:{kernel_line}), launched from {call_site}.

Captured by `{command}`. Inputs are the saved tensors (data/{name}.pt), the reference is the output the
launch wrote. Run: tritondbg interpret {name}.py  |  tritondbg ir {name}.py --arch {arch}  |  tritondbg check {name}.py
"""
from tritondbg.program.replay import load_scenario

{ident} = load_scenario(__file__, "{name}")
'''


def _user_imports(path: str, module: str) -> list[str]:
    """What the kernel's module imports from its own top-level package (noted beside the saved source)."""
    top = module.split(".")[0]
    try:
        with open(path) as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.level or node.module.split(".")[0] == top):
            found.append("." * node.level + node.module)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.split(".")[0] == top)
    return sorted(set(found))


def import_root(path: str, module: str) -> str | None:
    """The ``sys.path`` folder the kernel's module was imported from (``.../libroot`` for ``mypkg.kern`` in
    ``.../libroot/mypkg/kern.py``): a program may have put it there itself, which a replay must do too."""
    if not module or module == "__main__" or not os.path.isabs(path):
        return None
    parts = module.split(".")
    stem = os.path.splitext(path)[0]
    if os.path.basename(stem) == "__init__":
        stem = os.path.dirname(stem)
    tail = os.path.join(*parts)
    return stem[: -len(tail)].rstrip(os.sep) or None if stem.endswith(os.sep + tail) else None


def program_path() -> list[str]:
    """The program's own ``sys.path`` folders (``PYTHONPATH=src``, a ``sys.path.insert`` of its stubs or kernels),
    not the interpreter's libraries nor tritondbg's: a replay from another shell adds them last (helper-70: a
    kernel module importing ``lightllm.utils`` from the folder the program had on PYTHONPATH could not load)."""
    import sysconfig

    import tritondbg

    paths = sysconfig.get_paths()
    skip = tuple(os.path.abspath(paths[k]) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")) + (
        os.path.dirname(os.path.abspath(tritondbg.__file__)) + os.sep,)
    out = []
    for p in sys.path:
        full = os.path.abspath(p or os.curdir)
        if (os.path.isdir(full) and not (full + os.sep).startswith(skip) and full not in out
                and not any(d in full.split(os.sep) for d in ("site-packages", "dist-packages"))):
            out.append(full)
    return out


_UNFINISHED: dict[str, list[str]] = {}  # OUT/NAME of a reproducer being written -> its files so far (temporary or not)


def _staged(path: str, files: list[str]) -> str:
    """A temporary name beside ``path`` (hidden, this process's), noted in ``files`` for ``discard_unfinished``."""
    files.append(os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp"))
    return files[-1]


def discard_unfinished(frame=None, key: str | None = None) -> None:
    """Remove the files of the reproducer ``key`` (all of this process's: a SIGTERM ending it mid-save, as
    ``exits.on_term`` calls it) being written: its temporary ones, and its data files already in place."""
    for k in [key] if key is not None else list(_UNFINISHED):
        for path in _UNFINISHED.pop(k, ()):
            try:
                os.remove(path)
            except OSError:
                pass


def save(out_dir: str, name: str, launch: attach.Launch, snap: Snapshot, after: list | None, *,
         error: str | None = None, command: str = "", extra: dict | None = None) -> dict:
    """Write NAME.py, data/NAME.{json,pt} and the kernel's source; returns the captures.json entry.

    Never a partial reproducer, whatever interrupts it (Ctrl-C's KeyboardInterrupt, SIGTERM, a full disk): each file
    is written under a temporary name and moved into place, the data files first and NAME.py last; cut short, the
    files it wrote are removed (a 0-byte NAME.py beside its data, listed nowhere, was left by a Ctrl-C before)."""
    key = os.path.join(out_dir, name)
    files = _UNFINISHED[key] = []
    exits = sys.modules.get("tritondbg.program.exits")  # program mode routes SIGTERM through its hooks: one more
    if exits is not None and exits._state.get("installed") and discard_unfinished not in exits._term_listeners:
        exits.on_term(discard_unfinished)  # (never installs them where they are not: the CLI, a test)
    try:
        entry = _save(out_dir, name, launch, snap, after, files, error=error, command=command, extra=extra)
        _UNFINISHED.pop(key, None)
    except BaseException:
        discard_unfinished(key=key)
        raise
    return entry


def _save(out_dir: str, name: str, launch: attach.Launch, snap: Snapshot, after: list | None, files: list[str], *,
          error: str | None, command: str, extra: dict | None) -> dict:
    t0 = time.perf_counter()
    os.makedirs(os.path.join(out_dir, "data"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "src"), exist_ok=True)
    groups, outs = written(snap, after) if after is not None else ([], [])
    paths = arg_paths(snap.args)
    paths.update(tables.paths(snap.pointers, paths))
    src_name = None
    standalone = launch.extra.get("standalone_source")  # a torch.compile kernel: its module needs a GPU to import
    if not standalone and "<locals>" in launch.qualname:  # a kernel defined in a function: not importable by name
        from tritondbg.program import nested

        standalone = nested.standalone_source(launch.file, launch.qualname, launch.fn)
        extra = {"closure": nested.closure_values(launch.fn), **(extra or {})}  # lifted again at replay
    if standalone:
        src_name = f"{launch.module}_{re.sub(r'[^A-Za-z0-9_]+', '_', launch.name)}.py"
        _put_source(os.path.join(out_dir, "src", src_name), files, text=standalone)
    elif os.path.isfile(launch.file):
        src_name = re.sub(r"[^A-Za-z0-9_.]+", "_", launch.module if launch.module != "__main__"
                          else "__main__." + os.path.splitext(os.path.basename(launch.file))[0]) + ".py"
        dest = os.path.join(out_dir, "src", src_name)
        if not os.path.exists(dest):
            _put_source(dest, files, copy_of=launch.file)
    if src_name is None and launch.module == "__main__":  # `python -` or `python -c`: no file to load it from
        snap.unsaved.append(f"source: {launch.name} is defined in {launch.file}, not in a file, so the replay "
                            "cannot load it: put the kernel in a .py file")
    site = launch.call_site
    grid = None
    try:
        grid = list(launch.resolved_grid())
    except Exception as exc:  # noqa: BLE001
        snap.unsaved.append(f"grid: {type(exc).__name__}: {exc}")
    meta = {
        "name": name, "kernel": launch.name, "qualname": launch.qualname, "module": launch.module,
        "kernel_file": launch.file, "kernel_line": launch.line, "source": src_name, "standalone": bool(standalone),
        "user_imports": _user_imports(launch.file, launch.module) if src_name and not standalone else [],
        "import_root": import_root(launch.file, launch.module), "program_path": program_path(),
        "call_site": list(site) if site else None, "stack": [list(s) for s in launch.stack],
        "grid": grid, "args": snap.args, "options": {k: autotuned.plain(v) for k, v in launch.options.items()},
        "config": autotuned.config_of(launch), "config_grids": autotuned.config_grids(launch),
        "configs": [{k: autotuned.plain(v) for k, v in config_dict(c).items()} for c in launch.configs or ()],
        "tensors": snap.specs, "pointers": snap.pointers,
        "groups": [{k: v for k, v in g.items() if k != "storage"} for g in snap.groups],
        "outputs": {paths.get(i, f"tensor{i}"): i for i in outs},
        "dtype": run_dtype(snap.specs, outs),  # the launch's label: its inputs' dtype (each output has its own)
        "unsaved": snap.unsaved, "error": error, "interpreted": launch.interpreted,
        "compile": attach.compile_info.get(f"{launch.module}.{launch.qualname}"),
        "autotune": attach.autotune_info.get(launch.qualname),
        "pid": os.getpid(), "argv": sys.argv, "arch": _arch_of(launch),
        "benchmarked": snap.benchmarked,  # its autotuner timed configs just before it
        "globals": kernel_globals.collect(launch.fn),  # module-level constexprs the kernel reads
        "by_name": launch.extra.get("by_name") or [],  # arguments the program passed by keyword
        **(extra or {}),
    }
    final = [os.path.join(out_dir, "data", f"{name}.pt"), os.path.join(out_dir, "data", f"{name}.json"),
             os.path.join(out_dir, f"{name}.py")]   # the order they are moved into place: NAME.py last
    staged = [_staged(path, files) for path in final]
    _save_fast({"before": snap.before, "after_groups": {gi: after[gi] for gi in groups}}, staged[0])
    with open(staged[1], "w") as f:
        json.dump(meta, f, indent=1, default=str)
    ident = re.sub(r"\W", "_", name)
    text = SCENARIO_TEMPLATE.format(kernel=launch.qualname, kernel_file=launch.file, kernel_line=launch.line,
                                    call_site=f"{site[0]}:{site[1]} ({site[2]})" if site else "?",
                                    command=command, name=name, arch=meta["arch"] or "sm_90",
                                    ident=ident.upper() if ident[:1].isalpha() else "S_" + ident)
    with open(staged[2], "w") as f:
        f.write(text)
    for tmp, path in zip(staged, final):
        files.append(path)  # (before it is in place: removed if the move is cut short)
        os.replace(tmp, path)
    nbytes = snap.nbytes + sum(after[gi].numel() for gi in groups)
    return {"reproducer": f"{name}.py::{name}", "kernel": launch.name, "qualname": launch.qualname,
            "kernel_file": launch.file, "kernel_line": launch.line,
            "call_site": f"{site[0]}:{site[1]}" if site else None, "function": site[2] if site else None,
            "launched_from": stacks.describe_site(launch.stack),
            "program_site": ":".join(str(x) for x in stacks.program_frame(launch.stack) or ()) or None,
            "grid": grid, "tensors": [{"arg": paths.get(i, f"tensor{i}"), "shape": s["shape"], "dtype": s["dtype"],
                                       "device": s["device"]} for i, s in enumerate(snap.specs)],
            "outputs": sorted(meta["outputs"]), "dtype": meta["dtype"], "bytes": nbytes, "unsaved": snap.unsaved,
            "error": error, "test": attach.current_test(), "write_s": round(time.perf_counter() - t0, 4)}


def run_dtype(specs: list[dict], outputs) -> str:
    """The dtype a captured launch is labelled with: its inputs' (the floating tensors it did not write; all its
    floating tensors when it wrote every one, an in-place kernel), the lowest precision among them (an fp8 GEMM
    with fp32 scales is an fp8 launch). It followed the outputs: a bf16 cross-entropy writing an fp32 loss was
    "float32", an fp8 quantiser of fp32 input "float8_e4m3fn". No floating tensor: the first tensor's dtype the
    scenarios know (an integer kernel's), else float32. The replay compares each output at its own dtype's
    tolerance (``runner.compare_outputs``)."""
    from tritondbg.compare import TOLERANCES
    from tritondbg.scenario import DTYPES

    written = set(outputs)
    floats = [s["dtype"] for s in specs if s.get("dtype") in DTYPES and TOLERANCES.get(s["dtype"], (0, 0))[1] > 0]
    inputs = [s["dtype"] for i, s in enumerate(specs) if i not in written and s.get("dtype") in floats]
    chosen = inputs or floats
    if chosen:
        return max(chosen, key=lambda d: TOLERANCES[d][1])
    return next((s["dtype"] for s in specs if s.get("dtype") in DTYPES), "float32")


def _arch_of(launch: attach.Launch) -> str | None:
    """The GPU the launch was made for: the interpreter's CPU stand-in (capture --arch; sm_90 by default), else
    the program's GPU (``ir`` on the reproducer compiles for it when no GPU is at hand)."""
    if launch.interpreted:
        from tritondbg import standin

        current = standin.current()
        return current.name if current is not None else None
    from tritondbg.ir.targets import local_arch

    try:
        arch, _ = local_arch()
    except Exception:  # noqa: BLE001 - a record, never a reason to lose the capture
        return None
    return arch.name if arch is not None else None


def _put_source(dest: str, files: list[str], *, text: str | None = None, copy_of: str | None = None) -> None:
    """The kernel's module source in src/, whole or not at all (later reproducers of the module use it: kept)."""
    tmp = _staged(dest, files)
    if copy_of is not None:
        shutil.copyfile(copy_of, tmp)
    else:
        with open(tmp, "w") as f:
            f.write(text)
    os.replace(tmp, dest)
    files.remove(tmp)  # (a module's source is kept: its other reproducers may use it)


def _save_fast(obj, path: str) -> None:
    """torch.save without the per-record CRC32 (5x faster on large tensors); the program's own setting is
    put back."""
    import torch

    ser = torch.serialization
    get, set_ = getattr(ser, "get_crc32_options", None), getattr(ser, "set_crc32_options", None)
    previous = get() if get and set_ else None
    if previous is not None:
        set_(False)
    try:
        torch.save(obj, path)
    finally:
        if previous is not None:
            set_(previous)


def sync(snap: Snapshot) -> None:
    if any(g["device"].startswith("cuda") for g in snap.groups):
        import torch

        torch.cuda.synchronize()


def copy_after(snap: Snapshot) -> list:
    """The bytes after the launch. A host storage saved whole is not copied: it is saved before the program
    goes on (torch.save of a slice would write the whole storage, so a part of one is copied)."""
    import torch

    sync(snap)
    out = []
    for g in snap.groups:
        if g["device"] == "cpu" and g["start"] == 0 and g["end"] == g["storage_bytes"]:
            out.append(torch.empty(0, dtype=torch.uint8).set_(g["storage"]))
        else:
            out.append(_bytes_of(g["storage"], g["device"], g["start"], g["end"]))
    return out


def capture_name(kernel: str, index: int, out_dir: str) -> str:
    """``KERNEL_INDEX``, claimed in the run folder so that no other process of the program writes the same files
    (another kernel of the same name, a checker's reproducer in another process): then ``KERNEL_INDEX_pPID``."""
    name = f"{kernel}_{index}"
    j = 0
    while not claims.first(out_dir, "name." + name):
        j += 1
        name = f"{kernel}_{index}_p{os.getpid()}" + (f"_{j}" if j > 1 else "")
    return name


def signature(launch: attach.Launch) -> tuple:
    import torch

    parts = []
    for v in launch.args.values():
        if isinstance(v, torch.Tensor):
            parts.append(("T", v.dtype, tuple(v.shape), v.stride(), v.device.type))
        elif isinstance(v, bool) or isinstance(v, int):
            parts.append(v)
        elif isinstance(v, float):
            parts.append("f")
        else:
            parts.append(repr(v)[:64])
    try:
        grid = launch.resolved_grid()
    except Exception:  # noqa: BLE001
        grid = None
    return (tuple(parts), grid, repr(sorted(launch.options.items())), repr(launch.config))


def size(nbytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"
