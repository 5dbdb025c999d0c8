"""Click options shared by several commands, defined once (pip-tools' scripts/options.py habit).

Callbacks check what can be checked before any work (no torch import): the KERNEL argument names a bundled
kernel or a compiling .py file; every path a command will write (``--out DIR``, ``--json FILE``, ``--junit FILE``)
can be written: ``check_output_path``, used through ``out_dir_option`` / ``out_file_option`` by every command."""
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
    return _cannot_create_in(probe)


def _cannot_create_in(folder: str) -> str:
    """Why no file can be created in the existing ``folder`` ("" when one can: a temporary file, removed)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"is not writable (cannot create a file in {folder}: {exc.strerror or exc})"
    return ""


def writable_file_problem(path: str, *, makes_folder: bool = False) -> str:
    """Why a file cannot be written at ``path`` ("" when it can), without creating anything. ``makes_folder``:
    the writer creates a missing folder (as ``RunRecord.save`` does); else the folder must exist."""
    if not path:
        return "is empty"
    full = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(full):
        return "is a folder, not a file"
    if os.path.exists(full):
        return "" if os.access(full, os.W_OK) else "is not writable"
    folder = os.path.dirname(full)
    if makes_folder:
        why = writable_dir_problem(folder)
        return f"its folder {folder} {why}" if why else ""
    if not os.path.exists(folder):
        return f"no folder {folder}"
    if not os.path.isdir(folder):
        return f"no folder {folder}: it is a file"
    return _cannot_create_in(folder)


def check_output_path(name: str, path: str, *, folder: bool, purpose: str, makes_folder: bool = False) -> None:
    """The one check of a path a command will write (``folder``: a folder it creates or writes into, else a
    file): a UsageError (exit 2, before any work) naming the option, the path and why."""
    from tritondbg.errors import UsageError

    why = writable_dir_problem(path) if folder else writable_file_problem(path, makes_folder=makes_folder)
    if why:
        fix = "give a writable folder" if folder else "give a file in a writable folder"
        raise UsageError(f"{name} {path}: {why}; {purpose} ({fix})")


def _check_default_dir(name: str, always: bool, purpose: str) -> None:
    """The folder written without ``name``: $TRITONDBG_OUT or ./traces, when records are saved (``always``: the
    command writes its run folder whatever TRITONDBG_SAVE says, as `profile` does)."""
    from tritondbg import settings
    from tritondbg.errors import UsageError

    s = settings.get()
    if not (always or s.save_records):
        return
    why = writable_dir_problem(s.out_dir)
    if why:
        what = "TRITONDBG_OUT" if os.environ.get("TRITONDBG_OUT") else "the default record folder"
        what = f"{what} {s.out_dir}"
        fix = f"set {name} DIR" + ("" if always else ", or TRITONDBG_SAVE=0 for no record")
        raise UsageError(f"{what}: {why}; {purpose} ({fix})")


def _output_callback(*, folder, purpose: str, makes_folder: bool = False, default: str | None = None):
    """The click callback of ``out_dir_option`` / ``out_file_option``. ``folder``: True (a folder), False (a file),
    or a function of the value that says which (``ir --out FILE|DIR``). ``default``: what is written when the
    option is not given: None (nothing), "records" (the record folder, when records are saved), "always"."""
    either = callable(folder)
    wanted = "FILE or DIR" if either else "DIR" if folder else "FILE"

    def callback(ctx, param, value):
        if ctx.resilient_parsing:
            return value
        name = param.opts[0]
        if value is None:
            if default is not None:
                _check_default_dir(name, default == "always", purpose)
            return value
        opts = {o for p in ctx.command.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
        if value in opts or value == "--":   # `--json --skip 3`: the next option taken as the path
            from tritondbg.errors import UsageError

            raise UsageError(f"{name} needs a {wanted} (got the option {value})")
        is_folder = folder(value) if either else folder
        if value == "-" and not is_folder:  # it wrote a file named '-' in the current folder
            from tritondbg.errors import UsageError

            raise UsageError(f"{name} -: standard output carries the command's own report; give a file path")
        check_output_path(name, value, folder=is_folder, purpose=purpose, makes_folder=makes_folder)
        return value
    return callback


output_callback = _output_callback  # a command's own option of the same checks (`ir --out FILE|DIR`)


def out_dir_option(*decls, purpose: str, default: str | None = None, **kw):
    """``--out DIR``-style option: a folder the command creates or writes into, checked before any work."""
    return click.option(*decls, metavar="DIR", default=None,
                        callback=_output_callback(folder=True, purpose=purpose, default=default), **kw)


def out_file_option(*decls, purpose: str, makes_folder: bool = False, **kw):
    """``--json FILE``-style option: a file the command writes, checked before any work."""
    return click.option(*decls, metavar="FILE", default=None,
                        callback=_output_callback(folder=False, purpose=purpose, makes_folder=makes_folder), **kw)


kernel = click.argument("kernel", callback=check_kernel)
case = click.option("--case", "case", metavar="NAME", default=None,
                    help="Case of the scenario (default: tiny): a name, a comma-separated list or a glob ('decode*'); "
                         "'all' for every case that can run.")
dtype = click.option("--dtype", metavar="DTYPE", default=None,
                     help="Dtype(s) to run, a name or a comma-separated list; bf16, fp16, fp32 spellings too "
                          "(default: every dtype the case lists).")
config = click.option("--config", "config", metavar="K=V,...", default=None,
                      help="Autotune config to pin, e.g. BLOCK_M=64,num_warps=4 (must match a listed config).")
seed = click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs.")
as_json = click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
out = out_dir_option("--out", "out_dir", purpose="run records go there", default="records",
                     help="Folder for run records [default: $TRITONDBG_OUT or ./traces].")
class Positive(click.FloatRange):
    """A number > 0 ("'abc' is not a valid positive number", not click's "float range": helper-145)."""

    name = "positive number"

    def __init__(self):
        super().__init__(min=0, min_open=True)


# the program forms' --timeout (`interpret -- CMD`, `capture -- CMD`, `profile -- CMD`): launcher.run stops the program
program_timeout = click.option(
    "--timeout", type=Positive(), default=None, metavar="SECONDS",
    help="Stop the program after SECONDS (SIGTERM; SIGKILL 30 s later): it says the launch, line and program id it "
         "was in, what finished is kept; exit 124. [default: none]")
