"""The resources gate (``tritondbg check --gates resources``): every config of every kernel a scenario's cases
launch, compiled for the target in one subprocess (``tritondbg.check.compiles``), judged by
``tritondbg.check.resources.judge``; no GPU needed. Split from gates.py (the registry of gates)."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tritondbg import selection
from tritondbg.check.outcome import ERROR, FAIL, PASS, GateOutcome, json_record, module_argv

if TYPE_CHECKING:
    from tritondbg.check.gates import GateContext


# The IR capture builds a case's inputs in CPU memory: leave out GPU cases larger than this (attention decode
# B=8 KV=32k needs ~4.3 GB of bf16 cache, ~13 GB while generating it); a smaller case of the same launch has
# the same specialization.
RESOURCE_CASE_MAX_BYTES = 2 << 30
# cases the resources gate adds, one at a time, while a kernel the scenario lists was not launched yet (gemm's
# non-TMA kernel runs only for shapes TMA cannot take; the compile stops adding once every one was); a kernel
# still missing fails the gate (helper-84: 3 extra cases, and unsloth's gemma kernel, launched by the 5th case
# only, was called compiled in a pass)
RESOURCE_EXTRA_CASES = 24


def _input_bytes(scenario, case) -> float:
    if scenario.bytes is None:
        return 0.0
    import torch

    return float(scenario.bytes(case, getattr(torch, case.dtypes[0])))


def _resource_cases(scenario, ctx: GateContext | None = None) -> list:
    """Every GPU-size case (the specialization that runs: aligned strides, real sizes, and the configs the
    kernel's pruning keeps for them; cases with the same specialization hit the compile cache), plus the first
    case of each launch wrapper not covered yet. ``resources`` then adds cases until every kernel the scenario
    lists was compiled (a wrapper with several code paths launches different kernels for different cases)."""
    cases = [c for c in scenario.cases if ctx is None or selection.case_wanted(ctx.case, c.name)]
    chosen = [c for c in cases if not c.interpret and _input_bytes(scenario, c) <= RESOURCE_CASE_MAX_BYTES]
    wrappers = {id(scenario.launch_for(c)) for c in chosen}
    for case in cases:
        if id(scenario.launch_for(case)) not in wrappers and (case.interpret or
                                                              _input_bytes(scenario, case) <= RESOURCE_CASE_MAX_BYTES):
            wrappers.add(id(scenario.launch_for(case)))
            chosen.append(case)
    return chosen


def _kernel_names(scenario) -> set[str]:
    names = set()
    for k in scenario.kernels:
        while hasattr(k, "fn") and not hasattr(k, "__code__"):
            k = k.fn
        names.add(getattr(k, "__name__", None) or str(k))
    return names


def _recorded_picks(scenario, ctx: GateContext) -> dict:
    """{(case, dtype, kernel): config} the perf baseline file recorded for this scenario (the configs a GPU
    run's autotuner picked), and the pick a compiled capture saved (``Scenario.picked``)."""
    from tritondbg.check.perf import load_baseline

    picks = {}
    for kernel, cfg in (getattr(scenario, "picked", None) or {}).items():
        cfg = {k: v for k, v in cfg.items() if not (k == "num_ctas" and v == 1)}  # as the compiled rows list it
        picks.update(((c.name, dt, kernel), cfg) for c in scenario.cases for dt in c.dtypes)
    try:
        recorded = load_baseline(ctx.baseline_file, "configs")
    except Exception:  # noqa: BLE001 - no or unreadable baseline: nothing recorded
        return picks
    for key, configs in (recorded or {}).items():
        parts = key.split("@")[0].split("/")
        if len(parts) == 3 and parts[0] == scenario.name:
            for kernel, cfg in (configs or {}).items():
                picks[(parts[1], parts[2], kernel)] = cfg
    return picks


@dataclass
class NotCompiled:
    """Why the resources gate judged nothing: ``text``, one line. ``died``: the compiling subprocess ended before
    it reported (an error of the run, not a verdict on the kernel); else the compile failed (a FAIL)."""

    text: str
    died: bool = False


def _compile_rows(scenario, ctx: GateContext, cases: list, rest: list, wanted: set[str]):
    """(rows, {case compiled: seconds}, NotCompiled or None): one `tritondbg.check.compiles` process compiles
    every case (and the ``rest`` cases, one at a time, while a kernel in ``wanted`` was not compiled yet); with
    ``ctx.out_dir`` (``check --out DIR``) a failed compile's full log is written there."""
    from tritondbg import watchdog

    args = [ctx.target or scenario.name]
    args += [a for c in cases for a in ("--case", f"{c.name}:{c.dtypes[0]}")]
    args += [a for c in rest[:RESOURCE_EXTRA_CASES] for a in ("--extra", f"{c.name}:{c.dtypes[0]}")]
    args += [a for k in sorted(wanted) for a in ("--want", k)]
    if ctx.arch:
        args += ["--arch", ctx.arch]
    if ctx.out_dir:
        args += ["--log-dir", os.path.abspath(os.path.expanduser(ctx.out_dir))]
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["TRITONDBG_SAVE"] = "0"
    with watchdog.activity(kernel=f"{scenario.name}: compiling every config for the target (a subprocess)"):
        p = subprocess.run(module_argv("tritondbg.check.compiles", *args), capture_output=True,
                           text=True, env=env, timeout=watchdog.remaining(900 * max(1, len(cases))))
    data = json_record(p.stdout)
    if not isinstance(data, dict) or "rows" not in data:  # (a JSON object the scenario printed is no record)
        last = (p.stderr.strip().splitlines() or [""])[-1]
        if p.returncode != 0 and not last:  # (helper-85: a launch calling os._exit(3) said "no output", a FAIL)
            from tritondbg.program.launcher import ended

            rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
            return None, {}, NotCompiled(f"could not compile: the compiling subprocess {ended(rc)} before it "
                                         "reported (a launch of the scenario ending the process: os._exit, a fatal "
                                         f"signal?); rerun: tritondbg ir {ctx.target or scenario.name} --stats",
                                         died=True)
        return None, {}, NotCompiled(f"could not compile: {last or 'no output'}")
    seconds = data.get("seconds") or {}
    failed = NotCompiled(data["error"]) if data.get("error") else None
    return data.get("rows") or [], {c: seconds.get(c) for c in data.get("cases") or []}, failed


def resources(scenario, ctx: GateContext) -> GateOutcome:
    """Compiled for the target (no GPU needed): spills and shared memory of every config that can run
    (tritondbg.check.resources says which can; a config the autotuner skips is not applicable)."""
    explicit = dict(getattr(scenario, "limits", None) or {})
    # a reproducer is the program's kernel as it ran: whether it can run (shared memory) is its gate, and its
    # spills are told (helper-100: Cut Cross-Entropy's own default config, 8 spills, failed `check`)
    captured = bool(getattr(scenario, "reference_is_capture", False))
    limits = {"max_spills": None if captured else 0, "max_shared": None, "max_regs": None, **explicit}
    cases = _resource_cases(scenario, ctx)
    rest = [c for c in scenario.cases if c not in cases and selection.case_wanted(ctx.case, c.name) and
            (c.interpret or _input_bytes(scenario, c) <= RESOURCE_CASE_MAX_BYTES)]
    wanted = _kernel_names(scenario)
    rows, done, failed = _compile_rows(scenario, ctx, cases, rest, wanted)
    if failed is not None:  # nothing judged: a failed compile (FAIL), or the compiling process died (an error)
        return GateOutcome(scenario.name, "resources", ERROR if failed.died else FAIL, failed.text,
                           {"cases": list(done), "case_seconds": done})
    from tritondbg.check.resources import judge

    out = judge(scenario.name, rows, limits, explicit, _recorded_picks(scenario, ctx),
                ungated=" for a reproducer (a scenario file of yours gates them: limits=dict(max_spills=0))" if captured
                else "")
    out.details["cases"], out.details["case_seconds"] = list(done), done
    skipped = [c.name for c in scenario.cases if selection.case_wanted(ctx.case, c.name) and c.name not in done]
    if skipped and out.status == PASS:  # a case's own specialization (a wide row) may spill: say what was not seen
        out.reason += (f"; compiled case(s) {', '.join(done)}, not {', '.join(skipped[:4])}"
                       f"{' ...' if len(skipped) > 4 else ''} (--case NAME compiles that one)")
        out.details["not_compiled"] = skipped
    missing = sorted(wanted - {r.get("kernel") for r in rows})
    if missing:
        out.details["never_launched"] = missing
        if out.status == PASS:  # a kernel the scenario lists whose resources nothing checked: no pass
            out.status = FAIL
            out.reason = (f"{', '.join(missing)} never compiled: no case tried ({', '.join(done) or 'none'}) launched "
                          f"{'it' if len(missing) == 1 else 'them'}; give a case that does (--case NAME picks one), "
                          "or leave it out of the scenario's kernels=")
    return out
