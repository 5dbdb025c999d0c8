"""Resources gate verdict from `tritondbg ir --stats --json --all-configs` rows (one per compiled kernel x
config x case), without false alarms:

- a config the autotuner would never run is "not applicable", listed with its reason, never a failure: one
  ``prune_configs_by`` removes for the case, or one whose shared memory exceeds the target (Triton's autotuner
  gets OutOfResources for it and skips it);
- spills in a config that can run are reported; they fail the gate only when that config can be picked: the
  kernel is not autotuned, the config is the one recorded for the case (the perf baseline file), or every
  runnable config of the kernel spills; ``Scenario.limits`` (max_spills, max_shared, max_regs) applies to every
  runnable config when it sets them;
- a launch that cannot run at all (no autotuned config fits, or a fixed launch over the shared limit) fails.
"""
from __future__ import annotations

from collections import defaultdict

from tritondbg.check.outcome import FAIL, PASS, GateOutcome
from tritondbg.configs import config_str


def _spills(r: dict) -> int:
    # ptxas puts spills in the stack frame (cuobjdump STACK), which the driver reports as local size
    return max(r.get("n_spills") or 0, ((r.get("local_bytes") or 0) + (r.get("stack_bytes") or 0)) // 4)


def _autotuned(r: dict) -> bool:
    return str(r.get("config_source") or "").startswith("--all-configs")


def _where(r: dict) -> str:
    cfg = config_str(r.get("config") or {})
    return f"{r.get('kernel')}{f' [{cfg}]' if cfg else ''} on {r.get('arch')} (case {r.get('case')})"


def _same_config(row_cfg: dict, picked: dict) -> bool:
    return bool(picked) and all(row_cfg.get(k) == v for k, v in picked.items())


def judge(kernel: str, rows: list[dict], limits: dict, explicit: dict | None = None,
          picked: dict | None = None, ungated: str = "", pairs: int | None = None) -> GateOutcome:
    """``limits``: the effective limits (max_spills default 0; None: spills told, not failed, ``ungated`` says
    why); ``explicit``: what ``Scenario.limits`` set; ``picked``: {(case, dtype, kernel): config} the recorded
    runs chose; ``pairs``: how many case x dtype the rows come from (said in a pass)."""
    explicit, picked = explicit or {}, picked or {}
    bad, notes, not_applicable, runnable = [], [], [], []
    can_run: set[int] = set()
    for r in rows:
        shared, limit = r.get("shared") or 0, r.get("shared_limit")
        if _autotuned(r) and r.get("not_applicable"):  # refused by the compiler: Triton's autotuner skips it
            not_applicable.append((r, r["not_applicable"]))
        elif _autotuned(r) and not r.get("kept_by_pruning", True):
            not_applicable.append((r, "removed by prune_configs_by for this case"))
        elif _autotuned(r) and limit is not None and shared > limit:
            not_applicable.append((r, f"{shared} B of shared memory > {limit} B: the autotuner skips it "
                                      "(OutOfResources)"))
        elif limit is not None and shared > limit:
            bad.append(f"{_where(r)}: {shared} B of shared memory > {limit} B: the launch cannot run")
        else:
            runnable.append(r)
            can_run.add(id(r))
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if _autotuned(r):
            groups[(r.get("kernel"), r.get("case"), r.get("dtype"))].append(r)
    for (k, case, _), group in groups.items():
        if not any(id(r) in can_run for r in group):
            bad.append(f"{k} (case {case}): none of its {len(group)} configs can run on {group[0].get('arch')} "
                       f"({not_applicable_reason(group, not_applicable)})")

    max_spills = limits.get("max_spills")
    for r in runnable:
        spills = _spills(r)
        if max_spills is None or spills <= max_spills:
            continue
        text = (f"{_where(r)}: {spills} register spill(s) "
                f"({(r.get('local_bytes') or 0) + (r.get('stack_bytes') or 0)} B of local memory)")
        group = [g for g in groups.get((r.get("kernel"), r.get("case"), r.get("dtype")), []) if id(g) in can_run]
        chosen = picked.get((r.get("case"), r.get("dtype"), r.get("kernel")))
        if (not _autotuned(r) or "max_spills" in explicit or _same_config(r.get("config") or {}, chosen or {})
                or all(_spills(g) > max_spills for g in group)):
            why = "" if not _autotuned(r) else (
                " (Scenario.limits)" if "max_spills" in explicit else
                " (the recorded config)" if _same_config(r.get("config") or {}, chosen or {}) else
                " (every config that can run spills)")
            bad.append(text + why)
        else:
            notes.append(text + " (the autotuner can pick a config that does not spill)")
    for r in runnable:
        if explicit.get("max_shared") is not None and (r.get("shared") or 0) > explicit["max_shared"]:
            bad.append(f"{_where(r)}: {r.get('shared')} B of shared memory > {explicit['max_shared']} B (Scenario.limits)")
        regs = r.get("n_regs")
        if limits.get("max_regs") is not None and regs is not None and regs > limits["max_regs"]:
            bad.append(f"{_where(r)}: {regs} registers > {limits['max_regs']}")

    keys = ("kernel", "case", "dtype", "arch", "config", "n_regs", "n_spills", "shared", "shared_limit")
    details = {"rows": [{k: r.get(k) for k in keys} for r in runnable], "limits": limits,
               "not_applicable": [{**{k: r.get(k) for k in keys}, "reason": why} for r, why in not_applicable],
               "spills_not_picked": notes}
    if not rows:
        return GateOutcome(kernel, "resources", FAIL, "nothing was compiled", details)
    if bad:
        return GateOutcome(kernel, "resources", FAIL, f"{len(bad)} problem(s); first: {bad[0]}", {**details, "bad": bad})
    worst_regs = max((r.get("n_regs") or 0) for r in runnable)
    worst_shared = max((r.get("shared") or 0) for r in runnable)
    of = f" ({pairs} case x dtype)" if pairs else ""
    summary = (f"{len(runnable)} compiled kernel(s) that can run{of}: max {worst_regs} regs, "
               f"max {size_text(worst_shared)} shared")
    spilled = [r for r in runnable if _spills(r)]
    if notes:
        summary += f"; {len(notes)} config(s) spill but need not be picked (first: {notes[0]})"
    elif spilled and max_spills is None:
        r = spilled[0]
        summary += (f"; {len(spilled)} with register spills, not gated{ungated} (first: {_where(r)}: {_spills(r)} "
                    f"spill(s), {(r.get('local_bytes') or 0) + (r.get('stack_bytes') or 0)} B of local memory)")
    else:
        summary += ", no spills that can be picked" if any(_spills(r) for r in runnable) else ", no spills"
    if not_applicable:
        summary += f"; {len(not_applicable)} config(s) not applicable (first: {_where(not_applicable[0][0])}: " \
                   f"{not_applicable[0][1]})"
    return GateOutcome(kernel, "resources", PASS, summary, details)


def size_text(n: int) -> str:
    """Bytes as a person reads them: under 1 KiB in bytes (512 B was "0 KiB"), else KiB (one decimal if not whole)."""
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f}".removesuffix(".0") + " KiB"


def not_applicable_reason(group: list[dict], not_applicable: list) -> str:
    ids = {id(r) for r in group}
    reasons = [why for r, why in not_applicable if id(r) in ids]
    return reasons[0] if reasons else "none compiled"
