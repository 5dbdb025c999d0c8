"""`tritondbg cache ls | show | clear`: browse Triton's compile cache (the one `ir` reads and fills)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from tritondbg.errors import UsageError


def _dir(cache_dir: str | None) -> str:
    from tritondbg.ir.index import triton_cache_dir

    if cache_dir:
        import os

        from tritondbg.errors import UsageError

        path = os.path.abspath(os.path.expanduser(cache_dir))
        if not os.path.isdir(path):  # a typo listed "no entries in DIR", exit 0, as an empty cache would
            what = "is a file" if os.path.exists(path) else "does not exist"
            raise UsageError(f"--cache-dir {cache_dir}: {what}; give a Triton cache folder (default: "
                             "$TRITON_CACHE_DIR, else ~/.triton/cache)")
        return path
    return triton_cache_dir()


def cache_ls(*, cache_dir: str | None = None, kernel: str | None = None, as_json: bool = False) -> int:
    """List entries: kernel, key, target, stages, size, age; incomplete or corrupt ones say what is wrong."""
    from rich.console import Console
    from rich.table import Table

    from tritondbg.ir.cache import age, human, is_triton_entry, matches, scan

    root = _dir(cache_dir)
    entries = [e for e in scan(root) if matches(e, kernel)]
    if as_json:
        print(json.dumps({"cache_dir": root, "entries": [e.to_dict() for e in entries]}, indent=2))
        return 0
    con = Console(highlight=False, soft_wrap=True)
    if not con.is_terminal:
        con = Console(highlight=False, width=200)   # piped: one line per entry, not 80-column wrapping
    if not entries:
        if kernel:  # a typo in the name must not read as "nothing cached" (clear --kernel refuses it too)
            known = sorted({e.kernel for e in scan(root) if e.kernel and e.kind == "kernel"})
            con.print(f"no entries for kernel {kernel} in {root}; kernels there: {', '.join(known) or 'none'}",
                      markup=False)
            return 1
        con.print(f"no entries in {root}", markup=False)
        return 0
    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("kernel", "key", "target", "stages", "size", "age", "status"):
        table.add_column(col, justify="right" if col in ("size", "age") else "left", no_wrap=col != "status")
    for e in entries:
        name = e.kernel or "-"
        if e.kind != "kernel":
            name = f"{name} ({e.kind})"
        status = "[green]ok[/]" if e.ok else f"[red]{_esc(e.problem)}[/]"
        table.add_row(_esc(name), e.key[:12], e.target or "-", " ".join(e.stages) if e.kind == "kernel" else "",
                      human(e.size), age(e.mtime) if e.mtime else "-", status)
    con.print(table)
    if not any(is_triton_entry(e) for e in entries):  # a folder that is no Triton cache listed its sub-folders "ok"
        con.print(f"{root} holds no Triton cache entry (only {len(entries)} other item(s)): is it the cache "
                  "directory? (Triton's default is ~/.triton/cache, or $TRITON_CACHE_DIR)", markup=False)
        return 1
    bad = sum(not e.ok for e in entries)
    con.print(f"{len(entries)} entries, {human(sum(e.size for e in entries))}"
              + (f", {bad} incomplete or corrupt" if bad else "") + f"  ({root})", markup=False)
    return 0


def _label(e) -> str:
    """What an entry holds, for `clear`: the kernel, "(autotune)"/"(module)", or the stem of loose stage files."""
    if e.kind == "kernel":
        return (e.kernel or "-") + (" (no metadata)" if e.problem.startswith("partial: no metadata") else "")
    if e.kind == "other":
        stems = sorted({n.split(".", 1)[0] for n in e.stages})
        return f"{', '.join(stems) or 'empty folder'} ({'no metadata' if stems else 'other'})"
    return f"{e.kernel or '-'} ({e.kind})"


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def cache_show(key: str, *, cache_dir: str | None = None, stage: str | None = None, as_json: bool = False) -> int:
    """One entry: what it is, its files and main metadata; with ``stage``, that stage's text."""
    from tritondbg.ir.cache import find, human

    root = _dir(cache_dir)
    entries = find(root, key)
    if as_json:
        print(json.dumps([{**e.to_dict(), "metadata": e.metadata} for e in entries], indent=2, default=str))
        return 0
    if stage:
        return _show_stage(entries, stage)
    for e in entries:
        click.echo(f"{e.kernel or '-'}  ({e.kind})  key {e.key}")
        click.echo(f"  path    {e.path}")
        click.echo(f"  target  {e.target or '-'}")
        click.echo(f"  status  {'ok' if e.ok else e.problem}")
        m = e.metadata
        if m:
            keep = ("num_warps", "num_stages", "num_ctas", "shared", "triton_version", "hash")
            click.echo("  " + "  ".join(f"{k}={m[k]}" for k in keep if k in m))
        for ext, path in e.files.items():
            try:
                import os

                size = human(os.path.getsize(path))
            except OSError:
                size = "missing"
            click.echo(f"  {ext:<8}{size:>10}  {path}")
    return 0


def _show_stage(entries, stage: str) -> int:
    from pathlib import Path

    from tritondbg.ir import render
    from tritondbg.ir.stages import StageError, nvidia_tool, run_tool

    e = next((x for x in entries if x.kind == "kernel"), None)
    if e is None:
        raise UsageError(f"entry {entries[0].key} holds no compiled kernel")
    if stage == "sass" and "sass" not in e.files:
        if "cubin" not in e.files:
            raise UsageError(f"entry {e.key} has no cubin (target {e.target})")
        try:
            text = run_tool([nvidia_tool("nvdisasm"), "-c", e.files["cubin"]], "disassembling the cubin")
        except StageError as exc:
            click.echo(f"error: {exc}", err=True)
            return 1
    elif stage in e.files and stage not in ("cubin", "hsaco", "json"):
        text = Path(e.files[stage]).read_text(errors="replace")
        if stage == "sass":
            from tritondbg.ir.stages import strip_line_info

            text = strip_line_info(text)
    else:
        readable = [s for s in e.stages if s not in ("cubin", "hsaco")]
        raise UsageError(f"entry {e.key} has no {stage} stage; it has: {', '.join(readable)}")
    render.emit_text(text, stage)
    return 0


@click.group("cache")
@click.option("--cache-dir", metavar="DIR", default=None,
              help="Triton cache directory [default: $TRITON_CACHE_DIR, else ~/.triton/cache].")
@click.pass_context
def cache_cmd(ctx, cache_dir):
    """Browse Triton's compile cache: list, show and clear entries (never anything outside it)."""
    ctx.obj = {"cache_dir": cache_dir}


@cache_cmd.command("ls")
@click.option("--kernel", metavar="NAME", default=None, help="Only this kernel (function name or glob, e.g. 'gemm*').")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.pass_context
def ls_cmd(ctx, kernel, as_json):
    """List entries: kernel, key, target, stages, size, age, status (corrupt/partial entries say why)."""
    sys.exit(cache_ls(cache_dir=ctx.obj["cache_dir"], kernel=kernel, as_json=as_json))


@cache_cmd.command("show")
@click.argument("key")
@click.option("--stage", metavar="STAGE", default=None,
              help="Print this stage (source, ttir, ttgir, llir, ptx, sass, amdgcn) instead of the summary.")
@click.option("--json", "as_json", is_flag=True, help="The entry and its metadata as JSON.")
@click.pass_context
def show_cmd(ctx, key, stage, as_json):
    """Show one entry (KEY: the folder name, a unique prefix of it, or its path)."""
    sys.exit(cache_show(key, cache_dir=ctx.obj["cache_dir"], stage=stage, as_json=as_json))


@cache_cmd.command("clear")
@click.argument("keys", nargs=-1, metavar="[KEY]...")
@click.option("--kernel", metavar="NAME", default=None, help="Every entry of this kernel (function name or glob).")
@click.option("--all", "everything", is_flag=True, help="Every entry of the cache directory.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed, remove nothing.")
@click.pass_context
def clear_cmd(ctx, keys, kernel, everything, dry_run):
    """Delete entries (KEYs, --kernel NAME or --all); only folders inside the Triton cache directory."""
    from tritondbg.ir.cache import clear, human

    root = _dir(ctx.obj["cache_dir"])
    removed, size, skipped = clear(root, kernel=kernel, keys=tuple(keys), everything=everything, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for path, entries, folder_size in removed:   # each folder: key, what Triton kept there, size
        what = ", ".join(dict.fromkeys(_label(e) for e in entries))
        click.echo(f"  {verb} {Path(path).name}  {what or '-'}  {human(folder_size)}")
    folders = len(removed)
    click.echo(f"{verb} {folders} entr{'y' if folders == 1 else 'ies'} ({human(size)}) from {root}")
    for line in skipped:
        click.echo(f"skipped {line}", err=True)
    sys.exit(0)
