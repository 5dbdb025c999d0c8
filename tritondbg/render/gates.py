"""Console summary of `tritondbg check`: kernel x gate table, pass / FAIL with a reason / skipped with a reason."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tritondbg.record import RunRecord

_STYLE = {"pass": "[green]pass[/]", "FAIL": "[red]FAIL[/]", "skipped": "[yellow]skipped[/]"}


def print_gates(record: RunRecord) -> None:
    con = Console(highlight=False, soft_wrap=False)
    gates = record.extra.get("gates", [])
    table = Table(title=f"tritondbg check ({record.extra.get('device')}, {record.extra.get('workers')} worker(s))")
    table.add_column("kernel", style="bold")
    table.add_column("gate")
    table.add_column("result")
    table.add_column("reason", overflow="fold")
    for g in sorted(gates, key=lambda g: (g["kernel"], g["gate"])):
        table.add_row(g["kernel"], g["gate"], _STYLE.get(g["status"], g["status"]), g["reason"])
    con.print(table)
    n = {s: sum(g["status"] == s for g in gates) for s in ("pass", "FAIL", "skipped")}
    con.print(f"{n['pass']} passed, {n['FAIL']} failed, {n['skipped']} skipped")
