"""Console output: a short verdict per launch, coloured on a terminal and plain when piped."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from tritondbg.configs import config_str
from tritondbg.record import RunRecord


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _fmt_time(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def print_record(record: RunRecord, path: Path | None = None) -> None:
    con = _console()
    for r in record.results:
        print_case(con, r)
    print_sweep(con, record)
    print_summary(con, record, path)


def print_case(con: Console | None, r) -> None:
    """One case's block: the verdict line, configs used, error against the reference, findings, message. Printed
    as the case finishes (``interpret``/``run`` stream them), so a run cut short still shows what it got through."""
    con = con or _console()
    print_steps(con, r)
    mark = {"pass": "[green]PASS[/]", "fail": "[red]FAIL[/]", "error": "[red]ERROR[/]"}[r.status]
    head = f"{mark} {r.kernel} case={r.case} dtype={r.dtype} mode={r.mode}"
    if r.status == "error" and not r.wall_s:
        pass  # the launch raised (or never started): no time to show
    elif r.mode == "interpret":
        head += f" ({_fmt_time(r.wall_s)} on the CPU interpreter)"
    else:
        head += f" ({_fmt_time(r.wall_s)} incl. compile/autotune)"
    con.print(head)
    for kernel, cfg in r.config.items():
        con.print(f"  config {kernel}: {config_str(cfg)}  [dim]({r.config_source.get(kernel, '')})[/]")
    apart = r.extra.get("not_compared") or {}
    # (helper-64: a replay with an out-of-bounds read said "2944/2944 mismatched ... got nan", which read as a
    # kernel broken everywhere: the NaN were the sanitizers' own, in the lanes the finding names)
    poisoned = (" (the sanitizers' NaN: lanes the finding(s) below name reached them)"
                if any(f.get("kind") in ("out_of_bounds", "poison", "uninit") and f.get("severity", "error") == "error"
                       for f in r.findings) and not any(f.get("kind") == "nan_inf" for f in r.findings) else "")
    for e in r.errors:
        # both maxima above their tolerances yet ok (helper-56 read it as a bug): the test is per element
        each = " (each element within atol + rtol*|ref|)" if e.max_abs > e.atol and e.max_rel > e.rtol else ""
        verdict = f"ok{each}" if e.passed else (f"[yellow]{e.mismatched}/{e.numel} differ: not compared (warning below)[/]"
                                         if e.name in apart else f"[red]{e.mismatched}/{e.numel} mismatched[/]")
        con.print(f"  {e.name} {tuple(e.shape)}: max abs err {e.max_abs:.3g}, max rel err {e.max_rel:.3g} "
                  f"(atol={e.atol:g}, rtol={e.rtol:g}) {verdict}")
        if not e.passed and e.name not in apart:
            got, want = _apart(e.worst_out, e.worst_ref)
            con.print(f"    worst at {tuple(e.worst_index)}: got {got}, expected {want}"
                      + (f"; {e.nonfinite} NaN/Inf where the reference is finite{poisoned}" if e.nonfinite else "")
                      + (f"; {e.dtypes} (a truncating cast or the wrong output dtype?)" if e.dtypes else ""))
    zero = r.extra.get("undefined_as_zero")
    if zero:  # the same case without the sanitizers' NaN (runner._undefined_as_zero)
        wrong = {n: v for n, v in zero.items() if not v["passed"]}
        oob = any(f.get("kind") == "out_of_bounds" for f in r.findings)
        if not wrong and oob:  # (helper-94: an unmasked load past a tensor's end was told as "undefined lanes")
            con.print("  [yellow]run again without the sanitizers (undefined lanes and reads past a tensor's end as 0), "
                      "every output matches the reference: the mismatch is the NaN the sanitizers put in the lanes "
                      "the finding(s) below name; on a GPU a read past the end gets whatever memory is there (or "
                      "faults), and no compiler promises 0 for a masked-off lane[/]")
        elif not wrong:
            con.print("  [yellow]run again without the sanitizers (undefined lanes read as 0, as today's compiled code "
                      "reads them), every output matches the reference: the mismatch is the NaN in the lanes the "
                      "finding(s) below name, which no compiler promises to read as 0[/]")
        else:
            con.print("  run again without the sanitizers (undefined lanes read as 0), still wrong: " + ", ".join(
                f"{n} {v['mismatched']}/{v['numel']} mismatched" for n, v in wrong.items()))
    print_findings(con, r)
    if r.message and r.status != "pass":
        con.print(f"  [red]{escape(r.message)}[/]")


def print_summary(con: Console | None, record: RunRecord, path: Path | None = None) -> None:
    """The last line: N/M passed, the sanitizers' count, what cut the run short (if anything), the record."""
    con = con or _console()
    n_pass = sum(r.passed for r in record.results)
    summary = f"{n_pass}/{len(record.results)} passed"
    if record.extra.get("sanitizers"):
        n = sum(not _is_warning(f) for r in record.results for f in r.findings)
        w = sum(_is_warning(f) for r in record.results for f in r.findings)
        summary += f", sanitizers on: {n} finding(s)" if n else ", sanitizers on: no finding"
        summary += f", {w} warning(s)" if w else ""
    by = record.extra.get("interrupted_by") if record.extra.get("interrupted") else None
    if by:
        summary += ", timed out" if by == "timeout" else f", interrupted ({by})"
    if record.compared_nothing:
        summary += ", but every output was empty: nothing was compared (give a case at least one element)"
    if record.extra.get("cuda_on_cpu"):
        from tritondbg.program.cpu_device import note

        con.print(f"[dim]note: {note([record.extra])}[/]")
    con.print(("[green]" if record.passed else "[red]") + summary + "[/]"
              + (f"  record: {path}" if path else ""))


def print_catalog(entries: list[dict]) -> None:
    """One block per kernel: description, cases (GPU-only ones marked), autotune configs."""
    con = _console()
    for e in entries:
        con.print(f"[bold]{e['name']}[/]  {e['description']}")
        width = max(len(c["name"]) for c in e["cases"])
        for c in e["cases"]:
            params = " ".join(f"{k}={v}" for k, v in c["params"].items())
            where = "cpu+gpu" if c["interpret"] else "gpu    "
            con.print(f"  {c['name']:<{width}}  {where}  {','.join(c['dtypes'])}  [dim]{params}[/]")
        for kernel, cs in e["configs"].items():
            con.print(f"  autotune {kernel}: {len(cs)} configs")
            for c in cs:
                con.print(f"    {config_str(c)}")
        con.print()


# ---------------------------------------------------------------------------------------------------------
# interpreter debugging: findings, the step log, all-configs sweeps
# ---------------------------------------------------------------------------------------------------------

def _where(f: dict) -> str:
    import os

    file = f.get("file") or "?"
    try:
        rel = os.path.relpath(file)
        file = file if rel.startswith("..") else rel
    except ValueError:
        pass
    return f"{file}:{f.get('line')}"


def _is_warning(f: dict) -> bool:
    """A finding that does not fail the run (``severity`` "warning": a store of one value by every program)."""
    return f.get("severity", "error") == "warning"


def print_findings(con: Console, r) -> None:
    """One block per finding: kind, kernel file:line, pid, tensor, the source line and the message."""
    for f in r.findings:
        pid = f.get("pid")
        pid_txt = f" pid {tuple(pid)}" if pid else ""
        tensor = f" {f['tensor']}" if f.get("tensor") else ""
        label = f"[yellow]warning: {f.get('kind')}[/]" if _is_warning(f) else f"[red]{f.get('kind')}[/]"
        con.print(f"  {label} {escape(_where(f))}{pid_txt}{escape(tensor)}")
        if f.get("source"):
            for text in f["source"].splitlines():  # (a call over several lines: all of them)
                con.print(f"    [dim]{escape(text)}[/]")
        if f.get("kind") == "kernel_error" and f.get("message") and f["message"] in (r.message or ""):
            continue  # the case's one-line message below says it (file:line: pid: error), not twice
        con.print(f"    {escape(f.get('message', ''))}")
    for key in ("trace_note", "break_note", "watch_note"):
        if r.extra.get(key):
            con.print(f"  [yellow]note:[/] {escape(r.extra[key])}")


def _load_steps(r) -> dict | None:
    import json

    if "steps" in r.extra:
        return r.extra["steps"]
    path = r.extra.get("step_log")
    if not path:
        return None
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def print_steps(con: Console, r) -> None:
    """The step log of the traced program: each kernel line, its iteration, the values it assigned. A line
    that calls a kernel function shows its values after the call's own steps (when they were assigned)."""
    from tritondbg.interp import findings, values

    log = _load_steps(r)
    if not log or not log.get("steps"):
        return
    pid = tuple(log["pid"])
    steps = log["steps"]
    current = None
    deferred: list[tuple[int, list[str]]] = []  # (depth, value lines) of calls still running

    def flush(depth: int) -> None:
        while deferred and deferred[-1][0] >= depth:
            for line in deferred.pop()[1]:
                con.print(line)

    for i, st in enumerate(steps):
        depth = st.get("depth") or 0
        flush(depth)
        if st["launch"] != current:
            current = st["launch"]
            # (the step log counts launches from 0, as the interpreter's hooks do; a reader from 1: helper-83)
            nth = findings.nth(current + 1) if isinstance(current, int) else "?"
            con.print(f"[bold]trace[/] {st['kernel']} ({nth} launch) pid {pid}  [dim]{escape(st['file'])}[/]")
        pad = "  " * depth
        if st["event"] == "call":
            args = ", ".join(f"{k}={values.text(v)}" for k, v in st["values"].items())
            con.print(f"  {pad}[cyan]call {st['function']}[/]({escape(args)})")
            continue
        if st["event"] == "return":
            con.print(f"  {pad}[cyan]return[/] {escape(values.text(st['values']['<return>']))}")
            continue
        hit = f" [dim](iter {st['hit']})[/]" if st.get("hit") and st["hit"] > 1 else ""
        con.print(f"  {pad}[bold]{st['line']:>4}[/]{hit}  {escape(st['source'])}")
        lines = [f"  {pad}        {escape(name)} = {escape(values.text(v))}" for name, v in st["values"].items()]
        lines += [f"  {pad}        [magenta]watch[/] {escape(expr)} = {escape(values.text(v))}"
                  for expr, v in (st.get("watch") or {}).items() if v.get("kind") != "undefined"]
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if nxt is not None and (nxt.get("depth") or 0) > depth and nxt["launch"] == st["launch"]:
            deferred.append((depth, lines))
        else:
            for line in lines:
                con.print(line)
    flush(0)
    if log.get("truncated"):
        con.print(f"  [yellow]step log truncated at {len(steps)} steps[/]")
    if r.extra.get("step_log"):
        con.print(f"  [dim]step log: {escape(r.extra['step_log'])}[/]")


SKIPPED_SHOWN = 5  # configs not run listed per (kernel, reason) after an --all-configs run


def print_sweep(con: Console | None, record: RunRecord) -> None:
    """After an --all-configs run: which configs disagree with the reference (or a sanitizer)."""
    sweep = record.extra.get("sweep")
    if not sweep:
        return
    con = con or _console()
    fails = sweep.get("failures", [])
    skipped = sweep.get("not_applicable", [])
    if skipped:
        n = sum(s.get("count", 1) for s in skipped)  # (one line can stand for a whole list: "its 23 listed configs")
        con.print(f"[yellow]{n} config(s) not run (pruned by the autotuner, or not applicable):[/]")
        shown: dict[tuple, int] = {}  # (kernel, reason): lines printed; past SKIPPED_SHOWN a count (408 pruned ones)
        for s in skipped:
            key = (s["kernel"], s["reason"])
            shown[key] = shown.get(key, 0) + 1
            if shown[key] <= SKIPPED_SHOWN:
                con.print(f"  {s['kernel']} {s['config']}  case={s['case']} dtype={s['dtype']}: {escape(s['reason'])}")
        for (kernel, reason), n in shown.items():
            if n > SKIPPED_SHOWN:
                con.print(f"  ... and {n - SKIPPED_SHOWN} more of {kernel}: {escape(reason)} (--json lists them all)")
    apart = [r for r in record.results if r.extra.get("not_compared")]
    if apart:
        con.print(f"[yellow]{len(apart)} config run(s) not compared with the reference (checked by the sanitizers "
                  "only):[/]")
        for r in apart:
            cfg = "; ".join(config_str(c) for c in r.config.values())
            con.print(f"  {cfg}  case={r.case} dtype={r.dtype}: {', '.join(r.extra['not_compared'])}: partial results "
                      "per program that add up to the capture's total")
    unfinished = [r for r in record.results if r.extra.get("interrupted")]
    for r in unfinished:  # the config a Ctrl-C, SIGTERM or --timeout cut short
        con.print(f"[yellow]  {escape(r.message)}  case={r.case} dtype={r.dtype}[/]")
    if not fails:
        cut = " that ran before the run was cut short" if record.extra.get("interrupted") else ""
        n = sweep['runs'] - len(apart) - len(unfinished)
        con.print(f"[green]the {n} config run(s){cut} compared agree with the reference[/]" if apart else
                  f"[green]all {n} config runs{cut} agree with the reference[/]")
        return
    errors = sum(f.get("status") == "error" for f in fails)  # runs that did not finish: no verdict to disagree
    zero = sum(1 for r in record.results if not r.passed and r.extra.get("undefined_as_zero") and
               all(v["passed"] for v in r.extra["undefined_as_zero"].values()))
    if zero:  # (helper-77: "10 of 10 config runs disagree" where each matched with the undefined lanes read as 0)
        con.print(f"[yellow]{zero} of the runs below match the reference once the undefined lanes read 0, as today's "
                  "compiled code reads them: the loads without other= their findings name are why they disagree[/]")
    if len(fails) > 1 and len({(f.get("status"), f["message"]) for f in fails}) == 1:  # (helper-155: five nan_inf lines
        every = len(fails) == sweep["runs"]  # alike under "5 of 5 config runs disagree")
        con.print(f"[red]{len(fails)} of {sweep['runs']} config runs fail, all the same way"
                  f"{' (whatever the config: the kernel itself)' if every else ''}:[/] {escape(fails[0]['message'])}")
        for f in fails:
            con.print(f"  {f['kernel']} {f['config']}  case={f['case']} dtype={f['dtype']}")
        return
    if not errors:
        con.print(f"[red]{len(fails)} of {sweep['runs']} config runs disagree:[/]")
    else:  # (helper-54: "10 of 10 config runs disagree" where every config ended in the same kernel error)
        split = f"{len(fails) - errors} disagree, " if len(fails) > errors else ""
        con.print(f"[red]{len(fails)} of {sweep['runs']} config runs failed: {split}{errors} ended in an error:[/]")
    for f in fails:
        con.print(f"  {f['kernel']} {f['config']}  case={f['case']} dtype={f['dtype']}: {escape(f['message'])}")


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two values with enough digits to tell them apart (6 unless equal there: an fp64 difference of 1e-7 read
    "got 1.18814, expected 1.18814"), at most 17."""
    for digits in (6, 9, 12, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return x, y
