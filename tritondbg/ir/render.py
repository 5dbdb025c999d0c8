"""Terminal output of `ir`: what was compiled and where from (stderr), the IR (stdout), stats tables, diffs.

The IR goes to stdout alone so ``tritondbg ir gemm > gemm.ptx`` is a clean file; everything that explains it
(kernel, arch, config and why, specialisation, cache hit or miss and the entry) goes to stderr. On a terminal
the IR is syntax-coloured with rich; piped, it is written as is.
"""
from __future__ import annotations

import os
import sys

from rich.console import Console

from tritondbg.configs import config_str
from tritondbg.ir.item import COMPILED, IN_PROCESS, INDEX_HIT, TRITON_HIT

LEXERS = {"llir": "llvm", "ptx": "ptx", "amdgcn": "gas"}   # MLIR and SASS: tritondbg.ir.lexers
_COMMENT = {"llir": ";", "amdgcn": ";"}


def err_console() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def cache_line(item, stage_file: str) -> str:
    """"cache hit: <file> (entry KEY)" / "cache miss: compiled ..." - the line tests read to tell hit from miss."""
    if item.source == COMPILED:
        return f"cache miss: compiled for {item.arch} in {item.compile_s:.2f} s, stored in {item.entry}"
    how = {INDEX_HIT: "Triton cache, found through the tritondbg index", TRITON_HIT: "Triton cache",
           IN_PROCESS: "compiled earlier in this process"}[item.source]
    return f"cache hit: {stage_file} (entry {item.key}; {how})"


def describe(item, stage: str, stage_file: str, con: Console | None = None) -> None:
    con = con or err_console()
    grid = "x".join(str(g) for g in item.grid) if item.grid else "?"
    con.print(f"[bold]{item.kernel}[/] \\[{item.arch}, {stage}]  {item.scenario} case={item.case} "
              f"dtype={item.dtype} grid={grid}  [dim](arch: {_esc(item.arch_source)})[/]")
    cfg = config_str(item.config) if item.config else "-"
    con.print(f"  config {_esc(cfg)}  [dim]({_esc(item.config_source)})[/]")
    con.print(f"  specialization {item.short_spec()}", markup=False)
    con.print(f"  {cache_line(item, stage_file)}", markup=False)


def separator(item, stage: str) -> str:
    c = _COMMENT.get(stage, "//")
    return f"{c} ==== {item.kernel} ({item.arch}, {stage}, case={item.case}, {item.dtype}, " \
           f"{config_str(item.config) or 'no config'}) ===="


def emit_text(text: str, stage: str, out_file: str | None = None) -> None:
    """The IR on stdout (coloured on a terminal) or into ``out_file``."""
    if out_file:
        with open(out_file, "a") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        return
    con = Console(highlight=False, soft_wrap=True)
    if con.is_terminal:
        from rich.syntax import Syntax

        con.print(Syntax(text, _lexer(stage), theme="ansi_dark", word_wrap=False, background_color="default"))
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def _lexer(stage: str):
    """A pygments lexer (name or instance) for the stage."""
    if stage in ("source", "ttir", "ttgir", "sass"):
        from tritondbg.ir.lexers import MlirLexer, SassLexer

        return SassLexer() if stage == "sass" else MlirLexer()
    return LEXERS.get(stage, "text")


def stats_table(rows: list[dict], out_file: str | None = None) -> None:
    """One column per kernel: registers, spills, shared memory, warps/stages, then the instruction mix."""
    from rich.table import Table

    from tritondbg.ir.stats import warp_specialization_str

    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("")
    for r in rows:
        table.add_column(_stats_header(r, rows), justify="right")
    def shared(r):
        if r.get("shared") is None:
            return "-"
        text = f"{r['shared']:,} B"
        if r.get("shared_fits") is False:
            text += f" [red](> {r['shared_limit']:,} B limit)[/]"
        return text
    lines = [("config", lambda r: config_str(r["config"]).replace(",", "\n") or "-"),
             ("registers / thread", lambda r: _v(r.get("n_regs"))),
             ("spills (local bytes / 4)", lambda r: _v(r.get("n_spills"))),
             ("shared memory", shared),
             ("num_warps", lambda r: _v(r.get("num_warps"))),
             ("num_stages", lambda r: _v(r.get("num_stages"))),
             ("warp specialisation", lambda r: warp_specialization_str(r.get("warp_specialization")))]
    for label, get in lines:
        table.add_row(label, *[get(r) for r in rows])
    sources = sorted({s for r in rows for s in r.get("instruction_mix", {})})
    for source in sources:
        names = sorted({n for r in rows for n in r["instruction_mix"].get(source, {})})
        if names:
            table.add_row(f"[bold]{source} instructions[/]", *["" for _ in rows])
        for n in names:
            table.add_row(f"  {n}", *[str(r["instruction_mix"].get(source, {}).get(n, 0)) for r in rows])
    # a file or a pipe gets the table's natural width (at 80 columns every label and config was cut to "BL…")
    if out_file:
        with open(out_file, "w") as f:
            Console(file=f, highlight=False, width=_UNBOUNDED, color_system=None).print(table)
    else:
        Console(highlight=False, width=None if sys.stdout.isatty() else _UNBOUNDED).print(table)


_UNBOUNDED = 100_000  # a console width no table reaches: rich then lays it out at its natural width


def _stats_header(r: dict, rows: list[dict]) -> str:
    """A column's header: kernel and target, and what tells it from a column of the same kernel and target (its
    case under --case a,b; dtype under --diff dtype=...; "config N" under --all-configs)."""
    same = [o for o in rows if o["kernel"] == r["kernel"] and o["arch"] == r["arch"]]
    lines = [r["kernel"], r["arch"]]
    if len(same) > 1:
        if len({o.get("case") for o in same}) > 1:  # --case a,b / all
            lines.append(str(r.get("case")))
        if len({o.get("dtype") for o in same}) > 1:
            lines.append(str(r.get("dtype")))
        mine = [o for o in same if (o.get("case"), o.get("dtype")) == (r.get("case"), r.get("dtype"))]
        if len({str(o.get("config")) for o in mine}) > 1:  # the "config" row below spells it out
            lines.append(f"config {mine.index(r) + 1}")
    return "\n".join(lines)


def _v(x) -> str:
    return "-" if x is None else f"{x:,}" if isinstance(x, int) else str(x)


def diff_output(label: str, rows: list[tuple[str, str, str]], lines: list[str], a_label: str, b_label: str) -> None:
    from rich.table import Table

    con = Console(highlight=False, soft_wrap=True)
    con.print(f"[bold]{label}[/]", markup=True)
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("")
    table.add_column(a_label, justify="right")
    table.add_column(b_label, justify="right")
    for name, a, b in rows:
        style = "" if a == b else "[yellow]"
        table.add_row(name, f"{style}{a}", f"{style}{b}")
    con.print(table)
    if not lines:
        con.print("(no difference in this stage after normalising names and locations)")
        return
    if con.is_terminal:
        for line in lines:
            colour = "green" if line.startswith("+") else "red" if line.startswith("-") else \
                "cyan" if line.startswith("@@") else None
            con.print(f"[{colour}]{_esc(line)}[/]" if colour else _esc(line))
    else:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def wrote(path: str) -> None:
    err_console().print(f"wrote {os.path.abspath(path)}", markup=False)
