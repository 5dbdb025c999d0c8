"""A captured launch as an ordinary Scenario (the reproducer files ``capture.py`` writes call this).

``make_inputs`` rebuilds the tensors from the saved storage bytes (same shapes, strides, storage offsets
and aliasing, on the run's device), ``launch`` launches the kernel with the recorded grid, arguments,
options and autotune config (the autotuner is bypassed: the config that ran is the one replayed), and
``reference`` returns what the launch wrote when it was captured. The kernel comes from its module when
that is importable (and is not the program's ``__main__``), else from the saved copy in ``src/``
(``kernel_module.py``: how the kernel is found again).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from typing import Any

from tritondbg.errors import UsageError
from tritondbg.program import autotuned, filler_rerun, tables
from tritondbg.program.kernel_module import load_kernel, once, resolve, unwrap
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


def note_read(out_dir: str, name: str, tensor: str, by: str | None, at) -> None:
    """Reproducer ``name``'s launch left elements of ``tensor`` unwritten and the program read them (an error under
    ``interpret --``): kept in its data/NAME.json (``read_after``), so its replay's band is an error too. Never
    raises (a note to a reproducer already written)."""
    path = os.path.join(out_dir, "data", f"{name}.json")
    try:
        with open(path) as f:
            meta = json.load(f)
        reads = meta.setdefault("read_after", {})
        if tensor in reads:
            return
        from tritondbg.interp.frames import site_name

        reads[tensor] = f"{by or 'a later launch'}" + (f" at {site_name(at[0])}:{at[1]}" if at else "")
        with open(path + ".tmp", "w") as f:
            json.dump(meta, f)
        os.replace(path + ".tmp", path)
    except (OSError, ValueError, TypeError, IndexError):
        pass


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
        cls = resolve(importlib.import_module(mod), qual)
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
        group = meta["groups"][spec["group"]]
        if group.get("uninit_from"):
            initcheck.remember_as(t, group["uninit_from"], group.get("uninit_site"))
    return initcheck.marks_of({path: tensors[i] for path, i in compared.items()})


def _launched_from(meta: dict):
    """The replayed launch made where the program made it (its captured call site, else the kernel's definition):
    where a finding about the launch itself (an output it left unwritten) is placed, not this module's frame."""
    from tritondbg.interp import initcheck

    site = meta.get("call_site") or (meta.get("kernel_file") and [meta["kernel_file"], meta.get("kernel_line") or 0,
                                                                   meta.get("kernel") or "?"])
    return initcheck.launched_from(site)


def _bands(meta: dict, tensors: list, compared: dict, marks: dict) -> list:
    """The replayed launch's unwritten bands of such memory: warnings at the kernel's definition, as
    ``interpret -- CMD`` gave them."""
    from tritondbg.interp import initcheck

    if not marks:
        return []
    from tritondbg.interp.shadow_values import _sink

    san = _sink["san"]  # the run's sanitizer, when on: where the launch stored (program mode places it so too)
    spans = dict(getattr(san, "store_spans", None) or {})
    args = {path: tensors[i] for path, i in compared.items()}
    out = []
    for name, t, left, wrote in initcheck.bands(args, marks):
        f = initcheck.band_finding(name, t, left, wrote, later="as the captured launch left them in the program")
        f = {**f, "file": meta.get("kernel_file"), "line": meta.get("kernel_line")}
        out.append(initcheck.at_stores(f, name, initcheck.stores_into(t, spans)))
    return out


def _marked_reference(meta: dict, after: list, compared: dict) -> list:
    """Findings for captured outputs whose elements hold tritondbg's uninitialized-memory mark (a capture under
    the interpreter hands out torch.empty's memory marked): the program's launch left them so, or computed them
    from memory nothing wrote, and they match the replay only as NaN matches NaN, which checks nothing (helper-66:
    FlashInfer's gemm read an uninitialized C, every output NaN, and the correctness gate passed). One per tensor,
    a warning; an error when every element compared is such. (A tensor an unwritten band's warning names is left
    to that warning: ``_findings``.)"""
    from tritondbg.interp import initcheck

    hits, total = [], 0
    for path, i in compared.items():
        t = after[i]
        total += t.numel()
        if not meta["groups"][meta["tensors"][i]["group"]].get("uninit_from"):
            continue
        m = initcheck._holding_mark(t.detach().contiguous())
        if m is not None and m.any():
            mark = "NaN" if t.is_floating_point() else f"0x{initcheck.INT_MARK.get(t.element_size(), 0x5A):X}"
            hits.append((path, int(m.sum()), t.numel(), mark))
    every = bool(hits) and sum(n for _, n, _, _ in hits) == total
    return [{"kind": "uninit", "severity": "error" if every else "warning", "tensor": path,
             "file": meta.get("kernel_file"), "line": meta.get("kernel_line"), "message": (
                 f"the captured output holds tritondbg's uninitialized-memory mark ({mark}) in {n} of {numel} "
                 f"element(s) of {path}: the program's launch left them so, or computed them from memory nothing "
                 f"wrote; the replay matches them only as {'NaN matches NaN' if mark == 'NaN' else 'the mark matches itself'}, "
                 "which checks nothing there" + ("; nothing else was compared" if every else ""))}
            for path, n, numel, mark in hits]


def _findings(bands: list, marked: list, meta: dict | None = None) -> list:
    """The replay's own findings: unwritten bands, marked reference elements of the other tensors, and a grid with
    no program (a warning: a launch over no work is the program's business, an MoE expert with no token; what it
    was handed is not checked, which the gates must say)."""
    named = {f.get("tensor") for f in bands}
    out = list(bands) + [f for f in marked if f.get("tensor") not in named]
    reads = (meta or {}).get("read_after") or {}
    for i, f in enumerate(out):  # what the program read after the captured launch: an error there, so here
        if f.get("kind") == "uninit" and f.get("tensor") in reads and f.get("severity") == "warning":
            out[i] = {**f, "severity": "error", "message": f"{f['message']}; the program read them after the "
                      f"captured launch ({reads[f['tensor']]}), an error under `interpret --` as here"}
    grid = tuple((meta or {}).get("grid") or ())
    if grid and not all(int(g) > 0 for g in grid):
        out.append({"kind": "uninit", "op": "empty_grid", "severity": "warning", "tensor": None, "file": meta.get("kernel_file"),
                    "line": meta.get("kernel_line"), "message": (
                        f"the captured launch's grid {grid} has no program (a dimension of 0): it ran nothing, in the "
                        "program as here, so nothing it was handed is checked; a grid computed by floor division, "
                        "N // BLOCK, where triton.cdiv(N, BLOCK) was meant?")})
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


def _unchanged_compared(meta: dict) -> dict:
    """What the replay of a launch that changed no byte compares: every tensor argument by its argument path
    (``x_ptr``, ``desc.base``; a tensor reached through a table of data pointers as ``ptrs[1]``), less the tables
    themselves, whose entries are this process's addresses (helper-81: a grouped GEMM's replay failed on
    "arg0 (1,): got 9.41584e+13, expected 9.4792e+13", its pointer table)."""
    from tritondbg.program.capture import arg_paths

    pointers = meta.get("pointers") or []
    paths = arg_paths(meta.get("args") or {})
    paths.update(tables.paths(pointers, paths))  # the names capture gives them (its outputs' keys)
    held = {p["table"] for p in pointers}
    return {paths.get(i, f"tensor{i}"): i for i in range(len(meta["tensors"])) if i not in held}


def load_scenario(file: str, name: str) -> Scenario:
    folder = os.path.dirname(os.path.abspath(file))
    meta = _meta(folder, name)
    data_path = os.path.join(folder, "data", f"{name}.pt")
    _check_data(data_path, name)
    if not os.path.exists(data_path) and not meta.get("unsaved"):  # (helper-97: it was "make_inputs
        # `load_scenario.<locals>.make_inputs` (.../replay.py:292) raised FileNotFoundError", tritondbg's insides)
        raise UsageError(f"reproducer {name}: its tensor file {data_path} is missing (capture wrote it under data/ "
                         "beside the reproducer: copy the capture folder whole, or capture again)")
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
        made["tensors"], made["device"] = tensors, device  # what the launch gets (the reference gets copies)
        return {"tensors": tensors}

    def run_kernel(tensors, ran):
        args = {k: _decode(v, tensors) for k, v in meta["args"].items()}
        options = {k: v for k, v in meta["options"].items() if v is not None}
        config = dict(meta.get("config") or {})
        _allocator_for(tensors)
        with _launched_from(meta):
            if not autotuned.launch(kernel(), meta, args, options, ran):
                unwrap(kernel())[tuple(meta["grid"])](**{**args, **options, **config})

    def again():
        """The launch once more, on fresh copies of the captured inputs (filler_rerun.settle_fresh)."""
        fresh = _tensors(meta, data()["before"], made["device"])
        tables.rewrite(meta.get("pointers") or [], fresh)
        run_kernel(fresh, {})
        return fresh

    def launch(tensors):
        ran.clear()
        if meta["grid"] is None:
            raise UsageError(f"{name}: the grid was not recorded")
        marks = _uninit_marks(meta, tensors, compared)
        run_kernel(tensors, ran)
        ran["bands"] = _bands(meta, tensors, compared, marks)
        ran["no_work"] = all(t.numel() == 0 for t in tensors)  # (an MoE expert with no token: an empty grid meant)
        from tritondbg.interp.shadow_values import _sink

        if _sink["san"] is not None and "device" in made:  # undefined lanes that entered only sums: put to the test
            filler_rerun.settle_fresh(_sink["san"], again)
        return {path: tensors[i] for path, i in compared.items()}

    def reference(tensors):
        groups = data()["after_groups"]
        after = _tensors(meta, [groups.get(gi, b) for gi, b in enumerate(data()["before"])], "cpu")
        tables.relocate(meta, after, made.get("tensors") or tensors, compared)  # addresses the launch wrote
        marked["findings"] = _marked_reference(meta, after, compared)  # (``ran`` is cleared by each launch)
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
        # judged by value (helper-136: split-K's last writer stored 0 over zeroed memory): not "did not write"
        return (f"{', '.join(parts)} differ from the capture and still hold what they held before the launch: the "
                f"replayed kernel left them so (it did not write them, or wrote the values already there), where "
                f"the program's launch wrote others")

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
    made: dict = {}  # the tensors the last make_inputs made
    marked: dict = {}  # the reference's elements holding the uninitialized-memory mark (``_marked_reference``)
    # what the replay compares: the outputs; a launch that finished changing no byte: every tensor argument (the
    # replay must leave them as they were too); a launch that did not finish in the program: nothing
    compared = dict(meta["outputs"])
    if not compared and not meta.get("error"):
        compared = _unchanged_compared(meta)

    # the outputs' dtype, the loosest tolerance where they differ (helper-61: FlagAttention's bf16 O beside fp32
    # row statistics was labelled float32 and held to its tolerance, which a GPU capture replayed here can miss);
    # else (nothing written) the first floating tensor's: the label of the case
    from tritondbg.compare import TOLERANCES

    outs = [meta["tensors"][i]["dtype"] for i in meta["outputs"].values() if meta["tensors"][i]["dtype"] in DTYPES]
    out_dtype = max(outs, key=lambda d: TOLERANCES[d][1], default=None) if outs else \
        next((t["dtype"] for t in meta["tensors"] if t["dtype"] in DTYPES), "float32")
    if meta.get("dtype") in DTYPES:  # the capture's label: its inputs' dtype (each output keeps its own tolerance)
        out_dtype = meta["dtype"]
    if meta.get("error") and once(file, name):  # a scenario is loaded more than once in a run: said once
        print(f"tritondbg: {meta['name']}: the captured launch did not finish in the program "
              f"({meta['error'].rstrip(': ')}): nothing after it was captured, so a replay has no output to "
              "compare with", file=sys.stderr)
    elif not meta["outputs"] and not meta.get("error") and once(file, name):
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
                    not_comparable=not_comparable,
                    launch_findings=lambda: _findings(ran.get("bands") or (), marked.get("findings") or (),
                                                      None if ran.get("no_work") else meta),
                    picked=({meta["kernel"]: meta["config"]} if meta.get("config") and not meta.get("interpreted")
                            else None),
                    nothing_to_compare=(f"the captured launch did not finish in the program ({meta['error'].rstrip(': ')})"
                                        if meta.get("error") else ""))
