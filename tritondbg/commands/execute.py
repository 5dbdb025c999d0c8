"""`tritondbg interpret` and `tritondbg run`: run a scenario's cases, print the verdict, save the record."""
from __future__ import annotations

import datetime as _dt
import os
import re
import sys
import time
from pathlib import Path

import click

from tritondbg import options, settings
from tritondbg.commands.program import NoProgramForm


def run_folder(out_dir: str | None, mode: str, target: str) -> Path:
    """A new folder for this run under the output directory: <stamp>-<mode>-<kernel>-<pid>."""
    base = Path(out_dir or settings.get().out_dir)
    file, _, name = target.partition("::")
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(file).stem + (f"-{name}" if name else ""))
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return base / f"{stamp}-{mode}-{stem}-{os.getpid()}"


def execute(target: str, *, mode: str, case: str | None = None, dtype: str | None = None,
            config: str | None = None, seed: int = 0, as_json: bool = False, out_dir: str | None = None,
            sanitize: bool = True, pid: str | None = None, trace: bool = False, watch=(), breaks=(),
            all_configs: bool = False, arch: str | None = None, timeout: float | None = None) -> int:
    """Run, print, save; returns the exit status (0 all match and no finding, 1 otherwise, 124 timed out, 130
    interrupted by SIGINT, 143 by SIGTERM).

    Interpreter runs carry the instruments: error/print attribution, sanitizers (``sanitize``), the stepper
    (``pid``/``trace``/``watch``/``breaks``), and ``all_configs`` runs every autotune config; ``arch`` is the GPU
    that the CPU stand-in reports to host code (default sm_90).

    Each case's block is printed as the case finishes (not with ``as_json``: stdout is then the record alone). A
    run cut short (SIGINT, SIGTERM, ``timeout``) keeps the cases that finished: the record is written, the case
    that was running and those not started are errors saying why, the summary line is printed."""
    from tritondbg.check import session  # `check`'s stop: SIGTERM (a CI cancel) winds down as Ctrl-C does

    with session.stop_signals():
        try:
            return _execute(target, mode=mode, case=case, dtype=dtype, config=config, seed=seed, as_json=as_json,
                            out_dir=out_dir, sanitize=sanitize, pid=pid, trace=trace, watch=watch, breaks=breaks,
                            all_configs=all_configs, arch=arch, timeout=timeout)
        except KeyboardInterrupt:  # before any case ran (imports, the scenario loading) or an --all-configs sweep
            by = _stop_signal()
            click.echo(f"interrupted ({by})", err=True)
            return _EXIT[by]


_EXIT = {"SIGINT": 130, "SIGTERM": 143, "timeout": 124}


def _stop_signal() -> str:
    """SIGINT or SIGTERM: which one raised the KeyboardInterrupt (check/session.py's ``stop_signals`` notes it)."""
    from tritondbg.check import session

    return session.stopped_by()


def _execute(target: str, *, mode: str, case, dtype, config, seed, as_json, out_dir, sanitize, pid, trace, watch,
             breaks, all_configs, arch, timeout) -> int:
    from tritondbg import runner, watchdog
    from tritondbg.errors import UsageError
    from tritondbg.record import record_path

    save = settings.get().save_records or bool(out_dir)
    folder = run_folder(out_dir, mode, target) if save else None
    command = f"{'interpret' if mode == 'interpret' else 'run'} {target}"
    if arch is None and mode == "interpret":
        arch = _captured_arch(target, as_json)
    if arch is not None:
        from tritondbg.ir.targets import check_supported, parse_arch

        the_arch = parse_arch(arch)   # a bad name is bad usage (exit 2) before anything runs
        # the mode first: asking Triton about an AMD target imports triton, and a triton imported before
        # TRITON_INTERPRET is set made tl.zeros and every jit helper compiled-mode functions ("Cannot call
        # @triton.jit'd outside of the scope of a kernel" under `interpret --arch gfx942`); the target itself
        # only once it is known to be good (a refused one must not stay the stand-in's)
        runner.set_mode(mode)
        check_supported(the_arch)      # as `ir` does: sm_999 ran, and host code saw capability (99, 9)
        arch = the_arch.name
    instruments = []
    # "still running" lines on a long case; none while the user steps or sits at a breakpoint (pdb)
    beat = 0 if (breaks or trace or watch) else None
    if mode == "interpret":
        from tritondbg.interp import instruments as build
        from tritondbg.interp import shims

        instruments = build.build(target, sanitize=sanitize, pid=pid, trace=trace, watch=watch, breaks=breaks,
                                  out_dir=record_path(folder).parent if folder else None)  # beside the record
        # with --json stdout is the record: kernel prints go to stderr
        shims.set_print_stream("stderr" if as_json else None)
    if all_configs and config:
        raise UsageError("--all-configs runs every config: leave out --config")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds, got {timeout:g}")
    if all_configs:
        from functools import partial

        from tritondbg import loader
        from tritondbg.configs import nothing_to_sweep
        from tritondbg.discover import NoAutotunedKernel
        from tritondbg.interp.sweep import run_all_configs
        from tritondbg.render.console import print_case

        runner.set_mode(mode, arch)  # the deadline is for running the kernel: imports come before it
        scenario = loader.load(target)
        why = nothing_to_sweep(scenario)  # known before any case runs: no sweep at all
        if why is None:
            show = None if as_json else partial(print_case, None)  # each config's block as it finishes
            try:
                with watchdog.deadline(timeout), watchdog.heartbeat(first=beat):
                    record = run_all_configs(target, cases=case, dtype=dtype, seed=seed, on_result=show,
                                             command=command + " --all-configs", instruments=instruments, arch=arch)
            except NoAutotunedKernel:  # the sweep ran the cases: none launched an autotuned kernel (a --case typo
                why = ""              # is another UsageError, raised)
            except (KeyboardInterrupt, watchdog.Timeout) as exc:
                by = "timeout" if isinstance(exc, watchdog.Timeout) else _stop_signal()
                record = getattr(exc, "record", None)
                if record is not None:  # the configs that ran are kept: in the record, under the summary
                    record.extra.update(interrupted=True, interrupted_by=by)
                    _finish(record, mode=mode, pid=pid, sanitize=sanitize, folder=folder, as_json=as_json,
                            unfinished=[])
                click.echo(f"error: {exc}" if by == "timeout" else f"interrupted ({by})", err=True)
                return _EXIT[by]
            else:
                return _finish(record, mode=mode, pid=pid, sanitize=sanitize, folder=folder, as_json=as_json,
                               unfinished=None if as_json else [])
        # one config (as `ir --all-configs` takes it): the plain run below
        click.echo(f"note: --all-configs: {scenario.name} launches no autotuned kernel{f' ({why})' if why else ''}: "
                   "its one config, run as without --all-configs", err=True)
    # planned (torch, Triton and the scenario imported, every name checked) before the deadline starts
    run = runner.Run(target, mode=mode, cases=case, dtype=dtype, config=config, seed=seed, command=command,
                     instruments=instruments, arch=arch)
    show = None
    if not as_json:  # with --json stdout is the record alone
        from functools import partial

        from tritondbg.render.console import print_case

        show = partial(print_case, None)

    if folder is not None:  # the record so far after each case: a crash (a segfault in C) ends where no handler runs
        shown = show

        def show(result) -> None:
            if shown is not None:
                shown(result)
            partial_record = run.record
            partial_record.extra["incomplete"] = (f"{len(partial_record.results)} of {len(run.planned)} case(s) "
                                                  "finished; the run had not ended")
            try:
                partial_record.save(record_path(folder))
            except OSError:  # the final save says so, if it fails too
                pass
            finally:
                partial_record.extra.pop("incomplete", None)

    def on_stuck(message: str) -> None:  # the watchdog's thread: the main thread is stuck in C; exit 124 follows
        unfinished = run.stop("timeout", f"the run timed out (--timeout {timeout:g})", running=message)
        _finish(run.record, mode=mode, pid=pid, sanitize=sanitize, folder=folder, as_json=as_json,
                unfinished=unfinished)
        click.echo(f"error: {message}", err=True)

    try:
        with watchdog.deadline(timeout, on_stuck=on_stuck), watchdog.heartbeat(first=beat):
            record = run.run(show)
    except KeyboardInterrupt as exc:
        by = _stop_signal()
        where = _kernel_line_of(exc) if mode == "interpret" else ""
        running = None
        if where:
            running = f"interrupted ({by}) {where}, after {time.perf_counter() - run.started_case():.1f} s"
        unfinished = run.stop(by, f"interrupted ({by})", running=running)
        done = len(run.record.results) - len(unfinished)
        line = f"interrupted ({by}){' ' + where if where else ''}: {done} of {len(run.record.results)} case(s) finished"
    except watchdog.Timeout as exc:
        by = "timeout"
        unfinished = run.stop(by, f"the run timed out (--timeout {timeout:g})", running=str(exc))
        line = f"error: {exc}"
    else:
        return _finish(record, mode=mode, pid=pid, sanitize=sanitize, folder=folder, as_json=as_json,
                       unfinished=[])  # every block was printed as its case finished
    _finish(run.record, mode=mode, pid=pid, sanitize=sanitize, folder=folder, as_json=as_json,
            unfinished=unfinished)
    click.echo(line, err=True)
    return _EXIT[by]


def _finish(record, *, mode: str, pid: str | None, sanitize: bool, folder: Path | None, as_json: bool,
            unfinished: list | None = None) -> int:
    """Complete the record, save it, print it: with ``as_json`` the whole record; else the blocks not printed
    yet (``unfinished``; None: every case) and the summary line. Returns 0 when it passed, else 1."""
    from tritondbg.record import record_path

    if mode == "interpret":
        from tritondbg import standin
        from tritondbg.interp import gpu_compile

        record.extra["stand_in_arch"] = standin.current().name if standin.current() else None
        unjudged = gpu_compile.note()  # a check that did not run is never a pass: said, though no finding
        if unjudged:
            record.extra["compile_unjudged"] = gpu_compile.counts()
            if not as_json:
                click.echo(f"note: {unjudged}", err=True)
        from tritondbg.interp import race_reads

        partial = race_reads.note()  # loads past the read race record's bound: that check ran on part of them
        if partial:
            record.extra["read_race_capped"] = dict(race_reads.capped)
            if not as_json:
                click.echo(f"note: {partial}", err=True)
    if not record.extra.get("interrupted"):
        _check_pid_reached(record, pid)
        _check_watches_evaluated(record)
    record.extra["sanitizers"] = mode == "interpret" and sanitize
    path = None
    if folder is not None:
        path = record.save(record_path(folder))
        record.extra["record_path"] = str(path)
    if as_json:
        print(record.to_json(), flush=True)
    elif unfinished is None:
        from tritondbg.render.console import print_record

        print_record(record, path)
    else:
        from tritondbg.render.console import print_case, print_summary, print_sweep

        for r in unfinished:
            print_case(None, r)
        print_sweep(None, record)
        print_summary(None, record, path)
    return 0 if record.passed else 1


def _kernel_line_of(exc: BaseException) -> str:
    """``in K at file.py:LINE, pid (x, y, z)``: the kernel line the interpreter was running when Ctrl-C / SIGTERM
    landed (a hung kernel's spin loop), as program mode says it; "" when it landed outside kernel code."""
    from tritondbg.interp import frames, hooks

    try:
        where = frames.traceback_site(exc)
        pid = hooks.current_pid()
    except Exception:  # noqa: BLE001 - the plain line still says what happened
        return ""
    if where is None:  # host code (the launch wrapper, the inputs, the reference): its innermost line of the
        return _host_line_of(exc)  # user's own code, so a slow wrapper is not taken for a hung kernel (helper-51)
    return f"in {where[2]} at {frames.site_name(where[0])}:{where[1]}" + (f", pid {pid}" if pid is not None else "")


def _host_line_of(exc: BaseException) -> str:
    """``in FUNCTION at file.py:LINE, outside kernel code``: the innermost line of the user's own code in the
    interrupt's traceback, or ""."""
    from tritondbg.interp import frames
    from tritondbg.errors import not_users_file

    tb, found = exc.__traceback__, None
    while tb is not None:
        if not not_users_file(tb.tb_frame.f_code.co_filename):
            found = tb
        tb = tb.tb_next
    if found is None:
        return ""
    code = found.tb_frame.f_code
    return f"in {code.co_name} at {frames.site_name(code.co_filename)}:{found.tb_lineno}, outside kernel code"


def _check_pid_reached(record, pid: str | None) -> None:
    """A --pid outside every launch's grid is bad usage (exit 2), said after the run that showed the grid."""
    from tritondbg.errors import UsageError

    notes = [r.extra.get("trace_note") for r in record.results if "trace_pid" in r.extra]
    if pid is not None and notes and all(notes):
        raise UsageError(f"--pid {pid}: {notes[0]}")


def _check_watches_evaluated(record) -> None:
    """A --watch expression that showed no value at any traced line of any case (an undefined name, an error at
    every line) is bad usage (exit 2), as a --pid outside the grid is; one that worked in some case is a note."""
    from tritondbg.errors import UsageError

    traced = [r for r in record.results if "trace_pid" in r.extra and not r.extra.get("trace_note")]
    nevers = [r.extra.get("watch_never") or {} for r in traced]
    if not traced or not all(nevers):
        return
    failed = [w for w in nevers[0] if all(w in n for n in nevers)]
    if failed:
        raise UsageError(f"--watch {failed[0]!r}: {nevers[0][failed[0]]}")


def _captured_arch(target: str, quiet: bool) -> str | None:
    """A reproducer captured for another GPU than the stand-in's default (``capture --arch gfx942``): replayed for
    that GPU, as `ir` and `check`'s compile gate do (helper-157: aiter's fp8 e4m3fnuz GEMM replayed as sm_90 and
    failed "type fp8e4b8 not supported in this architecture"); None for any other target."""
    from tritondbg.ir.targets import DEFAULT_ARCH
    from tritondbg.program.replay import recorded_arch

    captured = recorded_arch(target)
    if captured is None or captured == DEFAULT_ARCH:
        return None
    if not quiet:
        click.echo(f"note: the stand-in GPU is {captured}, the one this reproducer was captured for (--arch to "
                   "choose another)", err=True)
    return captured


def _interpret_options(fn):
    """The interpreter-only options of `tritondbg interpret`."""
    fn = click.option("--arch", "arch", metavar="TARGET", default=None,
                      help="GPU that host code sees through the CPU stand-in (driver target, device properties, "
                           "torch.cuda capability) [default: sm_90]; e.g. sm_80, sm_100, gfx942.")(fn)
    fn = click.option("--all-configs", "all_configs", is_flag=True,
                      help="Run every config of each autotuned kernel; report the ones that disagree.")(fn)
    fn = click.option("--break", "breaks", metavar="[FILE:]LINE", multiple=True,
                      help="Stop the --pid program at this kernel line in pdb (`show NAME` prints a block). "
                           "Repeatable.")(fn)
    fn = click.option("--watch", "watch", metavar="EXPR", multiple=True,
                      help="Evaluate EXPR in the kernel's frame at every line of the --pid program. Repeatable.")(fn)
    fn = click.option("--trace", is_flag=True,
                      help="Print a step log of the --pid program: each kernel line and the values it assigns "
                           "(also written as JSON beside the run record).")(fn)
    fn = click.option("--pid", "pid", metavar="X[,Y[,Z]]", default=None,
                      help="Program instance to trace/watch/break in [default: 0,0,0].")(fn)
    fn = click.option("--sanitize/--no-sanitize", "sanitize", default=True, show_default=True,
                      help="Out-of-bounds, race, NaN/Inf, masked-lane (poison) and padded-reduction checks.")(fn)
    return fn


def _timeout_option(fn):
    return click.option("--timeout", type=float, default=None, metavar="SECONDS",
                        help="Stop after SECONDS: the cases that finished are kept (printed, and in the record); "
                             "one line naming the kernel, case and (interpreter) the program id and kernel line it "
                             "was stuck in; exit 124. [default: none]")(fn)


def _with_program_form(**kw):
    """`tritondbg interpret [OPTIONS] -- CMD`: the program form (tritondbg/commands/program.py)."""
    from tritondbg.commands.program import WithProgramForm

    return click.command("interpret", cls=WithProgramForm, **kw)


@_with_program_form()
@options.kernel
@options.case
@options.dtype
@options.config
@options.seed
@options.as_json
@options.out
@_interpret_options
@_timeout_option
def interpret_cmd(kernel, case, dtype, config, seed, as_json, out_dir, sanitize, pid, trace, watch, breaks,
                  all_configs, arch, timeout):
    """Run KERNEL under the Triton interpreter on the CPU and compare it with its torch reference.

    Sanitizers are on: an out-of-bounds access, a race between programs, undefined masked lanes reaching an
    output, padding lanes that change a reduction, or the first NaN/Inf behind a non-finite output is a
    finding (kernel file:line, pid, tensor, offsets). Exit status: 0 when every output matches and there is
    no finding, 1 otherwise (mismatch, finding, kernel error), 2 on bad usage. Each case prints as it finishes;
    Ctrl-C (exit 130), SIGTERM (143) or --timeout (124) keep the cases that finished, in the output and the record.

    \b
    Program form: tritondbg interpret [--json FILE] [--kernel NAME] [--capture-on-finding] -- CMD [ARGS...]
    runs a whole program (python script.py, python -m pytest ...) under the interpreter, sanitizers on every
    launch; exit status: the program's failure, else 1 with a finding or no Triton launch, else 0 (its options:
    `tritondbg interpret --help --`).
    """
    _report_crashes()
    sys.exit(execute(kernel, mode="interpret", case=case, dtype=dtype, config=config, seed=seed,
                     as_json=as_json, out_dir=out_dir, sanitize=sanitize, pid=pid, trace=trace, watch=watch,
                     breaks=breaks, all_configs=all_configs, arch=arch, timeout=timeout))


@click.command("run", cls=NoProgramForm)
@options.kernel
@options.case
@options.dtype
@options.config
@options.seed
@options.as_json
@options.out
@_timeout_option
def run_cmd(kernel, case, dtype, config, seed, as_json, out_dir, timeout):
    """Run KERNEL compiled on the local GPU (autotuned unless --config) and compare it with its reference."""
    _report_crashes()
    sys.exit(execute(kernel, mode="compiled", case=case, dtype=dtype, config=config, seed=seed,
                     as_json=as_json, out_dir=out_dir, timeout=timeout))


def _report_crashes() -> None:
    """A crash of the process itself (a segfault in a launch wrapper's C call, a driver fault) prints Python's
    stack (faulthandler: the innermost frame is the line to look at) instead of ending with no word; `check`
    runs its items in workers and reports such a crash as the item's error."""
    import faulthandler

    try:
        faulthandler.enable(all_threads=False)
    except (AttributeError, OSError, ValueError):  # a stderr without a file descriptor (click's CliRunner)
        pass
