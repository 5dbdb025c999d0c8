"""`tritondbg ir KERNEL`: a compile stage of the kernel(s) a scenario launches, for any GPU target, from the
compile cache or compiled on the CPU; with a source map, stats or a diff."""
from __future__ import annotations

import json
import os
import sys

import click

from tritondbg import options
from tritondbg.commands.program import NoProgramForm
from tritondbg.errors import UsageError

STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn")


_OUT_PURPOSE = "the IR goes there"


def _check_cache_dir() -> None:
    """Triton's cache folder must take files: a TRITON_CACHE_DIR naming a file was "compiling K for sm_90 failed:
    NotADirectoryError" (exit 1), as if the kernel did not compile."""
    from tritondbg.ir.index import triton_cache_dir

    where = triton_cache_dir()
    why = options.writable_dir_problem(where)
    if why:
        what = "TRITON_CACHE_DIR" if os.environ.get("TRITON_CACHE_DIR") else "Triton's cache folder"
        raise UsageError(f"{what} {where}: {why}; `ir` compiles into it (set TRITON_CACHE_DIR to a writable folder)")


def ir(target: str, *, stage: str | None = None, arch: str | None = None, case: str | None = None,
       dtype: str | None = None, config: str | None = None, all_configs: bool = False, kernel: str | None = None,
       source_map: bool = False, diff: tuple[str, str] | None = None, stats: bool = False, as_json: bool = False,
       out_file: str | None = None, use_index: bool = True) -> int:
    """Resolve, then print the IR / stats / diff; returns the exit status (0, or 1 when a stage cannot be made)."""
    from tritondbg import stops
    from tritondbg.ir.capture import CaptureError, logs_in
    from tritondbg.ir.request import Interrupted, Request, pick, resolve
    from tritondbg.ir.stages import StageError, check_stage
    from tritondbg.ir.targets import resolve_arch
    from tritondbg.program.replay import recorded_arch

    if config and all_configs:
        raise UsageError("--config and --all-configs exclude each other")
    if diff and (all_configs or as_json):
        raise UsageError("--diff compares two single requests: drop --all-configs / --json")
    out_dir = None
    if out_file and is_out_dir(out_file):  # a folder, as `interpret --out DIR` takes one: the files go inside
        options.check_output_path("--out", out_file, folder=True, purpose=_OUT_PURPOSE)
        out_dir, out_file = os.path.expanduser(out_file), None
    elif out_file:  # before any compile (the command line checked it already; ir() is called from Python too)
        options.check_output_path("--out", out_file, folder=False, purpose=_OUT_PURPOSE)
    _check_cache_dir()
    the_arch, arch_source = resolve_arch(arch, recorded_arch(target))
    stage_given = stage is not None
    stage = check_stage(stage, the_arch)
    req = Request(target, the_arch, arch_source, case=case, dtype=dtype, config=config, all_configs=all_configs)
    json_file = out_file or _dir_file(out_dir, target, "stats.json")
    with stops.noting():  # SIGTERM as Ctrl-C: what finished is printed, exit 143 (130)
        try:
            with logs_in(out_dir):  # --out DIR: a failed compile's full log is written there
                if diff:
                    return _diff(req, diff, stage, kernel, use_index, stage_given)
                try:
                    items, _ = resolve(req, use_index=use_index)
                except Interrupted as exc:  # the compiles that finished, the others marked interrupted
                    items, stopped, failed = _pick_some(exc.items, kernel), True, None
                except CaptureError as exc:  # a later case's compile failed: the cases before it are shown first
                    if not getattr(exc, "done", None):
                        raise
                    items, stopped, failed = _pick_some(exc.done, kernel), False, exc
                else:
                    items, stopped, failed = pick(items, kernel), False, None
                if out_dir:
                    os.makedirs(out_dir, exist_ok=True)
                if stats or as_json:
                    if stage_given:  # (helper-117: --stage ptx --stats printed the table alone, no word of the PTX)
                        click.echo(f"note: --{'stats' if stats else 'json'} prints the statistics, not the {stage} "
                                   f"itself: run without it for the {stage}", err=True)
                    _stats(items, as_json, json_file if as_json else out_file or _dir_file(out_dir, target,
                                                                                         "stats.txt"),
                           [_request_row(req, "error", str(failed), *failed.run)] if failed else [])
                else:
                    _show(items, stage, source_map, out_file, out_dir)
                if failed:
                    click.echo(f"error: {failed}", err=True)
                    return 1
                return _interrupted(items) if stopped else 0
        except (StageError, CaptureError) as exc:
            captured = recorded_arch(target)
            if isinstance(exc, CaptureError) and captured and captured != the_arch.name and "failed" in str(exc):
                # (helper-135: lmdeploy's host code chose USE_PDL=True for sm_90; on sm_80 ptxas refused it)
                exc = CaptureError(f"{exc}; this reproducer was captured for {captured}, with the constexprs and "
                                   f"configs the program's host code chose for that GPU: for {the_arch.name}, capture "
                                   f"again with `tritondbg capture --arch {the_arch.name} -- CMD`")
            click.echo(f"error: {exc}", err=True)
            if as_json:  # stdout (or the --out file) is still a JSON document: the request and the error
                _write_json([_request_row(req, "error", str(exc))], json_file)
            return 1
        except KeyboardInterrupt:  # before any case was compiled (the import), or in --diff
            if as_json:
                _write_json([_request_row(req, "interrupted", "interrupted before any compile finished")], json_file)
            return _interrupted(None)


def _pick_some(items, kernel: str | None) -> list:
    """``--kernel``'s items of an interrupted request (that kernel's placeholders, and those of the cases never
    reached, whose kernels are not known): a kernel the request did not reach is no usage error there."""
    from tritondbg.ir.request import pick

    known = [i for i in items if i.kernel]
    try:
        chosen = {i.kernel for i in pick(known, kernel)} if kernel and known else None
    except UsageError:
        chosen = set()
    return [i for i in items if chosen is None or not i.kernel or i.kernel in chosen]


def _interrupted(items: list | None) -> int:
    """The line that ends an interrupted request (with what it shows, ``items``), and its exit status: 130 (Ctrl-C),
    143 (SIGTERM)."""
    from tritondbg import stops

    by = stops.noted() or "SIGINT"
    if items is None:
        click.echo(f"interrupted ({by})", err=True)
    else:
        left = [i for i in items if i.extra.get("interrupted")]
        click.echo(f"interrupted ({by}): {len(items) - len(left)} compile(s) finished and shown, {len(left)} not "
                   "compiled (marked interrupted)", err=True)
    return 143 if by == "SIGTERM" else 130


def _request_row(req, status: str, message: str, case: str | None = None, dtype: str | None = None) -> dict:
    """The --json row of a request (or of its case ``case``) that compiled nothing: what was asked, its status and
    why."""
    return {"scenario": req.target, "kernel": None, "arch": req.arch.name, "case": case or req.case,
            "dtype": dtype or req.dtype, "config": req.config, "status": status, "message": message}


def _write_json(rows: list[dict], out_file: str | None) -> None:
    from tritondbg.ir import render

    text = json.dumps(rows, indent=2, default=str)
    if out_file:
        with open(out_file, "w") as f:
            f.write(text + "\n")
        render.wrote(out_file)
    else:
        print(text, flush=True)


def is_out_dir(path: str) -> bool:
    """``--out PATH`` names a folder: one that exists, or a path ending with a slash (created)."""
    return os.path.isdir(os.path.expanduser(path)) or path.endswith(("/", os.sep))


def _dir_file(out_dir: str | None, target: str, what: str) -> str | None:
    """``DIR/<scenario>-<what>``: the one file of --stats / --json written into ``--out DIR``."""
    if not out_dir:
        return None
    stem = _slug(os.path.basename(target.split("::")[0]).removesuffix(".py")
                 + (f"-{target.split('::')[1]}" if "::" in target else ""))
    return os.path.join(os.path.expanduser(out_dir), f"{stem}-{what}")


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_") or "ir"


def _item_file(out_dir: str, item, stage: str, taken: set, per_config: bool) -> str:
    """``DIR/<kernel>-<case>-<dtype>[-<config>].<stage>``: one file per kernel (and config, with several:
    ``per_config``)."""
    from tritondbg.configs import config_str

    base = _slug(f"{item.kernel}-{item.case}-{item.dtype}")
    if per_config and item.config:  # --all-configs: the same kernel once per config
        base += "-" + _slug(config_str(item.config))
    name = f"{base}.{stage}"
    n = 2
    while name in taken:
        name, n = f"{base}-{n}.{stage}", n + 1
    taken.add(name)
    return os.path.join(os.path.expanduser(out_dir), name)


def _show(items, stage, source_map, out_file, out_dir=None) -> None:
    from tritondbg.ir import render
    from tritondbg.ir.sourcemap import interleave
    from tritondbg.ir.stages import stage_text

    if out_file and os.path.exists(out_file):
        os.remove(out_file)   # emit_text appends one kernel after the other
    several = len(items) > 1 and not out_dir
    taken: set = set()
    kernels = [(i.kernel, i.case, i.dtype) for i in items if i.metadata_file]
    per_config = len(kernels) > len(set(kernels))
    for item in items:
        if _not_shown(item):  # refused by the compiler (--all-configs), or interrupted: nothing to show
            continue
        text, path = stage_text(item, stage, line_info=source_map)
        render.describe(item, stage, path)
        if source_map:
            text = interleave(stage, text)
        if several:
            text = render.separator(item, stage) + "\n" + text
        if out_dir:  # one file per kernel (and config) in the folder
            path = _item_file(out_dir, item, stage, taken, per_config)
            if os.path.exists(path):
                os.remove(path)
            render.emit_text(text, stage, path)
            render.wrote(path)
            continue
        render.emit_text(text, stage, out_file)
    if out_file:
        render.wrote(out_file)
    return 0


def _stats(items, as_json, out_file, error_rows: list | None = None) -> None:
    from tritondbg.ir import render
    from tritondbg.ir.stats import row

    rows = []
    for item in items:
        if not as_json and _not_shown(item):
            continue
        rows.append(row(item))
        if not as_json:
            render.describe(item, "stats", item.metadata_file)
    if as_json:
        _write_json(rows + (error_rows or []), out_file)
    elif rows:
        render.stats_table(rows, out_file)
        if out_file:
            render.wrote(out_file)


def _not_shown(item) -> bool:
    """A config with nothing to show (refused by the compiler, or not compiled before a Ctrl-C): a note on stderr
    instead."""
    from tritondbg.configs import config_str

    if not (item.extra.get("not_applicable") or item.extra.get("interrupted")):
        return False
    what = f"{item.kernel} [{config_str(item.config)}]" if item.kernel else f"case {item.case} ({item.dtype})"
    print(f"note: {what}: {item.config_source}", file=sys.stderr)
    return True


def _diff(req, sides, stage, kernel, use_index, stage_given: bool = True) -> int:
    from tritondbg.ir import render
    from tritondbg.ir.diff import parse_side, stats_rows, unified
    from tritondbg.ir.request import pick, resolve
    from tritondbg.ir.stages import stage_text
    from tritondbg.ir.stats import compute
    from tritondbg.ir.targets import check_supported, parse_arch

    requests = []
    for side, changes in [(side, parse_side(side)) for side in sides]:   # both sides checked before compiling
        r = req
        if "arch" in changes:
            a = parse_arch(changes["arch"])
            if stage not in a.stages() and not stage_given:  # two backends (sm_90 / gfx942): the layouts' stage
                print(f"note: --diff: {a.name} has no {stage}; both sides show ttgir (--stage chooses)",
                      file=sys.stderr)
                stage = "ttgir"
            if stage not in a.stages():
                raise UsageError(f"--stage {stage} does not exist for {a.name}; diff a stage both targets have")
            check_supported(a)
            r = r.with_changes(arch=a, arch_source="--diff")
        for key in ("case", "dtype", "config"):
            if key in changes:
                r = r.with_changes(**{key: changes[key]})
        requests.append((side, r))
    resolved = []
    for side, r in requests:
        items, _ = resolve(r, use_index=use_index)
        runs = list(dict.fromkeys(f"{i.case}/{i.dtype}" for i in items))
        if len(runs) > 1:
            raise UsageError(f"--diff compares one case and dtype per side; {side} names {len(runs)} "
                             f"({', '.join(runs)}): name one with --case / --dtype or in the side")
        resolved.append((side, pick(items, kernel)))
    (a_label, a_items), (b_label, b_items) = resolved
    b_by_name = {i.kernel: i for i in b_items}
    shown = 0
    for a in a_items:
        b = b_by_name.get(a.kernel)
        if b is None:
            continue
        a_text, a_path = stage_text(a, stage)
        b_text, b_path = stage_text(b, stage)
        render.describe(a, stage, a_path)
        render.describe(b, stage, b_path)
        rows = stats_rows(compute(a), compute(b))
        lines = unified(stage, a_text, b_text, f"{a.kernel} {a_label}", f"{a.kernel} {b_label}")
        render.diff_output(f"{a.kernel}: {stage}, {a_label} vs {b_label}", rows, lines, a_label, b_label)
        shown += 1
    if not shown:
        raise UsageError(f"the two sides launch no common kernel ({', '.join(i.kernel for i in a_items)} vs "
                         f"{', '.join(i.kernel for i in b_items)})")
    return 0


@click.command("ir", cls=NoProgramForm)
@click.argument("target", metavar="KERNEL", callback=options.check_kernel)
@click.option("--stage", type=click.Choice(STAGES, case_sensitive=False), default=None,
              help="Compile stage: source (raw TTIR), ttir, ttgir, llir, ptx, sass, amdgcn "
                   "[default: ptx on NVIDIA, amdgcn on AMD].")
@click.option("--arch", metavar="ARCH", default=None,
              help="Target: sm_80, sm_90, sm_100, gfx942, ... [default: the local GPU, else sm_90].")
@click.option("--case", "case", metavar="NAME", default=None,
              help="Case of the scenario whose arguments specialise the kernel [default: tiny]; GPU-size cases "
                   "work too (their inputs are built in CPU memory).")
@click.option("--dtype", metavar="DTYPE", default=None,
              help="Dtype of the case, e.g. bfloat16 or bf16 [default: its first].")
@click.option("--config", "config", metavar="K=V,...", default=None,
              help="Autotune config to compile (must match a listed config) [default: the recorded autotune "
                   "decision, else the case's config, else the first config left after pruning].")
@click.option("--all-configs", is_flag=True, help="One output per listed config of each autotuned kernel.")
@click.option("--kernel", "kernel", metavar="NAME", default=None,
              help="Only this kernel of the scenario's launch (e.g. a split-K reduce); exact or unique substring.")
@click.option("--source-map", is_flag=True, help="Interleave the Python kernel lines with the IR they produced.")
@click.option("--diff", nargs=2, metavar="A B", default=None,
              help="Diff the stage between two variants, each KEY=VALUE[;KEY=VALUE] with KEY in arch, case, "
                   "dtype, config (e.g. --diff arch=sm_80 arch=sm_90).")
@click.option("--stats", is_flag=True, help="Registers, spills, shared memory, warps/stages, instruction mix.")
@click.option("--json", "as_json", is_flag=True, help="Stats (and what was compiled) as JSON.")
# --out: a file, as `--json FILE` is checked, or a folder (is_out_dir), as `interpret --out DIR` is
@click.option("--out", "out_file", metavar="FILE|DIR", default=None,
              callback=options.output_callback(folder=is_out_dir, purpose=_OUT_PURPOSE),
              help="Write the IR (or --stats / --json) to FILE; a folder (one that exists, or a path ending with /): "
                   "one file per kernel in it, <kernel>-<case>-<dtype>.<stage> (and a failed compile's log).")
@click.option("--no-index", is_flag=True,
              help="Recompute Triton's cache key from the real arguments (imports torch) instead of the index.")
def ir_cmd(target, stage, arch, case, dtype, config, all_configs, kernel, source_map, diff, stats, as_json,
           out_file, no_index):
    """Show what the compiler made of KERNEL's launch, for any GPU target, without a GPU.

    Reads Triton's compile cache first ($TRITON_CACHE_DIR); a miss compiles on the CPU and fills it. The
    kernel is specialised on the case's real arguments, as a GPU launch would be. Info goes to stderr, the IR
    to stdout (coloured on a terminal).
    """
    sys.exit(ir(target, stage=stage, arch=arch, case=case, dtype=dtype, config=config, all_configs=all_configs,
                kernel=kernel, source_map=source_map, diff=tuple(diff) if diff else None, stats=stats,
                as_json=as_json, out_file=out_file, use_index=not no_index))
