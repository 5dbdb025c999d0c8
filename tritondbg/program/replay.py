"""A captured launch as an ordinary Scenario (the reproducer files ``capture.py`` writes call this).

``make_inputs`` rebuilds the tensors from the saved storage bytes (same shapes, strides, storage offsets
and aliasing, on the run's device), ``launch`` launches the kernel with the recorded grid, arguments,
options and autotune config (the autotuner is bypassed: the config that ran is the one replayed), and
``reference`` returns what the launch wrote when it was captured. The kernel comes from its module when
that is importable (and is not the program's ``__main__``), else from the saved copy in ``src/``. A kernel of
the program's main script is loaded from the script's definitions only (``_load_definitions``): a script
without a ``__main__`` guard (every Triton tutorial) would otherwise run again, launches and all, each time a
reproducer is loaded, and fail to load wherever it asks for a GPU (``tritondbg ir``, ``check``'s resources).
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import sys
from typing import Any

from tritondbg.errors import UsageError
from tritondbg.configs import find_autotuner, jit_function
from tritondbg.program import autotuned, kernel_globals, tables
from tritondbg.scenario import DTYPES, Case, Scenario


def _meta(folder: str, name: str) -> dict:
    path = os.path.join(folder, "data", f"{name}.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as exc:
        raise UsageError(f"reproducer {name}: cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError: it named Python's json module
        raise UsageError(f"reproducer {name}: {path} is damaged (not the JSON capture wrote: {exc})") from None


def recorded_arch(target: str) -> str | None:
    """The GPU a reproducer's launch was captured for (the stand-in's under the interpreter, else the program's
    GPU), or None when ``target`` is not a reproducer or predates that record."""
    file = target.partition("::")[0]
    meta = os.path.join(os.path.dirname(os.path.abspath(file)), "data",
                        os.path.splitext(os.path.basename(file))[0] + ".json")
    try:
        with open(meta) as f:
            arch = json.load(f).get("arch")
    except (OSError, ValueError, AttributeError):
        return None
    return arch if isinstance(arch, str) else None


def _check_data(path: str, name: str) -> None:
    """A truncated or overwritten tensor file, named at load (it surfaced as make_inputs raising torch's
    "PytorchStreamReader failed reading zip archive"). torch.save writes a zip: its directory, at the end of the
    file, is read here, not the tensors."""
    import zipfile

    if not os.path.exists(path):
        return  # said by make_inputs when the launch needs it (capture may not have saved it: meta "unsaved")
    try:
        with zipfile.ZipFile(path) as z:
            z.namelist()
    except (OSError, zipfile.BadZipFile) as exc:
        raise UsageError(f"reproducer {name}: {path} is damaged (not the tensor file capture wrote: {exc})") from None


def _resolve(obj, qualname: str):
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _unwrap(obj):
    """The jit function under autotuner/heuristics wrappers (``configs.jit_function``), else ``obj``."""
    return jit_function(obj) or obj


def _private_name(path: str, meta: dict, kind: str = "") -> str:
    """The private module name ``path`` loads under (``kind`` keeps a load of its definitions apart from an import),
    once its folder and the original's are on sys.path (siblings it imports)."""
    for d in (os.path.dirname(meta.get("kernel_file") or ""), os.path.dirname(os.path.abspath(path))):
        if d and os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
    return "tritondbg_capture_" + hashlib.sha1((kind + os.path.abspath(path)).encode()).hexdigest()[:10]


def _load_file(path: str, meta: dict):
    """Import a kernel's module file under a private name."""
    mod_name = _private_name(path, meta)
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return mod


# what a script does rather than defines: not run when its definitions are loaded
_ACTIONS = (ast.Expr, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Assert, ast.Delete, ast.Raise)


def _is_main_guard(node) -> bool:
    return isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test))


def _launchers(tree) -> set:
    """Names of the script's top-level functions that launch a kernel (a ``kernel[grid](...)`` call), directly
    or through another such function."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: set = set()
    while True:
        more = {name for name, d in defs.items() if name not in found and _launches(d, found)}
        if not more:
            return found
        found |= more


def _launches(node, launchers: set) -> bool:
    """Whether ``node`` calls ``kernel[grid](...)`` or one of ``launchers``."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and (isinstance(n.func, ast.Subscript)
                                        or isinstance(n.func, ast.Name) and n.func.id in launchers):
            return True
    return False


def _definitions(body: list, launchers: set) -> list:
    """``body`` less its actions (calls, loops, with blocks, asserts, the ``__main__`` block, assignments of a
    launch's result: ``out = add(x, y)``), also inside top-level if / try blocks (optional imports, a device
    chosen by an if)."""
    kept = []
    for node in body:
        if isinstance(node, _ACTIONS) or _is_main_guard(node):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and _launches(node, launchers):
            continue
        if isinstance(node, (ast.If, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(node, field, None):
                    setattr(node, field, _definitions(getattr(node, field), launchers)
                            or [ast.Pass(lineno=node.lineno, col_offset=0)])
            for handler in getattr(node, "handlers", ()):
                handler.body = _definitions(handler.body, launchers) or [ast.Pass(lineno=handler.lineno, col_offset=0)]
        kept.append(node)
    return kept


def _load_definitions(path: str, meta: dict, need: str = ""):
    """A program's main script as a module of its definitions: imports, functions, classes and assignments
    (``_definitions``), run one top-level statement at a time (line numbers kept: the kernel's source and findings
    point at the script); a statement that raises (``DEVICE = driver.active.get_active_torch_device()`` without a
    GPU) is skipped and listed in the module's ``__tritondbg_skipped__``. When that leaves ``need`` undefined, the
    definitions inside the script's ``if __name__ == "__main__":`` block run too (a kernel defined there)."""
    mod_name = _private_name(path, meta, "defs:")
    mod = sys.modules.get(mod_name)
    if mod is not None and (not need or need in mod.__dict__ or mod.__tritondbg_guarded__):
        return mod
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    launchers = _launchers(tree)
    if mod is None:
        mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(mod_name, loader=None, origin=path))
        mod.__file__ = path
        mod.__tritondbg_skipped__, mod.__tritondbg_guarded__ = [], False
        sys.modules[mod_name] = mod
        _run_each(_definitions(tree.body, launchers), path, mod.__dict__, mod.__tritondbg_skipped__)
    if need and need not in mod.__dict__:  # the kernel is defined in the script's `if __name__ == "__main__":` block
        mod.__tritondbg_guarded__ = True
        guarded = [m for n in tree.body if _is_main_guard(n) for m in n.body]
        _run_each(_definitions(guarded, launchers), path, mod.__dict__, mod.__tritondbg_skipped__)
    return mod


def _run_each(nodes: list, path: str, namespace: dict, skipped: list) -> None:
    """Run each statement in ``namespace``; one that raises (or exits) is listed in ``skipped``."""
    for node in nodes:
        code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
        try:
            exec(code, namespace)  # noqa: S102 - the user's own script, as running it would
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - skip it, as the script's actions are
            skipped.append(f"line {node.lineno}: {type(exc).__name__}: {exc}")


def _import_answers(meta: dict):
    """Without a GPU and outside `interpret` (whose stand-in answers already): the device questions a kernel's
    module asks at import (gemlite: ``torch.cuda.get_device_capability()``) answered as the captured GPU, as
    `tritondbg ir` answers them while it imports a scenario (the reproducer loads its kernel later, lazily)."""
    import torch

    from tritondbg import standin

    if standin.current() is not None or torch.cuda.is_available():
        return contextlib.nullcontext()
    from tritondbg.ir.targets import DEFAULT_ARCH, parse_arch

    try:
        arch = parse_arch(meta.get("arch") or DEFAULT_ARCH)
    except Exception:  # noqa: BLE001 - a target this Triton cannot name: the default's answers
        arch = parse_arch(DEFAULT_ARCH)
    return standin.answering_as(arch)


def load_kernel(folder: str, meta: dict):
    """The jit function: its module when importable, else the saved source (``src/``); for a launch of an
    autotuned kernel whose reproducer can replay any config (``autotuned.launch``), the autotuner around it."""
    from tritondbg.program import cpu_device

    with cpu_device.serving(), _import_answers(meta):  # no GPU: a module's CUDA tensors and questions at import
        kernel = _launched(folder, meta)
    changed = kernel_globals.restore(kernel, meta.get("globals") or {}, meta["module"])
    if changed and _once(os.path.join(folder, meta["name"]), "globals"):
        print(f"tritondbg: {meta['name']}: module-level values the kernel reads are set as the program had them "
              f"({'; '.join(changed)})", file=sys.stderr)
    if meta.get("config_grids") is not None and find_autotuner(kernel) is not None:
        return kernel
    return _unwrap(kernel)


def _launched(folder: str, meta: dict):
    """The kernel object the program launched, by its module and name (decorators included)."""
    qualname, module = meta["qualname"], meta["module"]
    if "<locals>" in qualname:
        if not (meta.get("standalone") and meta.get("source")):
            raise UsageError(f"{meta['kernel']} is defined inside a function ({qualname}) and its source was not "
                             f"found; its reproducer cannot import it: move the kernel to module level")
        path = os.path.join(folder, "src", meta["source"])  # saved lifted to module level (program/nested.py)
        return _resolve(_load_file(path, meta), qualname.rsplit(".", 1)[-1])
    problems = []
    root = meta.get("import_root")
    if root and os.path.isdir(root) and root not in sys.path:
        sys.path.append(root)  # the program put its package's folder on sys.path itself
    if module != "__main__":
        try:
            return _resolve(importlib.import_module(module), qualname)
        except Exception as exc:  # noqa: BLE001 - fall back to the saved source
            problems.append(f"import {module}: {type(exc).__name__}: {exc}")
            try:  # a package whose __init__ needs what this machine lacks (AutoGPTQ: accelerate, transformers)
                return _resolve(_import_past_parents(module, meta.get("kernel_file")), qualname)
            except _NotTried:
                pass
            except Exception as exc2:  # noqa: BLE001
                problems.append(f"import {module} without its packages' __init__: {type(exc2).__name__}: {exc2}")
    # the original file when it is still there (its __file__-relative imports work), else the saved copy
    candidates = [meta.get("kernel_file")] + ([os.path.join(folder, "src", meta["source"])] if meta.get("source") else [])
    if meta.get("standalone"):  # a torch.compile kernel: the saved kernel alone (its generated module wants a GPU)
        candidates.reverse()
    for path in candidates:
        if not path or not os.path.isfile(path):
            continue
        mod = None
        try:
            mod = (_load_definitions(path, meta, qualname.split(".")[0]) if module == "__main__"
                   else _load_file(path, meta))
            return _resolve(mod, qualname)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a module may exit at import
            skipped = getattr(mod, "__tritondbg_skipped__", None)
            problems.append(f"{path}: {type(exc).__name__}: {exc}"
                            + (f" (statements that raised: {'; '.join(skipped)})" if skipped else ""))
    why = next((u.split(": ", 1)[1] for u in meta.get("unsaved") or () if u.startswith("source: ")), "no saved source")
    raise UsageError(f"cannot load kernel {qualname}: " + "; ".join(problems or [why]))


class _NotTried(Exception):
    pass


def _import_past_parents(module: str, kernel_file: str | None):
    """``module`` imported from its folder with its parent packages as bare packages (their ``__path__`` set,
    their ``__init__`` not run), so its relative imports (``from . import custom_autotune``) still work. For a
    package whose ``__init__`` imports what this machine lacks (helper-57: AutoGPTQ's needs accelerate and
    transformers; the program had loaded the kernel's module past it). The bare packages are removed again if the
    module still fails."""
    import types

    parts = module.split(".")
    if len(parts) < 2 or not kernel_file or not os.path.isfile(kernel_file):
        raise _NotTried
    folder = os.path.dirname(os.path.abspath(kernel_file))
    if os.path.splitext(os.path.basename(kernel_file))[0] != parts[-1]:
        raise _NotTried
    dirs = []
    for i in range(len(parts) - 1, 0, -1):  # the package that holds the file, then its parents
        if os.path.basename(folder) != parts[i - 1]:
            raise _NotTried  # the file's folders do not spell the module's name
        dirs.insert(0, (".".join(parts[:i]), folder))
        folder = os.path.dirname(folder)
    added = []
    for name, path in dirs:
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__, pkg.__package__ = [path], name
            sys.modules[name] = pkg
            added.append(name)
    try:
        return importlib.import_module(module)
    except BaseException:
        for name in added:
            sys.modules.pop(name, None)
        raise


def _decode(enc: dict, tensors: list):
    if "v" in enc:
        return enc["v"]
    if "f" in enc:
        return float(enc["f"])
    if "t" in enc:
        return tensors[enc["t"]]
    if "torch_dtype" in enc:
        import torch

        return getattr(torch, enc["torch_dtype"])
    if "tuple" in enc:
        return tuple(_decode(e, tensors) for e in enc["tuple"])
    if "list" in enc:
        return [_decode(e, tensors) for e in enc["list"]]
    if "constexpr" in enc:
        import triton.language as tl

        return tl.constexpr(_decode(enc["constexpr"], tensors))
    if "tl_dtype" in enc:
        import triton.language as tl

        return getattr(tl, enc["tl_dtype"]) if hasattr(tl, enc["tl_dtype"]) else tl.dtype(enc["tl_dtype"])
    if "dataclass" in enc:
        mod, _, qual = enc["dataclass"].partition(":")
        cls = _resolve(importlib.import_module(mod), qual)
        return cls(**{k: _decode(v, tensors) for k, v in enc["fields"].items()})
    raise UsageError(f"an argument was not saved at capture: {enc.get('unsaved', enc)}")


def _tensors(meta: dict, buffers: list, device: str) -> list:
    import torch

    bufs = [b.to(device, copy=True) for b in buffers]  # a launch writes them: the saved bytes serve every run
    out = []
    for spec in meta["tensors"]:
        g = meta["groups"][spec["group"]]
        dtype = getattr(torch, spec["dtype"])
        esize = torch.empty(0, dtype=dtype).element_size()
        buf = bufs[spec["group"]]
        t = torch.empty(0, dtype=dtype, device=device).set_(buf.untyped_storage(),
                                                              (spec["byte_offset"] - g["start"]) // esize,
                                                              spec["shape"], spec["stride"])
        out.append(t)
    return out


def _allocator_for(tensors) -> None:
    """Kernels that build TMA descriptors on the device need Triton's scratch allocator; the program set one
    before its launch, the replay process has none: give it torch's (GPU only; the interpreter needs none)."""
    import triton

    if hasattr(triton, "set_allocator") and any(t.is_cuda for t in tensors):
        import torch

        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))


def _uninit_marks(meta: dict, tensors: list, compared: dict) -> dict:
    """Under the sanitizers, the tensors that were a factory's uninitialized memory in the program (groups with
    ``uninit_from``: captured by ``interpret -- CMD``) count as such here too (loads of it are uninit findings);
    returns {compared path: its elements holding the mark before the launch}."""
    from tritondbg.interp import initcheck

    if not initcheck.installed():
        return {}
    for spec, t in zip(meta["tensors"], tensors):
        where = meta["groups"][spec["group"]].get("uninit_from")
        if where:
            initcheck.remember_as(t, where)
    return initcheck.marks_of({path: tensors[i] for path, i in compared.items()})


def _bands(meta: dict, tensors: list, compared: dict, marks: dict) -> list:
    """The replayed launch's unwritten bands of such memory: warnings at the kernel's definition, as
    ``interpret -- CMD`` gave them."""
    from tritondbg.interp import initcheck

    if not marks:
        return []
    args = {path: tensors[i] for path, i in compared.items()}
    out = []
    for name, t, left, wrote in initcheck.bands(args, marks):
        f = initcheck.band_finding(name, t, left, wrote, later="as the captured launch left them in the program")
        out.append({**f, "file": meta.get("kernel_file"), "line": meta.get("kernel_line")})
    return out


def _stale(got, want, old) -> int:
    """How many elements of ``got`` differ from ``want`` (the capture's after-bytes) while equal to ``old`` (its
    before-bytes), which differ from ``want``: writes the program's launch made and the replay did not."""
    import torch

    if not all(isinstance(t, torch.Tensor) for t in (got, want, old)) or not (got.shape == want.shape == old.shape):
        return 0
    got, want, old = (t.detach().cpu() for t in (got, want, old))
    return int((~_same(got, want) & _same_bits(got, old) & ~_same(old, want)).sum())


def _same_bits(a, b):
    """Bit for bit equal (floats): a NaN the replay wrote (the sanitizers' poison) is not the NaN that was there
    before (torch.empty's mark), which ``_same`` took as never written (helper-61: "did not write them")."""
    import torch

    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}.get(a.element_size())
    if not a.is_floating_point() or a.dtype != b.dtype or ints is None:
        return _same(a, b)
    return a.contiguous().view(ints) == b.contiguous().view(ints)


_SUM_RTOL = {"float32": 1e-4, "float64": 1e-9, "float16": 2e-3, "bfloat16": 1e-2}


def _redistributed(got, want, old) -> str:
    """"Σ a vs Σ b over n and m written element(s)" when what ``got`` and ``want`` wrote over ``old`` adds up to the
    same total (within the dtype's rounding) without being the same values, nor the same values elsewhere (a
    permutation: a wrong index, not a layout); "" otherwise (a missing tail, a wrong value: the sums differ)."""
    import torch

    if not all(isinstance(t, torch.Tensor) for t in (got, want, old)) or not (got.shape == want.shape == old.shape):
        return ""
    got, want, old = (t.detach().cpu() for t in (got, want, old))
    if not got.is_floating_point() and got.dtype not in (torch.int32, torch.int64):
        return ""
    vg, vw = got[~_same(got, old)].double(), want[~_same(want, old)].double()
    if not (torch.isfinite(vg).all() and torch.isfinite(vw).all()):
        return ""
    rtol = _SUM_RTOL.get(str(got.dtype).replace("torch.", ""), 0.0)
    sg, sw = float(vg.sum()), float(vw.sum())
    scale = float(vg.abs().sum() + vw.abs().sum()) / 2
    if abs(sg - sw) > rtol * scale + 1e-12:
        return ""
    if vg.numel() == vw.numel() and torch.allclose(vg.sort().values, vw.sort().values, rtol=rtol, atol=rtol * scale
                                                   / max(1, vg.numel())):
        return ""
    return f"Σ {sg:.6g} vs {sw:.6g} over {vg.numel()} and {vw.numel()} written element(s)"


def _same(a, b):
    """Elementwise equal, NaN equal to NaN."""
    import torch

    eq = a == b
    return eq | (torch.isnan(a) & torch.isnan(b)) if a.is_floating_point() else eq


_SAID: set = set()


def _once(file: str, name: str) -> bool:
    """True the first time this process, or the process that started it, loads this reproducer (its note is
    printed then only: `check` loads it again in each of its workers)."""
    key = f"{os.path.abspath(file)}::{name}"
    said = os.environ.get("TRITONDBG_NOTED", "").split(os.pathsep)
    if key in _SAID or key in said or "*" in said:  # ("*": `check`, whose gates say it)
        return False
    _SAID.add(key)
    os.environ["TRITONDBG_NOTED"] = os.pathsep.join([*filter(None, said), key])
    return True


def load_scenario(file: str, name: str) -> Scenario:
    folder = os.path.dirname(os.path.abspath(file))
    meta = _meta(folder, name)
    data_path = os.path.join(folder, "data", f"{name}.pt")
    _check_data(data_path, name)
    cache: dict[str, Any] = {}

    def data():
        if "d" not in cache:
            import torch

            cache["d"] = torch.load(data_path, map_location="cpu", weights_only=True)
        return cache["d"]

    def kernel():
        if "k" not in cache:
            cache["k"] = load_kernel(folder, meta)
        return cache["k"]

    def make_inputs(case, dtype, device, generator):
        if meta["unsaved"]:
            raise UsageError(f"{name}: capture could not save: {'; '.join(meta['unsaved'])}")
        tensors = _tensors(meta, data()["before"], device)
        tables.rewrite(meta.get("pointers") or [], tensors)  # address tables point at this process's tensors
        return {"tensors": tensors}

    def launch(tensors):
        ran.clear()
        args = {k: _decode(v, tensors) for k, v in meta["args"].items()}
        options = {k: v for k, v in meta["options"].items() if v is not None}
        config = dict(meta.get("config") or {})
        if meta["grid"] is None:
            raise UsageError(f"{name}: the grid was not recorded")
        _allocator_for(tensors)
        marks = _uninit_marks(meta, tensors, compared)
        if not autotuned.launch(kernel(), meta, args, options, ran):
            _unwrap(kernel())[tuple(meta["grid"])](**{**args, **options, **config})
        ran["bands"] = _bands(meta, tensors, compared, marks)
        return {path: tensors[i] for path, i in compared.items()}

    def reference(tensors):
        groups = data()["after_groups"]
        after = _tensors(meta, [groups.get(gi, b) for gi, b in enumerate(data()["before"])], "cpu")
        return {path: after[i].to(tensors[i].device) for path, i in compared.items()}

    def explain_mismatch(outputs, expected) -> str:
        """Elements that differ from the capture and still hold the bytes they held before the launch."""
        before = _tensors(meta, data()["before"], "cpu")
        parts = []
        for path, i in compared.items():
            n = _stale(outputs.get(path), expected.get(path), before[i])
            if n:
                parts.append(f"{n} element(s) of {path}")
        if not parts:
            return ""
        if meta.get("benchmarked") and ran.get("grid") is not None and not ran.get("other"):
            # the captured config itself: in the program, the autotuner's timed runs of the other configs wrote
            # those elements just before the launch (the capture's after-bytes hold what they left)
            return (f"{', '.join(parts)} differ from the capture and still hold what they held before the "
                    "autotuner's call: in the program its timed runs of the other configs wrote them just before "
                    "this launch, which left them so; the replay runs the captured config alone. A buffer the "
                    "configs write differently (partial results per program) needs reset_to_zero or restore_value "
                    "in @triton.autotune, or the program reads another config's leftovers")
        return (f"{', '.join(parts)} differ from the capture and still hold what they held before the launch: the "
                f"replayed kernel did not write them, where the program's launch did")

    def not_comparable(outputs, expected) -> dict:
        """Outputs that another config than the captured one writes as other partial results adding up to the
        same total (one partial sum per program: the number and the ranges follow the config)."""
        if not ran.get("other"):
            return {}
        before = _tensors(meta, data()["before"], "cpu")
        out = {}
        for path, i in compared.items():
            sums = _redistributed(outputs.get(path), expected.get(path), before[i])
            if sums:
                out[path] = {"file": meta.get("kernel_file"), "line": meta.get("kernel_line"), "why": (
                    f"not compared with the capture: this config writes {path} as other partial results that add "
                    f"up to the same total ({sums}): partial sums laid out per program follow the config (their "
                    "number and ranges), and the program combines them; the sanitizers still checked this run")}
        return out

    ran: dict = {}  # what the last replay launched: {"grid": the grid of the config that ran}
    # what the replay compares: the outputs; a launch that finished changing no byte: every tensor argument (the
    # replay must leave them as they were too); a launch that did not finish in the program: nothing
    compared = dict(meta["outputs"])
    if not compared and not meta.get("error"):
        compared = {f"arg{i}": i for i in range(len(meta["tensors"]))}

    # the outputs' dtype, the loosest tolerance where they differ (helper-61: FlagAttention's bf16 O beside fp32
    # row statistics was labelled float32 and held to its tolerance, which a GPU capture replayed here can miss);
    # else (nothing written) the first floating tensor's: the label of the case
    from tritondbg.compare import TOLERANCES

    outs = [meta["tensors"][i]["dtype"] for i in meta["outputs"].values() if meta["tensors"][i]["dtype"] in DTYPES]
    out_dtype = max(outs, key=lambda d: TOLERANCES[d][1], default=None) if outs else \
        next((t["dtype"] for t in meta["tensors"] if t["dtype"] in DTYPES), "float32")
    if meta.get("error") and _once(file, name):  # a scenario is loaded more than once in a run: said once
        print(f"tritondbg: {meta['name']}: the captured launch did not finish in the program "
              f"({meta['error'].rstrip(': ')}): nothing after it was captured, so a replay has no output to "
              "compare with", file=sys.stderr)
    elif not meta["outputs"] and not meta.get("error") and _once(file, name):
        print(f"tritondbg: {meta['name']}: the captured launch changed no byte of its arguments: this replay checks "
              "that it leaves them as they were", file=sys.stderr)
    site = meta.get("call_site")
    case = Case("captured", dtypes=(out_dtype,), params={"grid": tuple(meta["grid"] or ())},
                description=f"launched from {site[0]}:{site[1]}" if site else "")

    class _Kernels(list):
        """The kernel, loaded when first listed (after the runner chose the mode)."""

        def __iter__(self):
            return iter([kernel()])

        def __len__(self):
            return 1

    return Scenario(name=name, make_inputs=make_inputs, launch=launch, reference=reference, cases=[case],
                    kernels=_Kernels(), description=f"captured launch of {meta['qualname']} "
                                                    f"({os.path.basename(meta['kernel_file'])}:{meta['kernel_line']})",
                    deterministic=False, reference_is_capture=True, explain_mismatch=explain_mismatch,
                    not_comparable=not_comparable, launch_findings=lambda: list(ran.get("bands") or ()),
                    picked=({meta["kernel"]: meta["config"]} if meta.get("config") and not meta.get("interpreted")
                            else None),
                    nothing_to_compare=(f"the captured launch did not finish in the program ({meta['error'].rstrip(': ')})"
                                        if meta.get("error") else ""))
