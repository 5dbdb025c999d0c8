"""One `ir` request (kernel, case, dtype, config, arch) -> the IRItems it compiles to.

The fast index answers first (no torch import); otherwise the scenario is imported in compiled mode, its launch
wrapper is captured on CPU tensors and every launch compiled for the target (Triton's compile cache decides hit
or miss), and the result is stored in the index for next time.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import Any

from tritondbg import settings
from tritondbg.configs import config_dict, distinct, made_up, not_applicable_reason
from tritondbg.errors import UsageError
from tritondbg.ir import index
from tritondbg.ir.item import COMPILED, IN_PROCESS, NOT_COMPILED, TRITON_HIT, IRItem, specialization
from tritondbg.ir.targets import Arch


@dataclass(frozen=True)
class Request:
    target: str                 # bundled scenario name or path/to/cases.py[::name]
    arch: Arch
    arch_source: str
    case: str | None = None
    dtype: str | None = None
    config: str | None = None   # --config K=V,...
    all_configs: bool = False
    compile_pruned: bool = True  # False: a config the kernel's pruning removes for the case is listed, not compiled

    def key(self) -> dict[str, Any]:
        """What identifies the request in the index (the target as an absolute path for user files)."""
        from tritondbg.loader import is_path_target

        target = self.target
        if is_path_target(target):
            file, sep, name = target.partition("::")
            target = os.path.realpath(os.path.expanduser(file)) + sep + name
        return {"target": target, "arch": self.arch.name, "case": self.case, "dtype": self.dtype,
                "config": self.config, "all_configs": self.all_configs, "compile_pruned": self.compile_pruned,
                "records": os.path.abspath(settings.get().out_dir), "tool": _version()}

    def with_changes(self, **changes) -> "Request":
        return replace(self, **changes)


def _version() -> str:
    from tritondbg import __version__

    return __version__


def resolve(req: Request, *, use_index: bool = True) -> tuple[list[IRItem], str]:
    """The request's items and, when the index could not answer, why (printed on a miss)."""
    key = req.key()
    env = index.env_snapshot()   # before set_mode adds its defaults: what lookup() will compare against
    if use_index:
        items, why = index.lookup(key)
        if items is not None:
            for item in items:
                item.arch_source = req.arch_source
            return items, ""
    else:
        why = "--no-index"
    items, watch = _capture_all(req)
    index.store(key, items, watch, env)
    return items, why


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a request: ``items`` are the compiles that finished, then a placeholder
    (``extra["interrupted"]``) for each config, kernel or case that did not, so that `ir` prints what it has
    (--all-configs lost ~3 finished configs of 9 to a Ctrl-C). Nothing goes into the index."""

    def __init__(self, items: list[IRItem]):
        super().__init__("interrupted")
        self.items = items


def _capture_all(req: Request):
    from tritondbg import loader, runner, selection
    from tritondbg.configs import autotuners, check_keys, choose_requested, parse_config
    from tritondbg.ir.capture import CaptureError
    from tritondbg.ir.decision import Watch
    from tritondbg.ir.targets import check_supported

    check_supported(req.arch)   # one line before any work, not a compiler's wall of text
    runner.set_mode("compiled")
    from tritondbg.ir.capture import StubDriver
    from tritondbg.standin import answering_as

    with answering_as(req.arch, StubDriver(req.arch)):  # import-time device questions: the target's answers
        scenario = loader.load(req.target)
    cases = selection.select_cases(scenario, req.case, interpret=False)
    # each case named (a list, a glob, `all`) at its first dtype, or at each --dtype it lists
    runs = selection.select_runs(cases, req.dtype) if req.dtype is not None else [(c, c.dtypes[0]) for c in cases]
    requested = parse_config(req.config)
    tuners = autotuners(scenario.kernels)
    check_keys(tuners, requested)
    picks = choose_requested(tuners, requested)  # a value no listed config has: one line now, before any compile
    items: list[IRItem] = []
    watch = Watch()
    for n, (case, dtype) in enumerate(runs):
        try:
            got, decider = _capture_case(scenario, case, dtype, req, requested, picks, tuners)
        except CaptureError as exc:  # of several cases: which one, and the items of those before it (`ir` shows
            said = f"{case.name}/{dtype}: "  # them, then the error; they go into no index)
            if len(runs) > 1 and not str(exc).startswith(said):
                exc = CaptureError(said + str(exc))
            exc.done, exc.run = items, (case.name, dtype)
            raise exc
        except KeyboardInterrupt as exc:  # what finished, then what did not
            done = exc.items if isinstance(exc, Interrupted) else [_interrupted(scenario, case, dtype, req)]
            rest = [_interrupted(scenario, c, dt, req) for c, dt in runs[n + 1:]]
            raise Interrupted(items + done + rest) from exc
        items += got
        watch.globs.update(decider.watch.globs)
    return items, watch


def _capture_case(scenario, case, dtype: str, req: Request, requested, picks, tuners):
    """The items of one case and dtype (one per kernel launched; per config with --all-configs) and the Decider
    that chose their configs."""
    from tritondbg.ir.capture import capture, case_inputs
    from tritondbg.ir.decision import Decider, recorded_runs, run_record_pattern

    out_dir = settings.get().out_dir
    decider = Decider(requested=requested, picks=picks, case_name=case.name,
                      case_config=dict(case.config or {}) or None,
                      records=recorded_runs(out_dir, scenario.name, case.name, dtype),
                      cache_dir=index.triton_cache_dir(), record_pattern=run_record_pattern(out_dir))
    from tritondbg.program import cpu_device

    with cpu_device.serving():  # no GPU: the launch wrapper's CUDA tensors on the CPU, as under `interpret`
        inputs = case_inputs(scenario, case, dtype)
        launches = capture(scenario, case, dtype, req.arch, decider, inputs=inputs)
    items = [_item(la, scenario, case, dtype, req) for la in launches]
    if req.all_configs:
        # every autotuned kernel the launch ran, listed in Scenario.kernels or not (fla's wrappers launch their own)
        tuners = {**decider.tuners, **tuners}
        if not any(la.kernel in tuners for la in launches):  # nothing to sweep: say so, show the launch
            print(f"note: --all-configs: {scenario.name} launches no autotuned kernel; its "
                  f"{len(launches)} launch(es) as they are", file=sys.stderr)
        plain = [i for i in items if i.kernel not in tuners]
        try:
            items = _sweep(scenario, case, dtype, req, decider, launches, tuners, inputs) + plain
        except Interrupted as exc:
            raise Interrupted(exc.items + plain) from exc
    return items, decider


def _interrupted(scenario, case, dtype: str, req: Request) -> IRItem:
    """A case a Ctrl-C stopped before its launch was compiled: its kernels are not known."""
    return IRItem(scenario=scenario.name, case=case.name, dtype=dtype, arch=req.arch.name, arch_source=req.arch_source,
                  kernel="", kernel_file="", config={}, config_source="interrupted before this case was compiled",
                  grid=None, specialization=[], entry="", files={}, metadata_file="", name="", source=NOT_COMPILED,
                  extra={"interrupted": True})


def _sweep(scenario, case, dtype, req, decider, launches, tuners, inputs) -> list[IRItem]:
    """One item per listed config of every autotuned kernel the case launches (pruned ones included: the
    printed source says whether the pruning would keep it; with ``req.compile_pruned`` False they are listed
    without being compiled). A Ctrl-C raises ``Interrupted`` with the configs compiled so far and the others."""
    out: list[IRItem] = []
    names = list(dict.fromkeys(la.kernel for la in launches if la.kernel in tuners))
    at = {"kernel": 0, "configs": None, "config": 0}   # where the sweep is, for the interrupt
    try:
        for k, name in enumerate(names):
            at.update(kernel=k, configs=None, config=0)
            configs = _configs_to_sweep(scenario, case, dtype, req, decider, name, tuners[name], inputs)
            at["configs"] = configs
            for i, config in enumerate(configs):
                at["config"] = i
                out += _sweep_one(scenario, case, dtype, req, decider, launches, name, config, i, len(configs),
                                  inputs)
    except KeyboardInterrupt as exc:
        rest = []
        for k, name in enumerate(names[at["kernel"]:], at["kernel"]):
            configs = (at["configs"] if k == at["kernel"] and at["configs"] is not None
                       else list(tuners[name].configs))
            first = at["config"] if k == at["kernel"] else 0
            base = next(la for la in launches if la.kernel == name)
            for i in range(first, len(configs)):
                item = _not_compiled(base, scenario, case, dtype, req)
                item.config, item.grid = config_dict(configs[i]), None
                item.config_source = f"--all-configs: config {i + 1} of {len(configs)} (interrupted: not compiled)"
                item.extra["interrupted"] = True
                rest.append(item)
        raise Interrupted(out + rest) from exc
    finally:
        decider.pins = {}
    return out


def _sweep_one(scenario, case, dtype, req, decider, launches, name, config, i, n, inputs) -> list[IRItem]:
    """The item of config ``i`` of ``n`` of kernel ``name`` (none when its launch did not run it)."""
    from tritondbg.ir.capture import CaptureError, capture

    decider.pins = {name: config}
    this = config_dict(config)

    def kept() -> bool:  # known once the pinned launch was decided
        return this in decider.kept.get(name, [this])

    try:
        got = capture(scenario, case, dtype, req.arch, decider, inputs=inputs,
                      select=lambda n_: n_ == name and (req.compile_pruned or kept()))
    except CaptureError as exc:  # a config the compiler refuses (its tl.static_assert, a resource
        reason = not_applicable_reason(exc)  # limit): Triton's autotuner skips it, so does the sweep
        if reason is None:
            raise
        base = next(la for la in launches if la.kernel == name)
        item = _not_compiled(base, scenario, case, dtype, req)
        item.config, item.grid = this, None
        item.config_source = f"--all-configs: config {i + 1} of {n} (not applicable: {reason})"
        item.extra["not_applicable"] = reason
        return [item]
    for la in got:
        if la.kernel != name or (la.compiled is None and kept()):
            continue
        item = _item(la, scenario, case, dtype, req) if la.compiled is not None else \
            _not_compiled(la, scenario, case, dtype, req)
        item.config_source = (f"--all-configs: config {i + 1} of {n}"
                              + ("" if kept() else " (pruned for this case: never runs here)"))
        item.extra["kept_by_pruning"] = kept()
        return [item]
    return []


def _configs_to_sweep(scenario, case, dtype, req, decider, name, tuner, inputs) -> list:
    """The listed configs, or the ones the autotuner's pruning returns for this case when it makes its own
    (gemlite's: NUM_STAGES added, blocks clamped to the shape; each listed one read "pruned", and the resources
    gate failed with "none of its configs can run"). Found by one decided launch that compiles nothing."""
    from tritondbg.ir.capture import CaptureError, capture

    if len(tuner.configs) < 2:
        return list(tuner.configs)
    decider.pins = {name: tuner.configs[0]}
    try:
        capture(scenario, case, dtype, req.arch, decider, inputs=inputs, select=lambda n: False)
    except CaptureError:
        return list(tuner.configs)
    finally:
        decider.pins = {}
    made = distinct(decider.kept_configs.get(name) or [])
    if made and made_up(tuner.configs, made):
        print(f"note: --all-configs: {name}'s prune_configs_by returns {len(made)} config(s) of its own for case "
              f"{case.name} in place of its {len(tuner.configs)} listed: those are compiled", file=sys.stderr)
        return made
    return list(tuner.configs)


def _not_compiled(launch, scenario, case, dtype: str, req: Request) -> IRItem:
    """A config listed without a compile (no cache entry)."""
    return IRItem(
        scenario=scenario.name, case=case.name, dtype=dtype, arch=req.arch.name, arch_source=req.arch_source,
        kernel=launch.kernel, kernel_file=os.path.realpath(launch.fn.fn.__code__.co_filename),
        config=dict(launch.config or {}), config_source=launch.config_source, grid=launch.grid, specialization=[],
        entry="", files={}, metadata_file="", name="", source=NOT_COMPILED)


def _item(launch, scenario, case, dtype: str, req: Request) -> IRItem:
    kernel = launch.compiled
    group = dict(kernel.metadata_group)
    metadata_file = next(p for c, p in group.items() if c.endswith(".json"))
    files = {c.rsplit(".", 1)[1]: p for c, p in group.items() if not c.endswith(".json")}
    if launch.cache_hit is None:
        source = IN_PROCESS
    else:
        source = TRITON_HIT if launch.cache_hit else COMPILED
    fn = launch.fn
    return IRItem(
        scenario=scenario.name, case=case.name, dtype=dtype, arch=req.arch.name, arch_source=req.arch_source,
        kernel=launch.kernel, kernel_file=os.path.realpath(fn.fn.__code__.co_filename),
        config=dict(launch.config or {}), config_source=launch.config_source, grid=launch.grid,
        specialization=specialization(fn, kernel.src), entry=os.path.dirname(metadata_file), files=files,
        metadata_file=metadata_file, name=os.path.basename(metadata_file)[:-len(".json")], source=source,
        compile_s=round(launch.compile_s, 3),
    )


def pick(items: list[IRItem], wanted: str | None) -> list[IRItem]:
    """Items of the kernel named ``wanted`` (exact name, else a unique substring); all when None."""
    if not wanted:
        return items
    names = list(dict.fromkeys(i.kernel for i in items))
    chosen = [n for n in names if n == wanted] or [n for n in names if wanted in n]
    if len(chosen) != 1:
        what = "matches several kernels" if chosen else "is not a kernel this case launches"
        raise UsageError(f"--kernel {wanted} {what}; choose from: {', '.join(names)}")
    return [i for i in items if i.kernel == chosen[0]]
