"""`tritondbg list [KERNEL...]`: bundled kernels (or the scenarios of the files named), their cases and autotune
configs."""
from __future__ import annotations

import json
import sys

import click

from tritondbg import options
from tritondbg.commands.program import ListNoProgramForm


def _scenarios(targets: tuple[str, ...]) -> list:
    """The scenarios named: every bundled one when none is; a file without ``::name``: each scenario in it."""
    from tritondbg import loader

    if not targets:
        return [loader.load(name) for name in loader.bundled_names()]
    for t in targets:  # every name checked before any file is imported (bad input: one line, exit 2)
        loader.check_target(t)
    return [s for t in targets for _, s in loader.load_each(t)]


def catalog(targets: tuple[str, ...] = ()) -> list[dict]:
    """One entry per scenario (imports them in interpreter mode; nothing is launched)."""
    from tritondbg import runner
    from tritondbg.configs import autotuners, config_dict, kernel_name

    runner.set_mode(runner.current_mode() or "interpret")
    entries = []
    for s in _scenarios(targets):
        tuners = autotuners(s.kernels)
        entries.append({
            "name": s.name,
            "description": s.description,
            "kernels": [kernel_name(k) for k in s.kernels],
            "cases": [{"name": c.name, "params": dict(c.params), "dtypes": list(c.dtypes),
                       "interpret": c.interpret, "config": dict(c.config or {})} for c in s.cases],
            "configs": {k: [config_dict(c) for c in t.configs] for k, t in tuners.items()},
        })
    return entries


def list_kernels(targets: tuple[str, ...] = (), *, as_json: bool = False) -> int:
    """The listing; exit 2 (bad input) when a scenario lists no case, which is named in one line on stderr (the
    others are listed)."""
    from tritondbg.selection import no_cases_line

    entries = catalog(targets)
    empty = [e["name"] for e in entries if not e["cases"]]
    entries = [e for e in entries if e["cases"]]
    if as_json:
        print(json.dumps(entries, indent=2, default=str))
    elif entries:
        from tritondbg.render.console import print_catalog

        print_catalog(entries)
    for name in empty:
        click.echo(f"error: {no_cases_line(name)}", err=True)
    return 2 if empty else 0


@click.command("list", cls=ListNoProgramForm)
@click.argument("targets", nargs=-1, metavar="[KERNEL]...")
@options.as_json
def list_cmd(targets, as_json):
    """List bundled kernels (or the scenarios of the files given: path/to/cases.py[::name]), their cases and
    autotune configs."""
    sys.exit(list_kernels(targets, as_json=as_json))
