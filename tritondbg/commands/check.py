"""`tritondbg check`: quality gates with an exit status for CI."""
from __future__ import annotations

import os
import sys

import click

from tritondbg import options
from tritondbg.commands.program import CheckNoProgramForm
from tritondbg.check.outcome import TIMEOUT_PER_CASE


def run_check(targets: tuple[str, ...], *, all_: bool = False, gates: str | None = None, device: str | None = None,
              junit: str | None = None, json_path: str | None = None, workers: int | None = None,
              arch: str | None = None, baseline: str = "tritondbg-baseline.json", update_baseline: bool = False,
              case: str | None = None, timeout: float | None = None, strict: bool = False,
              out_dir: str | None = None) -> int:
    """Run the gates; 0 when every item passes (or is skipped with a reason), 1 when one fails or errs (crashed,
    timed out, did not run), 130 when interrupted (143 by SIGTERM). The table, --junit and --json list every
    kernel x gate."""
    from tritondbg import deps
    from tritondbg.check import session
    from tritondbg.errors import UsageError

    if workers is not None and workers < 1:
        raise UsageError(f"-n/--workers must be at least 1, got {workers}")
    if timeout is not None and timeout < 0:
        raise UsageError(f"--timeout must be a number of seconds >= 0 (0: none), got {timeout:g}")
    if update_baseline:   # written after every gate ran: say now that it cannot be
        options.check_output_path("--baseline", baseline, folder=False, purpose="--update-baseline writes it")
    from tritondbg.check.perf import check_baseline_file

    check_baseline_file(baseline)  # a corrupt file was read as an empty one: every gate passed against nothing
    if arch is not None:  # a bad name was the resources gate's FAIL ("could not compile: UsageError ..."), exit 1
        from tritondbg.ir.targets import check_supported, parse_arch

        check_supported(parse_arch(arch))
    chosen = session.resolve_gates(gates)
    names = session.resolve_targets(targets, all_)
    items = session.rough_plan(names, chosen)
    with session.stop_signals():  # SIGTERM (a CI cancel) winds down as Ctrl-C does: files written, 143
        record = _run(session, deps, names, chosen, items, device=device, workers=workers, arch=arch,
                      baseline=baseline, update_baseline=update_baseline, case=case, timeout=timeout, strict=strict,
                      out_dir=out_dir)
        _write(record, json_path, junit)
    return session.exit_status(record)


def _run(session, deps, names, chosen, items, *, device, workers, arch, baseline, update_baseline, case, timeout,
         strict, out_dir=None):
    from tritondbg.errors import UsageError

    noted = os.environ.get("TRITONDBG_NOTED")
    try:
        deps.require(["pytest", "xdist"], "`tritondbg check`")
        if device is None:
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise UsageError("--device cuda needs a CUDA GPU and none is visible")
        os.environ["TRITONDBG_NOTED"] = "*"  # a reproducer's load notes: its gates' reasons say the same, once
        items = session.plan(names, chosen, device=device, case=case, timeout=timeout)
        record = session.check(items, device=device, workers=workers, arch=arch, baseline=baseline,
                               update_baseline=update_baseline, case=case, timeout=timeout, strict=strict,
                               out_dir=out_dir)
    except KeyboardInterrupt:  # Ctrl-C / a CI cancel while starting: every item says so
        record = session.interrupted_record(items, device=device or _known_device(), workers=workers)
    finally:  # (for this run's workers only: a later command in this process says its notes again)
        if noted is None:
            os.environ.pop("TRITONDBG_NOTED", None)
        else:
            os.environ["TRITONDBG_NOTED"] = noted
    return record


def _known_device() -> str:
    """The default --device when torch was imported before the interrupt (a GPU-only gate skips on "cpu"), else
    "?" (torch is not imported to find out)."""
    torch = sys.modules.get("torch")
    try:
        return "?" if torch is None else ("cuda" if torch.cuda.is_available() else "cpu")
    except Exception:  # noqa: BLE001 - a torch half imported when the interrupt came
        return "?"


def _write(record, json_path: str | None, junit: str | None) -> None:
    from tritondbg.check import session
    from tritondbg.check.junit import write_junit
    from tritondbg.render.gates import print_gates

    if json_path:
        record.save(json_path)
    if junit:
        write_junit(junit, session.outcomes_of(record))
    print_gates(record)


@click.command("check", cls=CheckNoProgramForm)
@click.argument("targets", nargs=-1, metavar="[KERNEL ... | path/to/cases.py[::name]]")
@click.option("--all", "all_", is_flag=True, help="Every bundled kernel.")
@click.option("--gates", metavar="LIST", help="Comma-separated: correctness, all-configs, sanitize, resources, "
              "perf, agreement, determinism (default: all; GPU-only gates skip on a CPU).")
@click.option("--case", "case", metavar="NAME", default=None,
              help="Only these cases (a name, a comma-separated list or a glob, of each scenario that has them; "
                   "default: every case that runs on the device).")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default=None,
              help="cpu: interpreter; cuda: compiled on the GPU (default: cuda when available).")
@options.out_file_option("--junit", purpose="the JUnit XML goes there", help="Write JUnit XML here.")
@options.out_file_option("--json", "json_path", purpose="the run record goes there", makes_folder=True,
                         help="Write the run record (JSON) here.")
@click.option("-n", "--workers", type=int, default=None, help="Worker processes (default: 2 on a CPU, one per GPU).")
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help=f"Per kernel x gate item [default: {TIMEOUT_PER_CASE:g} s per case the scenario runs on the device; "
                   "0: none]. An item past it is an error "
                   "naming the kernel, case and (interpreter) program id and line it was stuck in; the run goes on.")
@click.option("--arch", default=None, help="GPU of the resources gate and, on the CPU, of the interpreter's "
              "stand-in (default: local GPU, a reproducer's captured GPU, else sm_90).")
@click.option("--baseline", default="tritondbg-baseline.json", show_default=True, help="Perf baseline file.")
@click.option("--update-baseline", is_flag=True, help="Rewrite the perf baseline with this run's times.")
@options.out_dir_option("--out", "out_dir", purpose="a failed compile's full log goes there",
                        help="Folder for what check writes besides --json / --junit: a failed compile's full log "
                             "(the resources gate; default: the temporary folder).")
@click.option("--strict", is_flag=True, help="The sanitize gate fails on a warning too (an unwritten band of an "
              "output, a NaN the kernel's own math makes on padding), as `interpret --strict` does.")
def check_cmd(targets, all_, gates, case, device, junit, json_path, workers, timeout, arch, baseline,
              update_baseline, out_dir, strict):
    """Quality gates for CI. Every kernel x gate ends as pass, FAIL, skipped (with why) or error (crashed,
    timed out, did not run: with the command that reruns it). A FILE with several scenarios checks them all.

    Exit status: 0 when every item passes or is skipped, 1 when one fails or errs, 2 on bad usage,
    130 when interrupted, 143 when terminated (SIGTERM: a CI cancel; the table, --junit and --json then say which
    items did not finish)."""
    if junit and json_path and os.path.abspath(junit) == os.path.abspath(json_path):  # one overwrote the other
        from tritondbg.errors import UsageError

        raise UsageError(f"--json and --junit are the same file ({json_path}); give each its own")
    sys.exit(run_check(targets, all_=all_, gates=gates, device=device, junit=junit, json_path=json_path,
                       workers=workers, arch=arch, baseline=baseline, update_baseline=update_baseline, case=case,
                       timeout=timeout, strict=strict, out_dir=out_dir))
