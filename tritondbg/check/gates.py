"""The gates. Each takes a Scenario and a GateContext and returns a GateOutcome (pass / FAIL / skipped).

A gate whose machinery needs the other execution mode (the sanitizers need the interpreter, IR stats need
compiled mode without a launch) runs it through the `tritondbg` CLI in a subprocess: TRITON_INTERPRET is
fixed per process. A gate that cannot run here says skipped with the reason, never passed.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

from tritondbg import runner, selection
from tritondbg.check.outcome import (ERROR, FAIL, PASS, SKIP, GateOutcome, json_record, module_argv, more_findings,
                                     skipped_here)
from tritondbg.check.launches import LaunchCounter, nothing_checked, ran_no_kernel
from tritondbg.check.resources_gate import resources
from tritondbg.configs import autotuners, config_str, nothing_to_sweep
from tritondbg.errors import UsageError

# Three-way check for low precision (flash-attention's test_layer_norm habit): the kernel's error against the
# fp32 reference may be at most K times torch-at-the-same-dtype's error, plus atol.
THREE_WAY_K = 2.0
LOW_PRECISION = ("float16", "bfloat16", "float8_e4m3fn")


@dataclass
class GateContext:
    device: str = "cpu"                      # "cpu": interpreter; "cuda": compiled on the local GPU
    seed: int = 0
    arch: str | None = None                  # resources gate target (default: local GPU, else sm_90)
    baseline_file: str = "tritondbg-baseline.json"
    update_baseline: bool = False
    perf_margin: float = 0.10                # perf gate: allowed slow-down against the recorded baseline
    perf_min_ratio: float = 0.5              # perf gate: torch_time / our_time must be at least this
    target: str = ""                         # how the scenario was named (bundled name or file::name)
    case: str | None = None                  # --case: only this case (default: every case that runs here)
    strict: bool = False                     # --strict: the sanitize gate fails on a warning too
    out_dir: str | None = None               # --out: where a failed compile's log goes (default: the temp folder)

    @property
    def interpret(self) -> bool:
        return self.device == "cpu"


# ---------------------------------------------------------------------------------------------------------
# instruments used by the gates
# ---------------------------------------------------------------------------------------------------------

class Capture(runner.Instrument):
    """Keeps the inputs and the kernel's outputs (CPU copies) of each launch."""

    name = "capture"

    def __init__(self):
        self.inputs: dict | None = None
        self.outputs: list = []

    def active(self, scenario, case, inputs):
        import contextlib

        self.inputs = inputs
        return contextlib.nullcontext()

    def finish(self, result, out, expected) -> None:
        import torch

        if out is None:  # the launch failed or returned nothing: no output to keep
            return
        outs = out if isinstance(out, (tuple, list)) else [out]
        self.outputs.append([o.detach().to("cpu").clone() if isinstance(o, torch.Tensor) else o for o in outs])


class ThreeWay(runner.Instrument):
    """Low precision: kernel error vs the fp32 reference <= K * torch-at-same-dtype error + atol."""

    name = "three_way"

    def __init__(self, scenario):
        self.scenario = scenario
        self.inputs = None

    def active(self, scenario, case, inputs):
        import contextlib

        # torch's baseline gets its own copy, taken before the launch: an in-place kernel (Liger's rope) must
        # not hand it already-changed inputs
        wanted = self.scenario.baseline is not None and any(d in LOW_PRECISION for d in case.dtypes)
        self.inputs, self.case = (runner.copy_inputs(inputs) if wanted else None), case
        return contextlib.nullcontext()

    def finish(self, result, out, expected) -> None:
        import torch

        from tritondbg.compare import pairs, tolerance

        if out is None or result.dtype not in LOW_PRECISION or self.scenario.baseline is None or self.inputs is None:
            return
        try:
            base = self.scenario.baseline(**self.inputs)
        except Exception as e:  # e.g. torch._scaled_mm has no CPU kernel: say so, the tolerance check stands
            result.extra["three_way"] = f"skipped: torch baseline failed on {result.device}: {type(e).__name__}"
            return
        atol, _ = tolerance(result.dtype, self.case.atol, self.case.rtol)
        try:
            matched = [(o, b, r) for (_, o, r), (_, b, _) in zip(pairs(out, expected), pairs(base, expected, "torch"))]
        except ValueError as e:
            result.extra["three_way"] = f"skipped: {e}"
            return
        rows = []
        for o, b, r in matched:
            r = r.detach().to("cpu", torch.float32)
            e_kernel = float((o.detach().to("cpu", torch.float32) - r).abs().nan_to_num(float("inf")).max())
            e_torch = float((b.detach().to("cpu", torch.float32) - r).abs().nan_to_num(float("inf")).max())
            rows.append({"kernel_err": e_kernel, "torch_err": e_torch, "bound": THREE_WAY_K * e_torch + atol})
        result.extra["three_way"] = rows
        for row in rows:
            if row["kernel_err"] > row["bound"]:
                result.findings.append({
                    "kind": "three_way", "severity": "error",
                    "message": (f"kernel error {row['kernel_err']:.3g} > {THREE_WAY_K:g} x torch {result.dtype} "
                                f"error {row['torch_err']:.3g} + atol {atol:g}")})


# ---------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------

def _cases(scenario, ctx: GateContext):
    """Cases a gate runs here: interpretable ones on the CPU, every case on a GPU (only ``ctx.case`` if set)."""
    return [c for c in scenario.cases if (c.interpret or not ctx.interpret) and selection.case_wanted(ctx.case, c.name)]


def _device(ctx: GateContext) -> str:
    return "cpu" if ctx.interpret else "cuda"


def no_such_case(scenario, gate: str, case: str | None) -> GateOutcome | None:
    """A FAIL when the scenario has no case, or none that ``--case`` names (a typo must not go green); else None."""
    if not scenario.cases:
        return GateOutcome(scenario.name, gate, FAIL, selection.no_cases(scenario))
    if not any(selection.case_wanted(case, c.name) for c in scenario.cases):
        return GateOutcome(scenario.name, gate, FAIL, f"--case {case!r} matches no case of {scenario.name}; "
                                                     f"its cases: {', '.join(scenario.case_names)}")
    return None


def _nothing_ran(scenario, gate: str, ctx: GateContext) -> GateOutcome | None:
    """A gate with no case to run here is skipped with why, never passed; a scenario with no case at all is a
    mistake in its file (a FAIL: CI must not go green on it)."""
    if _cases(scenario, ctx):
        return None
    unmatched = no_such_case(scenario, gate, ctx.case)
    if unmatched:
        return unmatched
    chosen = "" if ctx.case is None else f" --case {ctx.case!r} names"
    where = f"under the interpreter (every case{chosen} is interpret=False)" if ctx.interpret else "here"
    return GateOutcome(scenario.name, gate, SKIP, f"no case runs {where}")


def _attributed(ctx: GateContext, *instruments) -> list:
    """``instruments`` and, under the interpreter, the kernel-error attribution ``interpret`` uses (an exception
    in the kernel names the kernel line and pid, not the launch wrapper's line that called it)."""
    if not ctx.interpret:
        return list(instruments)
    from tritondbg.interp.attribution import KernelReport

    return [KernelReport(), *instruments]


def _sanitizers(ctx: GateContext) -> list:
    """The sanitizers, where the gate's runs are interpreted (none on the GPU)."""
    if not ctx.interpret:
        return []
    from tritondbg.interp.sanitize import Sanitizer

    return [Sanitizer()]


def _first_failure(results) -> str:
    for r in results:
        if r.status != "pass":
            errors = [f["message"] for f in r.findings if f.get("severity", "error") == "error" and f.get("message")]
            # a kernel error is both the message and a finding: said once
            extra = errors[0] if errors and errors[0] not in (r.message or "") else ""
            return f"{r.case}/{r.dtype}: {r.message}" + (f": {extra}" if extra else "")
    return ""


def _cli(args: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    """`tritondbg ARGS` in a subprocess, within what is left of the gate item's deadline."""
    from tritondbg import watchdog

    timeout = watchdog.remaining(timeout)
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["TRITONDBG_SAVE"] = "0"
    return subprocess.run(module_argv("tritondbg", *args), capture_output=True, text=True,
                          env=env, timeout=timeout)


def _bitwise_equal(x, y) -> bool:
    import torch

    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    return torch.equal(x.contiguous().reshape(-1).view(torch.uint8), y.contiguous().reshape(-1).view(torch.uint8))


def _count_differ(x, y) -> int:
    a, b = x.float(), y.float()
    return int((~((a == b) | (a.isnan() & b.isnan()))).sum())


def _how_far(x, y) -> tuple[float, float]:
    """(max abs difference, max relative difference) where two runs' finite outputs differ."""
    a, b = x.double(), y.double()
    both = a.isfinite() & b.isfinite() & (a != b)
    if not bool(both.any()):
        return float("nan"), float("nan")
    d = (a - b).abs()[both]
    scale = a.abs().maximum(b.abs())[both].clamp_min(1e-30)
    return float(d.max()), float((d / scale).max())


ROUNDING_STEPS = 64  # atomics adding in another order: up to this many of the output dtype's steps at its scale


def _order_cause(rel: float, far: float | None = None, x=None) -> str:
    """Why two runs, the second with its programs reversed, differ: rounding-size differences are float atomics
    summing in another order; larger ones, programs that depend on each other's writes. Rounding-size: within 1e-3
    of each element, or within ROUNDING_STEPS steps of the output dtype at the output's largest magnitude (a sum
    near zero differs by a large relative amount: helper-83's fp16 split-K atomics, 0.00195 apart, "2 relative")."""
    import torch

    if far is not None and far == far and x is not None and x.is_floating_point():
        scale = float(x.detach().double().abs().nan_to_num(0.0, 0.0, 0.0).max()) if x.numel() else 0.0
        if scale > 0 and far <= ROUNDING_STEPS * torch.finfo(x.dtype).eps * scale:
            rel = 0.0
    if rel == rel and rel <= 1e-3:
        return "float atomics then add in another order, a rounding-size difference"
    return ("more than rounding: a program depends on what another writes (it reads a neighbour's output, or a store "
            "races atomics; the sanitize gate names the races it sees), not only float atomics adding in another "
            "order")


# ---------------------------------------------------------------------------------------------------------
# gates
# ---------------------------------------------------------------------------------------------------------

def correctness(scenario, ctx: GateContext) -> GateOutcome:
    """Every case and dtype against the reference (+ the three-way check for low precision)."""
    empty = _nothing_ran(scenario, "correctness", ctx)
    if empty:
        return empty
    results = []
    for case in _cases(scenario, ctx):
        for dtype in case.dtypes:
            results.append(runner.run_case(scenario, case, dtype, device=_device(ctx), seed=ctx.seed,
                                           instruments=_attributed(ctx, ThreeWay(scenario), LaunchCounter())))
    failed = [r for r in results if r.status != "pass"]
    if failed:
        return GateOutcome(scenario.name, "correctness", FAIL, _first_failure(results), {"failed": len(failed)},
                           results)
    empty = nothing_checked(results, "compared")  # a scenario of n = 0 cases only: it passed, checking nothing
    if empty:
        return GateOutcome(scenario.name, "correctness", FAIL, empty, {}, results)
    skipped_3w = sorted({r.extra["three_way"] for r in results if isinstance(r.extra.get("three_way"), str)})
    summary = f"{len(results)} case x dtype runs match" + (f" ({'; '.join(skipped_3w)})" if skipped_3w else "")
    if getattr(scenario, "reference_is_capture", False):  # (helper-100: "correctness" read as "correct")
        summary += (" the captured outputs (what the program got: a wrong result it got passes here; the sanitize "
                    "gate checks the kernel itself)")
    return GateOutcome(scenario.name, "correctness", PASS, summary, {}, results)


def _drop_unlaunchable(scenario, ctx: GateContext, runs, results: list, failures: list, skipped: list):
    """Under the interpreter, the failed configs the target cannot launch, moved to ``skipped``: each case's
    configs compiled for it (the resources gate's compiles, shared through the compile cache), those past its
    shared memory told as the autotuner skips them (helper-108: GPTQModel's transpose kernel read out of bounds in
    one config only, of 278528 B of shared memory, which no GPU runs, and the gate failed). Where the compile fails,
    nothing moves."""
    from tritondbg.check.resources_gate import _compile_rows
    from tritondbg.configs import config_str

    try:
        rows = _compile_rows(scenario, ctx, runs)[0]  # (each case at the dtype it ran)
    except Exception:  # noqa: BLE001 - a compile that cannot run here: the verdicts stand
        return results, failures
    over = [(r.get("kernel"), r.get("case"), r.get("config") or {},
             f"{r.get('shared')} B of shared memory > {r.get('shared_limit')} B on {r.get('arch')}: the autotuner "
             "skips it (OutOfResources), so its run here does not count")
            for r in rows or () if str(r.get("config_source") or "").startswith("--all-configs")
            and r.get("shared_limit") is not None and (r.get("shared") or 0) > r["shared_limit"]]

    def why(kernel, case, cfg: dict) -> str | None:
        return next((w for k, c, rc, w in over if k == kernel and c == case and
                     all(rc.get(key) == v for key, v in cfg.items())), None)

    kept = []
    for r in results:
        sw = r.extra["sweep"]
        reason = why(sw["kernel"], r.case, sw["config"])
        if reason is None:
            kept.append(r)
            continue
        skipped.append({"kernel": sw["kernel"], "config": config_str(sw["config"]), "case": r.case,
                        "dtype": r.dtype, "reason": reason})
    told = {(s["kernel"], s["config"], s["case"]) for s in skipped}
    return kept, [f for f in failures if (f["kernel"], f["config"], f["case"]) not in told]


def all_configs(scenario, ctx: GateContext) -> GateOutcome:
    """Every config the autotuner would try (after its prune_configs_by) is correct, not only the winner; a config
    that fails its own tl.static_assert is listed as not applicable."""
    from tritondbg.discover import NoAutotunedKernel, with_autotuned_kernels
    from tritondbg.interp.sweep import sweep

    if not scenario.cases:
        return _nothing_ran(scenario, "all-configs", ctx)
    # small shapes only (configs x cases runs), first dtype of each
    runs = [(c, c.dtypes[0]) for c in _cases(scenario, ctx) if c.interpret]
    if not runs:
        why = "no small (interpret=True) case to sweep" if autotuners(scenario.kernels) else "no autotuned kernel"
        return GateOutcome(scenario.name, "all-configs", SKIP, why)
    plain = nothing_to_sweep(scenario)
    if plain:  # said before any run (a kernel that hangs spent --timeout here on it)
        return GateOutcome(scenario.name, "all-configs", SKIP, f"no autotuned kernel: {plain} "
                           "(one config: nothing to sweep; no autotuned kernel reachable from the launch either)")
    try:  # every autotuned kernel the cases launch, listed in Scenario.kernels or not (fla's wrappers launch their own)
        scenario = with_autotuned_kernels(scenario, runs, device=_device(ctx), seed=ctx.seed)
    except NoAutotunedKernel:
        return GateOutcome(scenario.name, "all-configs", SKIP, "no autotuned kernel (none listed in Scenario.kernels, "
                           "none launched by the cases)")
    skipped: list = []
    # under the interpreter each config also runs under the sanitizers, as `interpret --all-configs` does: a
    # missing mask that only some block sizes expose reads out of bounds and may still match the reference
    swept, failures = sweep(scenario, runs, device=_device(ctx), seed=ctx.seed, skipped=skipped,
                            instruments=_attributed(ctx, *_sanitizers(ctx)))
    results = [r for r in swept if r.extra["sweep"]["used"]]  # runs where the swept kernel was launched
    if failures and ctx.interpret:  # (compiled only then: a config that failed may be one no GPU launches)
        results, failures = _drop_unlaunchable(scenario, ctx, runs, results, failures, skipped)
    na = [f"{s['kernel']} {s['config']} on {s['case']}: {s['reason']}" for s in skipped]
    bad = [f"{f['kernel']} {f['config']} on {f['case']}: {f['message']}" for f in failures]
    if bad:
        zero = sum(1 for r in results if not r.passed and r.extra.get("undefined_as_zero") and
                   all(v["passed"] for v in r.extra["undefined_as_zero"].values()))
        why = (f" ({zero} only through undefined lanes: they match with 0 there, as today's compiled code reads them)"
               if zero else "")
        return GateOutcome(scenario.name, "all-configs", FAIL, f"{len(bad)} config run(s) wrong{why}; first: {bad[0]}",
                           {"wrong": bad, "not_applicable": na}, results)
    n = len({(r.extra["sweep"]["kernel"], str(r.extra["sweep"]["config"])) for r in results
             if not r.extra.get("not_compared")})
    apart = sorted({f"{r.extra['sweep']['kernel']} {config_str(r.extra['sweep']['config'])}" for r in results
                    if r.extra.get("not_compared")})
    if not results:  # every config was pruned or refused itself (tl.static_assert): nothing was checked
        first = f"; first: {na[0]}" if na else ""
        return GateOutcome(scenario.name, "all-configs", FAIL, f"no config ran: {len(na)} not applicable or "
                           f"pruned{first}", {"not_applicable": na}, results)
    if not n:  # every run's output was left uncompared: no config was checked against anything but the sanitizers
        return GateOutcome(scenario.name, "all-configs", FAIL, f"no config's output was compared: {len(apart)} "
                           "left uncompared as partial results (the captured config among them?)", {}, results)
    note = f"; {len(na)} not applicable or pruned" if na else ""
    if apart:  # a reproducer's other configs whose partial results add up to the capture's: sanitizers only
        note += (f"; {len(apart)} not compared with the capture (partial results per program that add up to the "
                 f"capture's total; sanitizers only): {', '.join(apart[:3])}")
    clean = " and clean under the sanitizers" if ctx.interpret else ""
    return GateOutcome(scenario.name, "all-configs", PASS, f"{n} configs correct{clean} on {len(results)} runs{note}",
                       {"not_applicable": na} if na else {}, results)


def sanitize(scenario, ctx: GateContext) -> GateOutcome:
    """No out-of-bounds access, cross-program race, NaN/Inf born in the kernel, or read of undefined lanes."""
    try:
        from tritondbg.interp.sanitize import Sanitizer
    except ImportError as e:
        return GateOutcome(scenario.name, "sanitize", SKIP, f"sanitizers not available: {e}")
    ctx_cpu = GateContext(device="cpu", case=ctx.case)  # the sanitizers run under the interpreter
    empty = _nothing_ran(scenario, "sanitize", ctx_cpu)
    if empty:
        return empty
    if runner.current_mode() != "interpret":
        p = _cli(["interpret", ctx.target or scenario.name, "--case", ctx.case or "all", "--json"])
        record = json_record(p.stdout)
        if record is None:
            return GateOutcome(scenario.name, "sanitize", FAIL, (p.stderr.strip().splitlines() or ["no output"])[-1])
        from tritondbg.record import RunRecord

        results = RunRecord.from_dict(record).results
    else:
        results = []
        for case in _cases(scenario, ctx):
            for dtype in case.dtypes:
                results.append(runner.run_case(scenario, case, dtype, device="cpu", seed=ctx.seed,
                                               instruments=_attributed(ctx_cpu, Sanitizer(), LaunchCounter())))
    findings = [(r, f) for r in results for f in r.findings if f.get("severity", "error") == "error"]
    if findings:
        r, f = findings[0]
        where = f"{f.get('file', '?')}:{f.get('line', '?')}"
        return GateOutcome(scenario.name, "sanitize", FAIL,
                           f"{f.get('kind')} at {where} ({r.case}/{r.dtype}): {f.get('message', '')}"
                           + more_findings(findings[1:]), {"findings": [f for _, f in findings]}, results)
    errors = [r for r in results if r.status == "error"]
    if errors:
        return GateOutcome(scenario.name, "sanitize", FAIL, _first_failure(errors), {}, results)
    empty = nothing_checked(results)  # n = 0 only (a grid of 0 programs): no program ran under the sanitizers
    if empty:
        return GateOutcome(scenario.name, "sanitize", FAIL, empty, {}, results)
    warnings = [f for r in results for f in r.findings if f.get("severity", "error") == "warning"]
    if warnings and ctx.strict:
        w = warnings[0]
        return GateOutcome(scenario.name, "sanitize", FAIL,
                           f"{len(warnings)} warning(s) (--strict); first: {w.get('kind')} at {w.get('file', '?')}:"
                           f"{w.get('line', '?')}: {w.get('message', '')}", {"findings": warnings}, results)
    said = (f" ({len(warnings)} warning(s); first: {warnings[0].get('kind')} at {warnings[0].get('file', '?')}:"
            f"{warnings[0].get('line', '?')})") if warnings else ""
    return GateOutcome(scenario.name, "sanitize", PASS, f"no finding on {len(results)} runs{said}",
                       {"warnings": warnings} if warnings else {}, results)


def determinism(scenario, ctx: GateContext) -> GateOutcome:
    """Two runs with the same inputs give bitwise-equal outputs (where the scenario claims it)."""
    import contextlib

    import torch

    from tritondbg.interp import hooks, initcheck

    if not getattr(scenario, "deterministic", True):
        why = ("a reproducer claims nothing about its kernel's determinism (write a scenario with "
               "deterministic=True to check it)" if getattr(scenario, "reference_is_capture", False)
               else "scenario does not claim bitwise determinism (Scenario.deterministic=False)")
        return GateOutcome(scenario.name, "determinism", SKIP, why)
    empty = _nothing_ran(scenario, "determinism", ctx)
    if empty:
        return empty
    results, differ = [], []
    # every dtype of each case: a run that differs in bf16 only passed when float32 came first (user report)
    # under the interpreter the second run takes the programs in reverse order, as a GPU may schedule them: a
    # float atomic_add across programs sums in another order there (it always passed on the CPU, in grid order)
    reorder = ctx.interpret

    def once(case, dtype, reverse: bool):
        cap = Capture()
        # torch.empty & co. hand out marked memory: an output element no program writes holds the same mark in
        # both runs (not whatever the allocator gave each: "differ between two identical runs", blamed on order)
        with hooks.reversed_programs() if reverse else contextlib.nullcontext(), initcheck.marking():
            r = runner.run_case(scenario, case, dtype, device=_device(ctx), seed=ctx.seed,
                                instruments=_attributed(ctx, cap, LaunchCounter()), reference=False)  # two launches
        return r, cap.outputs[0] if cap.outputs else None

    unwritten = []

    for case, dtype in ((c, d) for c in _cases(scenario, ctx) for d in c.dtypes):
        first, a = once(case, dtype, False)
        second, b = once(case, dtype, reorder)
        if reorder and second.status == "error" and first.status != "error":
            # a kernel whose programs wait on earlier ones (a lookback scan) cannot run backwards one after the
            # other: compare with a second run in grid order
            second, b = once(case, dtype, False)
            second.extra["reverse_order_failed"] = True
        results += [first, second]
        if a is None or b is None:
            continue
        reversed_run = reorder and not results[-1].extra.get("reverse_order_failed")
        for i, (x, y) in enumerate(zip(a, b)):
            left = initcheck.count_marked(x)
            if left:
                unwritten.append(f"{case.name}/{dtype} output {i}: {left} of {x.numel()}")
            if isinstance(x, torch.Tensor) and not _bitwise_equal(x, y):
                far, rel = _how_far(x, y) if x.is_floating_point() else (float("nan"), float("inf"))
                size = f", by up to {far:.3g} ({rel:.2g} relative)" if far == far else ""
                order = (f" (the second ran its programs in reverse order, as a GPU may schedule them: "
                         f"{_order_cause(rel, far, x)})" if reversed_run else "")
                differ.append(f"{case.name}/{dtype} output {i}: {_count_differ(x, y)} elements differ "
                              f"between two identical runs{size}{order}")
    errors = [r for r in results if r.status == "error"]
    if differ:
        return GateOutcome(scenario.name, "determinism", FAIL, differ[0], {"differ": differ}, results)
    if errors:
        return GateOutcome(scenario.name, "determinism", FAIL, _first_failure(errors), {}, results)
    torch_only = [r for r in results if ran_no_kernel(r)]  # a torch fallback is deterministic: not the kernel
    if torch_only:
        return GateOutcome(scenario.name, "determinism", FAIL, _first_failure(torch_only), {}, results)
    empty = nothing_checked(results, "compared")  # n = 0 only: two empty outputs are equal, checking nothing
    if empty:
        return GateOutcome(scenario.name, "determinism", FAIL, empty, {}, results)
    how = ""
    if reorder:
        kept = sum(1 for r in results[1::2] if r.extra.get("reverse_order_failed"))
        how = " (programs in grid order, then reversed" + (f"; {kept} run(s) could not reverse them" if kept else "") + ")"
    left = (f"; element(s) no program wrote (torch.empty's memory, the same mark in both runs; the sanitize gate "
            f"names them): {unwritten[0]}" + (f" and {len(unwritten) - 1} more output(s)" if len(unwritten) > 1 else "")
            if unwritten else "")
    return GateOutcome(scenario.name, "determinism", PASS, f"{len(results) // 2} case x dtype runs bitwise equal "
                       f"twice{how}{left}", {"unwritten": unwritten} if unwritten else {}, results)


def perf(scenario, ctx: GateContext) -> GateOutcome:
    """GPU: median time vs torch (ratio floor) and vs the recorded baseline file (within the margin); on a CPU
    ``run_gate`` skips it (outcome.GPU_ONLY)."""
    from tritondbg.check.perf import perf_gate

    return perf_gate(scenario, ctx)


def agreement(scenario, ctx: GateContext) -> GateOutcome:
    """GPU: the interpreter's result and the compiled GPU result agree within the case tolerance; on a CPU
    ``run_gate`` skips it (outcome.GPU_ONLY)."""
    from tritondbg.check.perf import agreement_gate

    return agreement_gate(scenario, ctx)


GATES: dict[str, Callable[[Any, GateContext], GateOutcome]] = {
    "correctness": correctness,
    "all-configs": all_configs,
    "sanitize": sanitize,
    "resources": resources,
    "perf": perf,
    "agreement": agreement,
    "determinism": determinism,
}
DEFAULT_GATES = tuple(GATES)


def _with_saved_copies(outcome: GateOutcome, scenario) -> GateOutcome:
    """A reproducer that replayed the copy of its kernel saved at capture (the kernel's file is gone or no longer
    defines it) says so in the gate's reason: a pass there checked the code as it was, not the code of today."""
    km = sys.modules.get("tritondbg.program.kernel_module")  # loaded only where a reproducer was
    why = km.saved_copy(os.path.dirname(scenario.source), scenario.name) if km is not None and scenario.source else ""
    if why:
        outcome.reason = f"{outcome.reason} (checked the code as captured: {why})"
    return outcome


def run_gate(gate: str, scenario, ctx: GateContext) -> GateOutcome:
    """Run one gate; an exception inside the gate is that gate's FAIL with the one-line reason. A GPU-only gate
    on the CPU is skipped (``outcome.skipped_here``). Each run it made names the gate in ``extra["gate"]`` (``check
    --json``'s results: which gate made which run; ``session.make_record`` adds the item's kernel beside it)."""
    why = skipped_here(gate, ctx.device)
    if why:
        return GateOutcome(scenario.name, gate, SKIP, why)
    try:
        outcome = GATES[gate](scenario, ctx)
        for r in outcome.results:
            r.extra.setdefault("gate", gate)
        return _with_saved_copies(outcome, scenario)
    except subprocess.TimeoutExpired as e:
        cmd = " ".join(str(a) for a in (e.cmd or [])[2:]) if isinstance(e.cmd, (list, tuple)) else str(e.cmd)
        return GateOutcome(scenario.name, gate, ERROR, f"timed out after {e.timeout:g} s waiting for `{cmd}`")
    except UsageError as e:  # the scenario cannot run as given (a kernel that no longer loads): its words
        return GateOutcome(scenario.name, gate, FAIL, str(e))
    except Exception as e:  # noqa: BLE001 - a broken gate must fail loudly, not pass or crash the run
        return GateOutcome(scenario.name, gate, FAIL, f"gate crashed: {type(e).__name__}: {e}")
