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


# The IR capture builds a case's inputs in CPU memory: a case x dtype larger than this (attention decode B=8 KV=32k
# needs ~4.3 GB of bf16 cache, ~13 GB while generating it) is built only when `--case` names it exactly, as a
# GPU-size case is run only on a GPU: a pass says which were not, and how to ask for one.
RESOURCE_CASE_MAX_BYTES = 2 << 30
# Without --case, cases the gate adds, one at a time, while a kernel the scenario lists was not launched yet (gemm's
# non-TMA kernel runs only for shapes TMA cannot take; the compile stops adding once every one was); a kernel
# still missing fails the gate (helper-84: 3 extra cases, and unsloth's gemma kernel, launched by the 5th case
# only, was called compiled in a pass)
RESOURCE_EXTRA_CASES = 24


def _input_bytes(scenario, case, dtype: str) -> float:
    if scenario.bytes is None:
        return 0.0
    import torch

    return float(scenario.bytes(case, getattr(torch, dtype)))


def _resource_pairs(scenario, ctx: GateContext) -> tuple[list, list, list]:
    """(to compile, extra cases, too large here), as (case, dtype) pairs, every dtype of each case (helper-131: the
    first dtype alone passed an fp8 case on sm_80, which cannot compile fp8). With ``--case``: every case it selects
    (a named one was left out). Without: every GPU-size case (the specialization that runs: aligned strides, real
    sizes, the configs the kernel's pruning keeps for them; a tiny case's odd shapes in a config sized for 8192^2
    spill) and the first case of each launch wrapper not covered yet, then the others as extras, tried while a
    kernel the scenario lists was not compiled. A pair whose inputs exceed RESOURCE_CASE_MAX_BYTES is built only
    when named exactly (its size comes with it). Identical compiles are hits in Triton's cache."""
    named = set(selection.case_specs(ctx.case))
    fits = {}
    for case in scenario.cases:
        if selection.case_wanted(ctx.case, case.name):
            fits[case.name] = [(dt, _input_bytes(scenario, case, dt)) for dt in case.dtypes]
    large = [(c, dt, size) for c in scenario.cases if c.name in fits for dt, size in fits[c.name]
             if size > RESOURCE_CASE_MAX_BYTES and c.name not in named]
    left_out = {(c.name, dt) for c, dt, _ in large}
    cases = [c for c in scenario.cases if c.name in fits and any((c.name, dt) not in left_out for dt in c.dtypes)]
    if ctx.case is None:
        chosen = [c for c in cases if not c.interpret]
        wrappers = {id(scenario.launch_for(c)) for c in chosen}
        for case in cases:
            if id(scenario.launch_for(case)) not in wrappers:
                wrappers.add(id(scenario.launch_for(case)))
                chosen.append(case)
    else:
        chosen = cases

    def pairs(group):
        return [(c, dt) for c in group for dt in c.dtypes if (c.name, dt) not in left_out]
    return pairs(chosen), pairs([c for c in cases if c not in chosen]), large


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


def _compile_rows(scenario, ctx: GateContext, pairs: list, rest: list = (), wanted: set[str] = frozenset()):
    """(rows, {case compiled: seconds}, [(case, dtype, launched a kernel) compiled], NotCompiled or None): one
    `tritondbg.check.compiles` process compiles every (case, dtype) of ``pairs`` (and the cases of ``rest``, one
    at a time, while a kernel in ``wanted`` was not compiled yet); with ``ctx.out_dir`` (``check --out DIR``) a
    failed compile's full log is written there."""
    from tritondbg import watchdog

    args = [ctx.target or scenario.name]
    args += [a for c, dtype in pairs for a in ("--case", f"{c.name}:{dtype}")]
    keep = list(dict.fromkeys(c.name for c, _ in rest))[:RESOURCE_EXTRA_CASES]  # cases, each with its dtypes
    args += [a for c, dtype in rest if c.name in keep for a in ("--extra", f"{c.name}:{dtype}")]
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
                           text=True, env=env, timeout=watchdog.remaining(900 * max(1, len(pairs))))
    data = json_record(p.stdout)
    if not isinstance(data, dict) or "rows" not in data:  # (a JSON object the scenario printed is no record)
        last = (p.stderr.strip().splitlines() or [""])[-1]
        if p.returncode != 0 and not last:  # (helper-85: a launch calling os._exit(3) said "no output", a FAIL)
            from tritondbg.program.launcher import ended

            rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
            return None, {}, [], NotCompiled(f"could not compile: the compiling subprocess {ended(rc)} before it "
                                             "reported (a launch of the scenario ending the process: os._exit, a "
                                             f"fatal signal?); rerun: tritondbg ir {ctx.target or scenario.name} "
                                             "--stats", died=True)
        return None, {}, [], NotCompiled(f"could not compile: {last or 'no output'}")
    seconds = data.get("seconds") or {}
    failed = NotCompiled(data["error"]) if data.get("error") else None
    nothing = {tuple(p) for p in data.get("no_launch") or []}
    compiled = [(c, d, (c, d) not in nothing) for c, d in data.get("compiled") or []]
    return data.get("rows") or [], {c: seconds.get(c) for c, _, _ in compiled}, compiled, failed


def _not_compiled(large: list) -> str:
    """The reason's words for the selected case x dtype too large to build here, and how to ask for them."""
    first, size = large[0][:2], large[0][2]
    more = f" and {len(large) - 1} more" if len(large) > 1 else ""
    return (f"{first[0].name}/{first[1]}{more} (inputs of {size / 2**30:.1f} GiB, over the "
            f"{RESOURCE_CASE_MAX_BYTES / 2**30:g} GiB the gate builds on the CPU; --case {first[0].name} builds it)")


def resources(scenario, ctx: GateContext) -> GateOutcome:
    """Compiled for the target (no GPU needed): spills and shared memory of every config that can run
    (tritondbg.check.resources says which can; a config the autotuner skips is not applicable)."""
    explicit = dict(getattr(scenario, "limits", None) or {})
    # a reproducer is the program's kernel as it ran: whether it can run (shared memory) is its gate, and its
    # spills are told (helper-100: Cut Cross-Entropy's own default config, 8 spills, failed `check`)
    captured = bool(getattr(scenario, "reference_is_capture", False))
    limits = {"max_spills": None if captured else 0, "max_shared": None, "max_regs": None, **explicit}
    pairs, rest, large = _resource_pairs(scenario, ctx)
    if not pairs:  # every selected case x dtype too large to build here: nothing checked, no pass
        return GateOutcome(scenario.name, "resources", FAIL, "nothing was compiled: " + _not_compiled(large),
                           {"not_compiled": [f"{c.name}/{d}" for c, d, _ in large]})
    wanted = _kernel_names(scenario)
    rows, done, compiled, failed = _compile_rows(scenario, ctx, pairs, rest, wanted)
    if failed is not None:  # nothing judged: a failed compile (FAIL), or the compiling process died (an error)
        return GateOutcome(scenario.name, "resources", ERROR if failed.died else FAIL, failed.text,
                           {"cases": list(done), "case_seconds": done})
    from tritondbg.check.resources import judge

    out = judge(scenario.name, rows, limits, explicit, _recorded_picks(scenario, ctx),
                ungated=" for a reproducer (a scenario file of yours gates them: limits=dict(max_spills=0))" if captured
                else "", pairs=sum(1 for *_, launched in compiled if launched))
    out.details["cases"], out.details["case_seconds"] = list(done), done
    out.details["compiled"] = [f"{c}/{d}" for c, d, _ in compiled]
    nothing = [f"{c}/{d}" for c, d, launched in compiled if not launched]
    if nothing and out.status == PASS:  # (a wrapper's early return on an empty input: it launches nothing on a GPU)
        out.reason += (f"; {', '.join(nothing[:3])}{' ...' if len(nothing) > 3 else ''} launched no kernel: nothing "
                       "to compile")
    seen = {(n, t) for n, t, _ in compiled}
    unseen = [(c, d) for c, d in pairs if (c.name, d) not in seen]
    if unseen:  # (the compiling process reports every pair or an error: never a pass for one it skipped)
        out.status, out.reason = FAIL, (f"{len(unseen)} case x dtype not compiled (first: {unseen[0][0].name}/"
                                        f"{unseen[0][1]}); rerun it alone: --case {unseen[0][0].name}")
    others = list(dict.fromkeys(c.name for c, d in rest if (c.name, d) not in seen))
    if others and out.status == PASS:  # without --case: the GPU-size cases and one per wrapper; said, and how to ask
        out.details["not_compiled_by_default"] = others
        out.reason += (f"; {len(others)} small case(s) not compiled without --case: {', '.join(others[:4])}"
                       f"{' ...' if len(others) > 4 else ''} (--case all compiles every case x dtype, --case NAME one)")
    if large:  # as a GPU-size case is not run under the interpreter: said, and how to ask for it
        out.details["not_compiled"] = [f"{c.name}/{d}" for c, d, _ in large]
        out.reason += f"; not compiled: {_not_compiled(large)}"
    missing = sorted(wanted - {r.get("kernel") for r in rows})
    if missing:
        out.details["never_launched"] = missing
        if out.status == PASS:  # a kernel the scenario lists whose resources nothing checked: no pass
            out.status = FAIL
            out.reason = (f"{', '.join(missing)} never compiled: no case tried ({', '.join(done) or 'none'}) launched "
                          f"{'it' if len(missing) == 1 else 'them'}; give a case that does (--case NAME picks one), "
                          "or leave it out of the scenario's kernels=")
    return out
