"""The program-mode commands as keyword functions (the Click commands in commands/program.py call these).

- ``capture(cmd, ...)``: run the program attached with the Capturer; write ``captures.json``; exit status
  is the program's.
- ``interpret(cmd, ...)``: run the program under the interpreter with the Checker on every launch; print
  a per-kernel summary; exit status: the program's failure, else 1 with a finding, else 0.

Both read what the program's processes wrote into the run folder (``findings.jsonl``, ``captures.jsonl``,
``summary-<pid>.json``) after it exited, however it exited: what was written before a crash is reported. Then
the per-process files are merged into the folder's record (``captures.json``; ``--json``) and removed, with the
processes' claims (``.claims/``, ``claims.py``). A folder used again (``--out``) is cleared of them before the
program starts: before, the next run merged the last run's summaries, captures and findings with its own.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import glob
import json
import os
import shlex
import shutil
import sys
import tempfile

from tritondbg.program import launcher, stacks


def _stamp() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def read_jsonl(path: str) -> list[dict]:
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:   # a line cut by a kill
                        pass
    except OSError:
        pass
    return out


def read_summaries(run_dir: str) -> list[dict]:
    out = []
    for path in sorted(glob.glob(os.path.join(run_dir, "summary-*.json"))):
        try:
            with open(path) as f:
                out.append(json.load(f))
        except (OSError, json.JSONDecodeError):
            pass
    return out


# what the program's processes write for the parent (child.py, capture.py, checker.py, claims.py)
_WORK_FILES = ("summary-[0-9]*.json", "summary-[0-9]*.json.tmp", "captures.jsonl")


def clear_work_files(run_dir: str, extra=()) -> None:
    """Remove the per-process files of a run (after they were merged, or left by an earlier run)."""
    from tritondbg.program import claims

    for pattern in (*_WORK_FILES, *extra):
        for path in glob.glob(os.path.join(run_dir, pattern)):
            try:
                os.remove(path)
            except OSError:
                pass
    shutil.rmtree(os.path.join(run_dir, claims.DIR), ignore_errors=True)


def _merge_counts(summaries: list[dict], key: str) -> dict[str, int]:
    total: dict[str, int] = {}
    for s in summaries:
        for k, v in (s.get(key) or {}).items():
            total[k] = total.get(k, 0) + int(v)
    return total


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _resolvable(cmd, command: str) -> bool:
    """Bad usage (no command) raises UsageError (exit 2); a command that does not exist: one line, False."""
    try:
        launcher.resolve(list(cmd), command)
    except launcher.ProgramNotFound as exc:
        _err(f"error: {exc}")
        return False
    return True


def _start(cmd, cfg, interpret: bool, timeout: float | None = None) -> int:
    try:
        return launcher.run(list(cmd), cfg, interpret=interpret, timeout=timeout)
    except launcher.ProgramNotFound as exc:
        _err(f"error: {exc}")
        return 127


def gpu_visible() -> bool:
    """A cheap guess without importing torch: an NVIDIA or AMD device node exists and the environment does not
    hide every device (``CUDA_VISIBLE_DEVICES=""`` or ``-1`` on a GPU machine: the program sees no GPU, and a
    compiled run of it died with Triton's "0 active drivers")."""
    def hidden(*names):
        return any(os.environ.get(n) is not None and os.environ[n].strip() in ("", "-1") for n in names)

    return (os.path.exists("/dev/nvidiactl") and not hidden("CUDA_VISIBLE_DEVICES")) or \
        (os.path.exists("/dev/kfd") and not hidden("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"))


def _earlier_captures(out: str) -> list:
    """The entries of a captures.json an earlier capture left in ``out`` (its own earlier list included)."""
    try:
        with open(os.path.join(out, "captures.json")) as f:
            doc = json.load(f)
        return list(doc.get("captures") or []) + list(doc.get("earlier_captures") or [])
    except (OSError, ValueError, AttributeError, TypeError):
        return []


def _launch_count(n: int, summaries, lost: bool = False, of: str = "") -> str:
    """"N launch(es)"; "at least N" where a process was killed where no exit hook runs (its counts are written
    at most once a second as it runs: child.checkpoint; its summary is not ``final``) or never wrote them
    (``lost``)."""
    if lost or any(not s.get("final", True) for s in summaries):
        return f"at least {n} launch(es){of} (the program was killed before it reported every launch)"
    return f"{n} launch(es){of}"


LISTED_MAX = 20  # reproducers listed one per line at the end of a capture


def capture(cmd, *, out_dir: str | None = None, max_per_kernel: int = 1, max_mb: float = 256.0,
            kernels=(), interpret: bool | None = None, arch: str | None = None, timeout: float | None = None) -> int:
    """``interpret``: run the program under the interpreter (default: when no GPU is visible); ``arch``: the GPU
    the interpreter's CPU stand-in shows the program's host code (default sm_90); ``timeout``: seconds before the
    program is stopped (exit 124, the reproducers written kept)."""
    out = os.path.abspath(out_dir or os.path.join("traces", f"capture-{_stamp()}"))
    if interpret is None:
        interpret = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0") or not gpu_visible()
    if arch is not None and not interpret:
        from tritondbg.errors import UsageError

        raise UsageError("--arch sets the GPU the interpreter's CPU stand-in shows: it does not apply to a compiled "
                         "run (--compiled, or a GPU here): add --interpret")
    if not _resolvable(cmd, "capture"):
        return 127
    os.makedirs(out, exist_ok=True)
    clear_work_files(out)
    earlier = _earlier_captures(out)
    cfg = {"run_dir": out, "features": ["capture"], "max_per_kernel": max_per_kernel, "max_mb": max_mb,
           "kernels": list(kernels), "arch": arch,
           "command": shlex.join(["tritondbg", "capture", *_given(kernels=kernels, arch=arch, out=out_dir,
                                                                   max_per_kernel=(max_per_kernel, 1),
                                                                   max_mb=(max_mb, 256.0)), "--", *cmd]),
           "interpreted": interpret}
    rc = _start(cmd, cfg, interpret=interpret, timeout=timeout)
    entries = read_jsonl(os.path.join(out, "captures.jsonl"))
    summaries = read_summaries(out)
    launches = _merge_counts(summaries, "launches")
    skipped = [line for s in summaries for line in s.get("skipped", [])]
    unsaved = _merge_counts(summaries, "unsaved")  # distinct launches past --max-per-kernel
    doc = {"command": cfg["command"], "exit_status": rc, "folder": out, "captures": entries,
           "launches": launches, "skipped": skipped, "not_saved": unsaved, "pinned_configs": _merge_pinned(summaries),
           "notes": [n for s in summaries for n in s.get("notes", []) if not n.startswith("capture skipped")]}
    # a folder captured into before: its reproducers this run did not replace stay listed, apart
    mine = {e.get("reproducer") for e in entries}
    still = [e for e in earlier if e.get("reproducer") not in mine
             and os.path.exists(os.path.join(out, str(e.get("reproducer", "")).split("::")[0]))]
    if still:
        doc["earlier_captures"] = still
    with open(os.path.join(out, "captures.json"), "w") as f:
        json.dump(doc, f, indent=1)
    clear_work_files(out)
    from tritondbg.program.capture import size

    if not entries and not skipped:  # an empty captures.json says nothing (--kernel matching nothing too)
        if not still:  # (an earlier capture's list stays)
            with contextlib.suppress(OSError):
                os.remove(os.path.join(out, "captures.json"))
        with contextlib.suppress(OSError):
            os.rmdir(out)  # only when empty: a folder the user named may hold other things
    if not entries and not any(launches.values()):
        _err("tritondbg capture: no Triton launch" + (f"; the program {launcher.ended(rc)}" if rc else "")
             + ": nothing captured")
        if rc == 0:
            _launched_nothing("capture", launches, summaries, said=True)
        else:
            _asked_note(summaries)
            _target_note(summaries)
        return rc or 1
    kernels_saved = {e.get("kernel") for e in entries}  # a process that never wrote its counts still saved these
    counted = _launch_count(max(sum(launches.values()), len(entries)), summaries,
                            lost=bool(kernels_saved - set(launches)),
                            of=f" of {len(kernels_saved | set(launches))} kernel(s)")
    _err(f"tritondbg capture: {counted}; " + (f"{len(entries)} reproducer(s), "
                                               f"{size(sum(e.get('bytes', 0) for e in entries))}, in {out}"
                                               if entries else "no reproducer saved"))
    shown = entries if len(entries) <= LISTED_MAX else entries[:LISTED_MAX - 1]  # 1000 lines after a big capture
    for e in shown:
        extra = f"  (could not save: {'; '.join(e['unsaved'])})" if e.get("unsaved") else ""
        if e.get("error"):  # interrupted or raised: its inputs are kept (replay it to see it hang), no outputs
            extra += f"  (the launch did not finish: {e['error'].rstrip(': ')}; no output to compare)"
        test = f" in test {e['test']}" if e.get("test") else ""  # under pytest: which test launched it
        _err(f"  {e['reproducer']}  {e['kernel']}  launched from {e.get('launched_from')}{test}{extra}")
    if len(shown) < len(entries):
        _err(f"  ... and {len(entries) - len(shown)} more reproducer(s): {os.path.join(out, 'captures.json')} "
             "lists them all")
    for line in skipped:
        _err(f"  skipped: {line}")
    if unsaved:
        _err(f"  not saved: {', '.join(f'{n} more distinct launch(es) of {k}' for k, n in sorted(unsaved.items()))}"
             f" (other shapes, dtypes, integer values, grids or configs: --max-per-kernel {max_per_kernel} saved the "
             f"first {max_per_kernel} of each kernel; raise it to save more)")
    if still:
        _err(f"  and {len(still)} reproducer(s) of an earlier capture into this folder (captures.json: "
             "earlier_captures)")
    if entries:
        first = entries[0]["reproducer"].split("::")[0]
        _err(f"  replay one: tritondbg interpret {os.path.join(out, first)}   (any reproducer above; "
             f"`tritondbg ir` takes it too; capture saves, it checks nothing: `interpret` runs the sanitizers, "
             f"on a reproducer or on the whole program with `tritondbg interpret -- CMD`)")
    _err_pinned(doc["pinned_configs"])
    _err_notes(summaries)
    unmatched = _matched_nothing("capture", kernels, launches, entries)  # said whatever the program's status
    if rc != 0:
        _target_note(summaries)
        kept = f"the {len(entries)} reproducer(s) written before are kept" if entries else "no reproducer was written"
        _err(f"tritondbg capture: the program {launcher.ended(rc)}; {kept}")
        return rc
    return 1 if unmatched else rc


def _merge_pinned(summaries) -> dict:
    """kernel -> the config(s) its autotuner was pinned to in the program's processes (interpreted runs)."""
    out: dict[str, list] = {}
    for s in summaries:
        for name, configs in (s.get("pinned") or {}).items():
            for config in configs:
                if config not in out.setdefault(name, []):
                    out[name].append(config)
    return out


def _err_notes(summaries) -> None:
    """Why a torch.compile'd program showed no Triton launch (one line, however many processes said it), and how
    many of its CUDA tensors were made on the CPU."""
    from tritondbg.errors import not_users_file
    from tritondbg.program import cpu_device
    from tritondbg.program.inductor import COMPILE_NOTE

    moved = cpu_device.note(summaries)
    if moved:
        _err(f"  note: {moved}")
    asked = next((s["cuda_asked"] for s in summaries if s.get("cuda_asked")), None)
    if asked and any((s.get("launches") or {}).values() for s in summaries) and \
            not not_users_file(asked.rsplit(":", 1)[0]):  # (none launched: _asked_note says it, stronger)
        _err(f"  note: the program asked torch.cuda.is_available() at {asked} and heard False (no GPU here): what it "
             "guards ran as on a machine without one (tests that skip on it, if any, were skipped: skip on another "
             "condition to check them too)")
    from tritondbg.program.child import INTERPRET_RESET

    for note in dict.fromkeys(n for s in summaries for n in s.get("notes", [])
                              if n.startswith((COMPILE_NOTE, INTERPRET_RESET))):
        _err(f"  note: {note}")
    from tritondbg.program import cuda_version

    version_read = cuda_version.note(summaries)
    if version_read:
        _err(f"  note: {version_read}")
    refused: dict = {}
    for s in summaries:
        for name, (count, why) in (s.get("refused") or {}).items():
            before, first = refused.get(name, (0, why))
            refused[name] = (before + count, first)
    for name, (count, why) in sorted(refused.items()):
        _err(f"  note: {count} launch(es) of {name} refused by the target's compiler, so no program of them ran: "
             f"{why.splitlines()[0][:300]}")
    unjudged = _merge_counts(summaries, "compile_unjudged")  # the GPU compile check's specialisations with no
    if unjudged:                                               # verdict: a check that did not run is no pass
        from tritondbg.interp import gpu_compile

        why: dict = {}
        for s in summaries:
            for name, reason in (s.get("compile_unjudged_why") or {}).items():
                why.setdefault(name, reason)
        _err(f"  note: {gpu_compile.note(unjudged, why)}")
    partial = _merge_counts(summaries, "read_race_capped")
    if partial:
        from tritondbg.interp import race_reads

        _err(f"  note: {race_reads.note(partial)}")


def _err_pinned(pinned: dict) -> None:
    if pinned:
        _err("  autotuned kernels ran one config per autotune key, the first their autotuner would try after its "
             "pruning (no timing on the CPU):")  # one kernel a line (helper-122: mamba's 15 made one of 1429 chars)
        for name, configs in sorted(pinned.items()):
            _err(f"    {name} {' / '.join(configs)}")


def _handled_errors(findings: list, rc: int) -> None:
    """A launch that raised into a program that then exited 0 was handled by the program (``pytest.raises``, a
    ``try`` with a fallback): a warning, not a failed run (exit 1 where the bare interpreter's run exits 0). Its
    line stays, and says so: a fallback can hide a kernel that never ran."""
    if rc != 0:
        return
    for f in findings:
        if f.get("kind") == "kernel_error" and f.get("severity", "error") == "error" and f.get("raised", True):
            f["severity"], f["handled"] = "warning", True  # (a host tensor's launch raised nothing here: no)


def _finding_lines(findings: list) -> list[str]:
    """One line per distinct finding (kind, kernel line, kernel, tensor, call site), the first launch's pid, and
    how many launches had it: a bug in a kernel a loop launches 27 times is one line, not 27."""
    from tritondbg.interp.frames import site_name

    groups: dict[tuple, list] = {}
    for f in findings:
        where = stacks.describe_site(f.get("stack") or ([f["call_site"]] if f.get("call_site") else []))
        key = (f.get("kind"), site_name(str(f.get("file"))), f.get("line"), f.get("kernel"), f.get("tensor"), where)
        group = groups.setdefault(key, [f, set(), [], 0])
        if f.get("severity", "error") != "warning" and group[0].get("severity", "error") == "warning":
            group[0] = f  # an error among warnings of the same line (a race whose values differ only later): told so
        group[1].add((f.get("pid_process"), f.get("launch"), None if f.get("launch") is not None else len(group[1])))
        group[3] += 1
        if f.get("test") and f["test"] not in group[2]:
            group[2].append(f["test"])
    lines = []
    for (kind, file, line, kernel, tensor, where), (first, launches, tests, count) in groups.items():
        n = len(launches)  # launches, not findings: a load and a store of one line are one line here
        times = f" (in {n} launches)" if n > 1 else ""
        if count > n:  # several findings merged (a load and a store, two races): the header counted each
            times = f" ({count} findings in {n} launch{'es' if n > 1 else ''})"
        on = f", tensor {tensor}" if tensor is not None else ""  # a device_assert or a poison names no tensor
        within = ""
        if tests:   # under pytest: the tests that launched it (the first two, and how many more)
            more = f" and {len(tests) - 2} more" if len(tests) > 2 else ""
            within = f"; in test {', '.join(tests[:2])}{more}"
        caught = ("; the program caught the error and went on (--strict fails the run on it)"
                  if first.get("handled") else "")
        label = f"warning: {kind}" if first.get("severity", "error") == "warning" else kind
        pid = f" pid {tuple(first['pid'])}" if first.get("pid") else ""
        why = ""  # an error's own words: the summary line was all a reader of the log's tail saw (helper-50:
        # under pytest the inline line went to the test's captured output, shown for failing tests only (helper-135:
        # "race: ...:285 ... (3 findings in 2 launches)" and nothing to say what the race was): every kind's words
        if (kind in ("kernel_error", "device_assert") or tests) and first.get("message"):  # "Block pointers have been removed")
            text = str(first["message"]).splitlines()[0]
            why = f": {text[:400]}{'...' if len(text) > 400 else ''}"  # 200 cut the forgotten-return hint
        lines.append(f"  {label}: {file}:{line} in {kernel}{pid}{on}{why}; "
                     f"launched from {where}{times}{within}{caught}")
    return lines


def _summary_table(launches: dict, checked: dict, per_kernel: dict, warned: dict | None = None) -> list[str]:
    """Per kernel: launches, launches checked, findings (errors: what fails the run) and, where any kernel has
    some, warnings (helper-154: a kernel with only warnings read 0 beside "8 warning(s)" on the summary line)."""
    names = sorted(set(launches) | set(per_kernel) | set(warned or ()))
    if not names:
        return ["  no Triton launch"]
    width = max(len(n) for n in names + ["kernel"]) + 2
    lines = [f"  {'kernel':<{width}}launches  checked  findings" + ("  warnings" if warned else "")]
    for n in names:
        lines.append(f"  {n:<{width}}{launches.get(n, 0):>8}  {checked.get(n, 0):>7}  {per_kernel.get(n, 0):>8}"
                     + (f"  {warned.get(n, 0):>8}" if warned else ""))
    return lines


def interpret(cmd, *, json_path: str | None = None, kernels=(), capture_on_finding: bool = False,
              sanitize: bool = True, out_dir: str | None = None, arch: str | None = None,
              strict: bool = False, timeout: float | None = None) -> int:
    if not _resolvable(cmd, "interpret"):
        return 127
    keep = capture_on_finding or bool(out_dir)
    if keep:
        run_dir = os.path.abspath(out_dir or os.path.join("traces", f"interpret-{_stamp()}"))
        os.makedirs(run_dir, exist_ok=True)
        clear_work_files(run_dir, extra=("findings.jsonl",))
    else:
        run_dir = tempfile.mkdtemp(prefix="tritondbg-program-")
    cfg = {"run_dir": run_dir, "features": ["interpret"], "kernels": list(kernels), "sanitize": sanitize,
           "capture_on_finding": capture_on_finding, "command": "tritondbg interpret -- " + shlex.join(cmd),
           "arch": arch, "owner": os.getpid(), "temporary": not keep}
    try:
        rc = _start(cmd, cfg, interpret=True, timeout=timeout)
        findings = read_jsonl(os.path.join(run_dir, "findings.jsonl"))
        summaries = read_summaries(run_dir)
        captures = read_jsonl(os.path.join(run_dir, "captures.jsonl"))
    finally:
        if not keep:
            _remove(run_dir)
        else:   # findings.jsonl stays: the findings, one JSON line each (as --json lists them)
            clear_work_files(run_dir)
    launches = _merge_counts(summaries, "launches")
    checked = _merge_counts(summaries, "checked")
    if not strict:
        _handled_errors(findings, rc)
    per_kernel: dict[str, int] = {}  # the table's findings: what fails the run; its warnings column, the rest
    per_kernel_warned: dict[str, int] = {}
    errors = [f for f in findings if f.get("severity", "error") == "error"]
    for f in findings:
        counts = per_kernel if f.get("severity", "error") == "error" else per_kernel_warned
        counts[f.get("kernel", "?")] = counts.get(f.get("kernel", "?"), 0) + 1
    warned = len(findings) - len(errors)
    pinned = _merge_pinned(summaries)
    if json_path:
        doc = {"command": cfg["command"], "exit_status": rc, "launches": launches, "findings": findings,
               "captures": captures, "pinned_configs": pinned,
               "compile_unjudged": _merge_counts(summaries, "compile_unjudged"),
               "read_race_capped": _merge_counts(summaries, "read_race_capped")}
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1, default=str)
    _err(f"tritondbg interpret: {_launch_count(sum(launches.values()), summaries)}, {len(errors)} finding(s)"
         + (f", {warned} warning(s)" if warned else "")
         + ("" if sanitize else " (--no-sanitize: only the memory guard checked them)"))
    for line in _summary_table(launches, checked, per_kernel, per_kernel_warned):
        _err(line)
    _err_pinned(pinned)
    _err_notes(summaries)
    tf32 = list(dict.fromkeys(site for s in summaries for site in s.get("tf32_dots", [])))
    if tf32:
        from tritondbg.interp.dots import tf32_note

        _err(f"  note: {tf32_note(tf32)}")
    for line in _finding_lines(findings):
        _err(line)
    if captures:
        _err(f"  {len(captures)} reproducer(s) in {run_dir}: " + ", ".join(c["reproducer"] for c in captures))
        with open(os.path.join(run_dir, "captures.json"), "w") as f:
            json.dump({"command": cfg["command"], "captures": captures}, f, indent=1)
    unmatched = _matched_nothing("interpret", kernels, launches, sum(checked.values()))  # whatever the status
    if rc != 0:
        if not any(launches.values()):
            _asked_note(summaries)
        _target_note(summaries)
        _err(f"tritondbg interpret: the program {launcher.ended(rc)}")
        return rc
    if unmatched or _launched_nothing("interpret", launches, summaries):
        return 1
    if strict and warned and not errors:
        _err(f"tritondbg interpret: --strict: {warned} warning(s) fail the run")
        return 1
    return 1 if errors else 0


def _remove(run_dir: str) -> None:
    """Remove a temporary run folder that a program still running may write its summary into (one that outlived
    a signalled tritondbg: its summary appeared mid-rmtree and the folder stayed in /tmp). Renamed first: the
    program writes by the folder's name, which then names nothing."""
    gone = run_dir + ".gone"
    try:
        os.rename(run_dir, gone)
    except OSError:
        gone = run_dir
    shutil.rmtree(gone, ignore_errors=True)


def _given(*, kernels=(), arch=None, out=None, **numbers) -> list[str]:
    """The options a program command was given, as its record's command line shows them (``numbers``: name ->
    (value, default), shown when not the default): `capture --arch sm_100 -- ...` was recorded as `capture -- ...`
    and its reproducers' `ir` compiled for sm_90."""
    opts = [x for k in kernels for x in ("--kernel", k)]
    opts += ["--arch", arch] if arch else []
    opts += ["--out", out] if out else []
    for name, (value, default) in numbers.items():
        if value != default:
            opts += [f"--{name.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
    return opts


def _launched_nothing(command: str, launches: dict, summaries, said: bool = False) -> bool:
    """The program ended well and launched no Triton kernel: nothing was checked or captured, which is no pass
    (a test suite whose tests all skip without CUDA exited 0 looking clean). Says so, with where the program asked
    torch.cuda.is_available() (False here: tests skipped on it, a library took its torch path)."""
    if any(launches.values()):
        return False
    if not said:
        _err(f"tritondbg {command}: the program launched no Triton kernel: nothing was "
             f"{'checked' if command == 'interpret' else 'captured'}")
    _asked_note(summaries)
    return True


def _target_note(summaries) -> None:
    """A failed program whose host code read the stand-in's default target (helper-157: aiter read sm_90 and looked
    for a config named after it; --arch gfx942 was forgotten, and nothing said so)."""
    read = next((s["target_read"] for s in summaries if s.get("target_read")), None)
    if read:
        from tritondbg.ir.targets import DEFAULT_ARCH

        _err(f"  note: host code read the GPU target at {read} and heard {DEFAULT_ARCH}, the stand-in's default: a "
             "program written for another GPU takes --arch (e.g. --arch gfx942 for an AMD one, --arch sm_80)")


def _asked_note(summaries) -> None:
    """Where the program asked torch.cuda.is_available() and heard False, for a run that launched nothing: said
    whether the program ended well or not (helper-65: DeepSpeed turns its Triton ops off on it, and the program
    then failed on the None it left; the note was only said after a clean exit)."""
    asked = next((s["cuda_asked"] for s in summaries if s.get("cuda_asked")), None)
    if asked:
        _err(f"  note: the program asked torch.cuda.is_available() (at {asked}) and heard False, as on any "
             "machine without a GPU: tests that skip on it (skipif(not torch.cuda.is_available())) and libraries "
             "that take a torch path on it launch nothing; skip on another condition to run them here")


def _unmatched_patterns(command: str, patterns, launches: dict) -> None:
    """A --kernel pattern that matched none of the launched kernels while others did: a note (a typo in a list)."""
    from fnmatch import fnmatchcase

    if not patterns or not launches:
        return
    for pat in patterns:  # (a pattern with a dot may name a qualified name, which the counts do not keep)
        if "." not in pat and not any(fnmatchcase(name, pat) for name in launches):
            _err(f"  note: --kernel {pat} matched none of the kernels the program launched "
                 f"({', '.join(sorted(launches))})")


def _matched_nothing(command: str, patterns, launches: dict, done) -> bool:
    """``--kernel`` given, kernels launched, none of them checked / captured: say so (a filter with a typo made a
    clean-looking run that checked nothing) and fail."""
    if done:
        _unmatched_patterns(command, patterns, launches)
    if not patterns or done or not launches:
        return False
    what = "checked" if command == "interpret" else "captured"
    _err(f"tritondbg {command}: --kernel {' '.join(patterns)} matched none of the {len(launches)} kernel(s) the "
         f"program launched ({', '.join(sorted(launches))}): nothing was {what}")
    return True
