"""`tritondbg list`: bundled kernels, their cases and autotune configs."""
from __future__ import annotations

import json
import sys

import click

from tritondbg import options


def catalog() -> list[dict]:
    """One entry per bundled scenario (imports them in interpreter mode; nothing is launched)."""
    from tritondbg import loader, runner
    from tritondbg.configs import autotuners, config_dict, kernel_name

    runner.set_mode(runner.current_mode() or "interpret")
    entries = []
    for name in loader.bundled_names():
        s = loader.load(name)
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


def list_kernels(*, as_json: bool = False) -> int:
    entries = catalog()
    if as_json:
        print(json.dumps(entries, indent=2, default=str))
    else:
        from tritondbg.render.console import print_catalog

        print_catalog(entries)
    return 0


@click.command("list")
@options.as_json
def list_cmd(as_json):
    """List bundled kernels, their cases and autotune configs."""
    sys.exit(list_kernels(as_json=as_json))
