"""`tritondbg interpret` and `tritondbg run`: run a scenario's cases, print the verdict, save the record."""
from __future__ import annotations

import datetime as _dt
import os
import re
import sys
from pathlib import Path

import click

from tritondbg import options, settings


def run_folder(out_dir: str | None, mode: str, target: str) -> Path:
    """A new folder for this run under the output directory: <stamp>-<mode>-<kernel>-<pid>."""
    base = Path(out_dir or settings.get().out_dir)
    file, _, name = target.partition("::")
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(file).stem + (f"-{name}" if name else ""))
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return base / f"{stamp}-{mode}-{stem}-{os.getpid()}"


def execute(target: str, *, mode: str, case: str | None = None, dtype: str | None = None,
            config: str | None = None, seed: int = 0, as_json: bool = False, out_dir: str | None = None) -> int:
    """Run, print, save; returns the exit status (0 all match, 1 otherwise)."""
    from tritondbg import runner

    record = runner.run(target, mode=mode, cases=case, dtype=dtype, config=config, seed=seed,
                        command=f"{'interpret' if mode == 'interpret' else 'run'} {target}")
    path = None
    if settings.get().save_records or out_dir:
        path = record.save(run_folder(out_dir, mode, target) / "record.json")
        record.extra["record_path"] = str(path)
    if as_json:
        print(record.to_json())
    else:
        from tritondbg.render.console import print_record

        print_record(record, path)
    return 0 if record.passed else 1


@click.command("interpret")
@click.argument("kernel")
@options.case
@options.dtype
@options.config
@options.seed
@options.as_json
@options.out
def interpret_cmd(kernel, case, dtype, config, seed, as_json, out_dir):
    """Run KERNEL under the Triton interpreter on the CPU and compare it with its torch reference.

    Exit status: 0 when every output matches, 1 on a mismatch or a kernel error, 2 on bad usage.
    """
    sys.exit(execute(kernel, mode="interpret", case=case, dtype=dtype, config=config, seed=seed,
                     as_json=as_json, out_dir=out_dir))


@click.command("run")
@click.argument("kernel")
@options.case
@options.dtype
@options.config
@options.seed
@options.as_json
@options.out
def run_cmd(kernel, case, dtype, config, seed, as_json, out_dir):
    """Run KERNEL compiled on the local GPU (autotuned unless --config) and compare it with its reference."""
    sys.exit(execute(kernel, mode="compiled", case=case, dtype=dtype, config=config, seed=seed,
                     as_json=as_json, out_dir=out_dir))
