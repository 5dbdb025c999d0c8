"""Resources gate verdict from `tritondbg ir --stats --json` rows (one per compiled kernel x config)."""
from __future__ import annotations

from tritondbg.check.outcome import FAIL, PASS, GateOutcome
from tritondbg.configs import config_str


def _spills(r: dict) -> int:
    # ptxas puts spills in the stack frame (cuobjdump STACK), which the driver reports as local size
    return max(r.get("n_spills") or 0, ((r.get("local_bytes") or 0) + (r.get("stack_bytes") or 0)) // 4)


def judge(kernel: str, rows: list[dict], limits: dict) -> GateOutcome:
    """FAIL on spills above ``max_spills``, shared memory over the target's limit (or ``max_shared``), or
    registers above ``max_regs``; PASS with the worst figures otherwise."""
    bad = []
    pruned = [r for r in rows if not r.get("kept_by_pruning", True)]
    rows = [r for r in rows if r.get("kept_by_pruning", True)]  # a config the kernel prunes never runs here
    for r in rows:
        cfg = config_str(r.get("config") or {})
        where = f"{r.get('kernel')}{f' [{cfg}]' if cfg else ''} on {r.get('arch')}"
        spills = _spills(r)
        if limits.get("max_spills") is not None and spills > limits["max_spills"]:
            bad.append(f"{where}: {spills} register spill(s) ({(r.get('local_bytes') or 0) + (r.get('stack_bytes') or 0)} B of local memory)")
        shared = r.get("shared") or 0
        limit = limits.get("max_shared") or r.get("shared_limit")
        if limit is not None and shared > limit:
            bad.append(f"{where}: {shared} B of shared memory > {limit} B")
        regs = r.get("n_regs")
        if limits.get("max_regs") is not None and regs is not None and regs > limits["max_regs"]:
            bad.append(f"{where}: {regs} registers > {limits['max_regs']}")
    details = {"rows": [{k: r.get(k) for k in ("kernel", "arch", "config", "n_regs", "n_spills", "shared",
                                                "shared_limit")} for r in rows], "limits": limits,
               "pruned_not_checked": [{"kernel": r.get("kernel"), "config": r.get("config")} for r in pruned]}
    if not rows:
        return GateOutcome(kernel, "resources", FAIL, "nothing was compiled", details)
    if bad:
        return GateOutcome(kernel, "resources", FAIL, f"{len(bad)} problem(s); first: {bad[0]}", {**details, "bad": bad})
    worst_regs = max((r.get("n_regs") or 0) for r in rows)
    worst_shared = max((r.get("shared") or 0) for r in rows)
    worst_spills = max(_spills(r) for r in rows)
    spills = "no spills" if not worst_spills else f"max {worst_spills} spills (limit {limits['max_spills']})"
    return GateOutcome(kernel, "resources", PASS, f"{len(rows)} compiled kernel(s): {spills}, max {worst_regs} regs, "
                       f"max {worst_shared // 1024} KiB shared"
                       + (f" ({len(pruned)} config(s) the kernel prunes here not checked)" if pruned else ""), details)
