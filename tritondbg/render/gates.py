"""Console summary of `tritondbg check`: kernel x gate table, pass / FAIL / skipped / error / interrupted, each
with its reason (an error also with the command that reruns that item alone)."""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tritondbg.check.outcome import COMPILE_ONLY, nothing_ran
from tritondbg.record import RunRecord

_STYLE = {"pass": "[green]pass[/]", "FAIL": "[red]FAIL[/]", "skipped": "[yellow]skipped[/]",
          "error": "[red bold]error[/]", "interrupted": "[magenta]interrupted[/]"}


def print_gates(record: RunRecord) -> None:
    con = Console(highlight=False, soft_wrap=False)
    if not con.is_terminal:  # piped (CI logs): 80 columns folded names mid-word ("scale_ke / rnel_1")
        con = Console(highlight=False, soft_wrap=False, width=160)
    gates = record.extra.get("gates", [])
    table = Table(title=f"tritondbg check ({record.extra.get('device')}, {record.extra.get('workers')} worker(s))")
    longest = max((len(g["kernel"]) for g in gates), default=6)
    # a reproducer's long name, whole (it was cut: "rmsno…"); folded only past 48 characters
    table.add_column("kernel", style="bold", overflow="fold", min_width=min(longest, 48))
    table.add_column("gate")
    table.add_column("result")
    table.add_column("reason", overflow="fold")
    for g in gates:
        # an interrupted item's command is the run's own (one per row was noise); an error's reruns that item alone
        rerun = g.get("command") if g["status"] != "interrupted" else None
        reason = escape(g["reason"]) + (f"\nreproduce: {escape(rerun)}" if rerun else "")
        table.add_row(escape(g["kernel"]), g["gate"], _STYLE.get(g["status"], g["status"]), reason)
    con.print(table)
    n = {s: sum(g["status"] == s for g in gates) for s in _STYLE}
    line = f"{n['pass']} passed, {n['FAIL']} failed, {n['skipped']} skipped"
    if n["error"]:
        line += f", {n['error']} error(s)"
    if n["interrupted"] or record.extra.get("interrupted"):
        line += f", {n['interrupted']} interrupted"
    if gates and n["skipped"] == len(gates):
        line += ": nothing ran (every item was skipped), so nothing passed"
    elif gates and nothing_ran(gates) and not n["FAIL"] + n["error"] + n["interrupted"]:
        line += (f": the kernel never ran ({', '.join(COMPILE_ONLY)} only compiled it; every gate that runs it was "
                 "skipped), so the run fails: a compile is no check of what the kernel computes")
    con.print(line)
