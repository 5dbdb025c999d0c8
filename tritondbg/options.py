"""Click options shared by several commands, defined once (pip-tools' scripts/options.py habit).

Callbacks check what can be checked before any work (no torch import): the KERNEL argument names a bundled
kernel or a compiling .py file, the record folder is writable."""
import os

import click


def check_kernel(ctx, param, value):
    from tritondbg import loader

    if value is not None and not ctx.resilient_parsing:
        loader.check_target(value)
    return value


def writable_dir_problem(path: str) -> str:
    """Why run records cannot be written under ``path`` ("" when they can), without creating anything."""
    probe = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(probe) and not os.path.isdir(probe):
        return "is a file, not a folder"
    while not os.path.exists(probe):   # the nearest existing folder is where the run would create it
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return f"cannot be created: {probe} is a file"
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        return f"is not writable (cannot create a file in {probe}: {exc.strerror or exc})"
    return ""


def _check_out(ctx, param, value):
    from tritondbg import settings
    from tritondbg.errors import UsageError

    if ctx.resilient_parsing:
        return value
    s = settings.get()
    if value is None and not s.save_records:
        return value
    path = value if value is not None else s.out_dir
    why = writable_dir_problem(path)
    if why:
        if value is not None:
            what, fix = f"--out {path}", "give a writable folder"
        else:
            what = f"TRITONDBG_OUT {path}" if os.environ.get("TRITONDBG_OUT") else f"the default record folder {path}"
            fix = "set --out DIR, or TRITONDBG_SAVE=0 for no record"
        raise UsageError(f"{what}: {why}; run records go there ({fix})")
    return value


kernel = click.argument("kernel", callback=check_kernel)
case = click.option("--case", "case", metavar="NAME", default=None,
                    help="Case of the scenario (default: tiny); 'all' for every case that can run.")
dtype = click.option("--dtype", metavar="DTYPE", default=None,
                     help="Run one dtype of the case (default: every dtype it lists).")
config = click.option("--config", "config", metavar="K=V,...", default=None,
                      help="Autotune config to pin, e.g. BLOCK_M=64,num_warps=4 (must match a listed config).")
seed = click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs.")
as_json = click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
out = click.option("--out", "out_dir", metavar="DIR", default=None, callback=_check_out,
                   help="Folder for run records [default: $TRITONDBG_OUT or ./traces].")
