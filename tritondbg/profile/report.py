"""report.html: the whole profile run in one self-contained file (an exporter of the run record).

No network, no script, no external font or stylesheet: the CSS is inline, the figures are inline SVG with
their text drawn as paths (matplotlib ``svg.fonttype = path``). So it opens anywhere, offline, from a copied
folder or a CI artifact. Sections: the summary table, one decision table per autotune decision (every config,
p20/p50/p80, winner, pruned, source), the roofline with its numbered table, a launch timeline per case.

Tables carry ids/classes the tests read: ``table#summary``, ``table.autotune`` (``data-kernel``,
``data-case``), ``table#roofline-points``, ``section.timeline``.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Iterable

from tritondbg.configs import config_str
from tritondbg.profile.summary import HEADERS, fmt_time, rows, table_cells, vs_torch_note
from tritondbg.record import UNCHECKED, RunRecord

REPORT_NAME = "report.html"

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ccc; }
h3 { font-size: 14px; margin: 16px 0 4px; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.winner td { background: #e3f5e1; font-weight: 600; } tr.failed td { color: #b00; }
tr.pruned td, tr.notrun td { color: #888; }
.note { color: #b00; font-weight: 600; } .dim { color: #666; font-size: 12px; }
code { background: #f4f4f4; padding: 1px 4px; }
svg { max-width: 100%; height: auto; }
#summary td:last-child { max-width: 420px; overflow-wrap: anywhere; }
"""


_NO_MPL = "<p class=\"note\">matplotlib is not installed: no figures (pip install matplotlib).</p>"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _table(headers: Iterable[str], body: Iterable[tuple[list[str], str]], attrs: str = "",
           numeric: Iterable[str] = ()) -> str:
    """``body``: (cells already escaped, row class)."""
    headers = list(headers)
    num = {i for i, h in enumerate(headers) if h in set(numeric)}
    out = [f"<table {attrs}>", "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr></thead>",
           "<tbody>"]
    for cells, cls in body:
        tds = "".join(f"<td class=\"num\">{c}</td>" if i in num else f"<td>{c}</td>" for i, c in enumerate(cells))
        out.append(f"<tr class=\"{cls}\">{tds}</tr>" if cls else f"<tr>{tds}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def summary_table(record: RunRecord) -> str:
    body = [([_e(c) for c in table_cells(row)], "" if row["status"] in ("pass", UNCHECKED) else "failed")
            for row in rows(record)]
    return _table(HEADERS, body, 'id="summary"', numeric=("median", "throughput", "% of peak", "vs torch", "torch"))


def program_table(prog: dict[str, Any]) -> str:
    """`profile -- CMD`: launches, total and median time, share of the program's GPU time, bytes/s per kernel."""
    from tritondbg.profile.program_run import KERNEL_COLUMNS, kernel_cells, window_text

    body = [([_e(c) for c in kernel_cells(row)], "") for row in prog["kernels"]]
    status = "" if not prog.get("exit_status") else f" <span class=\"note\">exit status {prog['exit_status']}</span>"
    traced = window_text(prog.get("window") or {})
    traced = f"<p class=\"dim\" id=\"program-window\">{_e(traced)}</p>" if traced else ""
    return (f"<p class=\"dim\"><code>{_e(prog['command'])}</code>{status}</p>{traced}"
            + _table(KERNEL_COLUMNS, body, 'id="program-kernels"',
                     numeric=("launches", "total", "median", "share", "achieved")))


def decision_table(result, d: dict[str, Any]) -> str:
    """One autotune decision: every config with its p20/p50/p80 (us), status, the winner marked."""
    keys: list[str] = []
    for e in d["configs"]:
        keys += [k for k in e["config"] if k not in keys]
    body = []
    for i, e in enumerate(d["configs"]):
        status = e["status"]
        cls = "winner" if e["winner"] else {"failed": "failed", "pruned": "pruned", "not run": "notrun"}.get(status, "")
        cells = [str(i)] + [_e(e["config"].get(k, "")) for k in keys] + [
            _e(status), _e(fmt_time(e["p20_ms"])), _e(fmt_time(e["p50_ms"])), _e(fmt_time(e["p80_ms"])),
            "&#9733; winner" if e["winner"] else ""]
        body.append((cells, cls))
    key = f" key=({', '.join(d['key'])})" if d.get("key") else ""
    timed = sum(e["status"] == "timed" for e in d["configs"])
    facts = [f"source: <b>{_e(d.get('source'))}</b>", f"{timed} timed",
             f"{sum(e['status'] == 'failed' for e in d['configs'])} failed", f"{len(d.get('pruned') or [])} pruned"]
    if d.get("bench_s"):
        facts.append(f"benchmark {d['bench_s']:.2f} s")
    if d.get("cache_hit"):
        facts.append("cache hit")
    if d.get("calls", 1) > 1:
        facts.append(f"answered {d['calls']} calls")
    head = (f"<h3>{_e(d['kernel'])}{_e(key)} &mdash; {_e(result.kernel)}:{_e(result.case)}:{_e(result.dtype)}</h3>"
            f"<p class=\"dim\">{'; '.join(facts)}. winner: <code>{_e(config_str(d.get('winner') or {}))}</code>"
            + (f". {_e(d['note'])}" if d.get("note") else "") + "</p>")
    attrs = (f'class="autotune" data-kernel="{_e(d["kernel"])}" data-case="{_e(result.case)}" '
             f'data-dtype="{_e(result.dtype)}" data-source="{_e(d.get("source"))}"')
    return head + _table(["#", *keys, "status", "p20", "p50", "p80", "winner"], body, attrs,
                         numeric=("p20", "p50", "p80"))


def roofline_section(record: RunRecord, peaks, note: str) -> str:
    from tritondbg.profile import roofline

    if not roofline.available():
        return _NO_MPL
    fig_svg = roofline.svg(record, peaks, note)
    if fig_svg is None:
        return "<p class=\"dim\">No case has FLOP and byte counts and a time: no roofline.</p>"
    body = [([str(r["n"]), _e(r["kernel"]), _e(r["case"]), _e(r["dtype"]), f"{r['intensity']:.3g}",
              "-" if r["tflops"] is None else f"{r['tflops']:.3g}",
              "-" if r["torch_tflops"] is None else f"{r['torch_tflops']:.3g}"], "")
            for r in roofline.legend_rows(record)]
    table = _table(["#", "kernel", "case", "dtype", "FLOP/byte", "TFLOP/s", "torch TFLOP/s"], body,
                   'id="roofline-points"', numeric=("FLOP/byte", "TFLOP/s", "torch TFLOP/s"))
    return f"<div class=\"figure\">{fig_svg}</div>{table}"


def timeline_sections(record: RunRecord) -> str:
    from tritondbg.profile import roofline, timeline

    if not roofline.available():
        return _NO_MPL
    out = []
    for r in record.results:
        tl = r.extra.get("profile", {}).get("timeline")
        fig = timeline.figure(tl)
        name = f"{r.kernel}:{r.case}:{r.dtype}"
        if fig is None:
            continue
        counts = ", ".join(f"{len(tl.get(k) or [])} {label}" for k, label in
                           (("launches", "launches"), ("gpu_kernels", "GPU kernels"), ("torch", "torch calls")))
        out.append(f"<section class=\"timeline\" data-case=\"{_e(name)}\"><h3>{_e(name)}</h3>"
                   f"<p class=\"dim\">{_e(counts)}</p>{roofline.svg_of(fig)}</section>")
    return "\n".join(out) or "<p class=\"dim\">No traced launches.</p>"


def render(record: RunRecord) -> str:
    """The report as one HTML string."""
    info = record.extra.get("profile", {})
    env = record.environment or {}
    note = info.get("note") or ""
    from tritondbg.profile import peaks as peaks_mod

    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>tritondbg {_e(record.command)}</title><style>{_CSS}</style></head><body>",
             f"<h1>tritondbg {_e(record.command)}</h1>",
             f"<p class=\"dim\">{_e(record.started)} &middot; {_e(env.get('gpu') or 'no GPU')} &middot; "
             f"torch {_e(env.get('torch'))} &middot; triton {_e(env.get('triton'))} &middot; "
             f"{_e(peaks_mod.describe(info.get('peaks')))}</p>"]
    if note:
        parts.append(f"<p class=\"note\">Note: {_e(note)}.</p>")
    if info.get("program"):
        parts += ["<h2>Triton kernels of the program</h2>", program_table(info["program"])]
    parts += ["<h2>Summary</h2>", summary_table(record),
              f"<p class=\"dim\">{_e(vs_torch_note(record))}.</p>", "<h2>Autotune decisions</h2>"]
    decisions = [(r, d) for r in record.results for d in r.extra.get("profile", {}).get("autotune", [])]
    parts += [decision_table(r, d) for r, d in decisions] or ["<p class=\"dim\">No autotuned kernel ran.</p>"]
    parts += ["<h2>Roofline</h2>", roofline_section(record, info.get("peaks"), note),
              "<h2>Launch timelines</h2>", timeline_sections(record),
              "<h2>Files</h2>", _files(record), "</body></html>"]
    return "\n".join(parts)


def _files(record: RunRecord) -> str:
    info = record.extra.get("profile", {})
    traces = "".join(f"<li><code>{_e(t)}</code></li>" for t in info.get("traces", []))
    return (f"<ul>{traces}</ul><p class=\"dim\">The traces (with the autotune track) open in the Perfetto UI "
            "(ui.perfetto.dev: the trace is read in the browser, not uploaded). TensorBoard: "
            f"<code>tensorboard --logdir {_e(Path(info.get('run_dir', '.')).parent)} --host 127.0.0.1</code> "
            "(its PyTorch Profiler tab needs internet).</p>")


def write(record: RunRecord, run_dir: Path) -> Path:
    path = Path(run_dir) / REPORT_NAME
    path.write_text(render(record), encoding="utf-8")
    return path
