"""`tritondbg profile`: time and trace kernels, keep every autotune decision, export for TensorBoard."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from tritondbg import options


def _progress(line: str) -> None:
    """One line per profiled case, on stderr (stdout stays the summary, or the JSON)."""
    print(line, file=sys.stderr, flush=True)


def profile_kernels(kernels=(), *, all_kernels: bool = False, case: str | None = None, dtype: str | None = None,
                    iters: int | None = None, warmup: int | None = None, out_dir: str | None = None,
                    config: str | None = None, seed: int = 0, cuda_graph: bool = False,
                    peak_source: str = "measured", force_interpret: bool = False, as_json: bool = False) -> int:
    """Profile, print the summary (or JSON); returns the exit status (0 every output matched, 1 otherwise)."""
    from tritondbg.profile import pipeline, summary

    command = "profile " + " ".join([*kernels] + (["--all"] if all_kernels else []))
    record = pipeline.profile(kernels, all_kernels=all_kernels, case=case, dtype=dtype, iters=iters,
                              warmup=warmup, out_dir=out_dir, config=config, seed=seed, cuda_graph=cuda_graph,
                              peak_source=peak_source, force_interpret=force_interpret, command=command.strip(),
                              progress=_progress)
    info = record.extra["profile"]
    if as_json:
        print(json.dumps({
            "run_dir": info["run_dir"], "record": record.extra.get("record_path"),
            "report": str(Path(info["run_dir"]) / info["report"]), "mode": info["mode"],
            "timing": info["timing"], "note": info["note"], "peaks": info["peaks"],
            "summary": summary.rows(record),
            "autotune": [{"scenario": r.kernel, "case": r.case, "dtype": r.dtype, **d}
                         for r in record.results for d in r.extra.get("profile", {}).get("autotune", [])],
            "passed": record.passed,
        }, indent=2, default=str))
    else:
        from tritondbg.profile.console import print_profile

        print_profile(record)
    return 0 if record.passed else 1


def profile_program_cmd_fn(cmd, *, out_dir: str | None = None, skip: int = 0, active: int | None = None,
                           interpret: bool | None = None, json_path: str | None = None,
                           timeout: float | None = None) -> int:
    """Profile a whole program; prints the per-kernel table (and writes it as JSON to ``json_path``: stdout
    is the program's); returns the program's exit status."""
    from tritondbg.profile import program_run
    from tritondbg.program.launcher import ProgramNotFound

    try:
        rc, record = program_run.profile_program(cmd, out_dir=out_dir, skip=skip, active=active,
                                                 interpret=interpret, progress=_progress, timeout=timeout)
    except ProgramNotFound as exc:  # as `capture -- CMD` does: the shell's status for a missing command
        print(f"error: {exc}", file=sys.stderr)
        return 127
    info = record.extra["profile"]
    prog = info["program"]
    from tritondbg.profile.console import print_program

    print_program(record)
    if json_path:
        Path(json_path).write_text(json.dumps({"run_dir": info["run_dir"], "record": record.extra.get("record_path"),
                          "report": str(Path(info["run_dir"]) / info["report"]), "timing": info["timing"],
                          "note": info["note"], "exit_status": rc, "kernels": prog["kernels"],
                          "other_kernels": prog["other_kernels"], "program_ms": prog["program_ms"],
                          "wall_s": prog.get("wall_s"), "report_s": prog.get("report_s"),
                          "window": prog.get("window"), "overhead": prog.get("overhead"),
                          "notes": [n for p in prog.get("processes", []) for n in p.get("notes", [])],
                          "autotune": [{"kernel": r.kernel, **d} for r in record.results
                                       for d in r.extra["profile"].get("autotune", [])]}, indent=2, default=str))
    return rc


def _program_command(fn):
    from tritondbg.commands.program import ProgramCommand

    return click.command("profile", cls=ProgramCommand, context_settings=dict(allow_interspersed_args=False))(fn)


@_program_command
@options.out_dir_option("--out", "out_dir", purpose="the run folder goes there", default="always",
                        help="Folder that holds the run folders [default: $TRITONDBG_OUT or ./traces].")
@click.option("--skip", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Triton launches of the program before the trace starts.")
@click.option("--active", type=click.IntRange(1), default=None, metavar="M",
              help="Triton launches recorded, then the trace stops [default: to the end of the program].")
@click.option("--interpret/--compiled", "interpret", default=None,
              help="Under the CPU interpreter / compiled on the GPU [default: the interpreter when no GPU is visible].")
@options.out_file_option("--json", "json_path", purpose="the per-kernel table goes there",
                         help="Also write the per-kernel table, the autotune decisions and the run folder to FILE "
                              "(JSON).")
@options.program_timeout
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def program_profile_cmd(out_dir, skip, active, interpret, json_path, timeout, cmd):
    """Profile every Triton launch of CMD (after --): NVTX range and record_function per launch, the
    autotuner's decisions, a torch.profiler trace; per-kernel launches, GPU time, share, bytes/s."""
    sys.exit(profile_program_cmd_fn(list(cmd), out_dir=out_dir, skip=skip, active=active, interpret=interpret,
                                    json_path=json_path, timeout=timeout))


def _with_program_form():
    """`tritondbg profile [OPTIONS] -- CMD`: the program form (see commands/program.py WithProgramForm)."""
    from tritondbg.commands.program import WithProgramForm

    class ProfileCommand(WithProgramForm):
        program_command = program_profile_cmd

    return click.command("profile", cls=ProfileCommand)


@_with_program_form()
@click.argument("kernels", nargs=-1, metavar="[KERNEL]...")
@click.option("--all", "all_kernels", is_flag=True, help="Profile every bundled kernel.")
@options.case
@options.dtype
@click.option("--iters", type=click.IntRange(1), default=None, metavar="N",
              help="Launches recorded in the trace per case [default: 20 on a GPU, 3 under the interpreter].")
@click.option("--warmup", type=click.IntRange(0), default=None, metavar="N",
              help="Launches before the trace starts [default: 10 on a GPU, 1 under the interpreter].")
@options.out_dir_option("--out", "out_dir", purpose="the run folder goes there", default="always",
                        help="Folder that holds the run folders; point TensorBoard at it [default: $TRITONDBG_OUT or "
                             "./traces].")
@options.config
@options.seed
@click.option("--cuda-graph", is_flag=True,
              help="Time by replaying a CUDA graph (do_bench_cudagraph): no launch overhead, for tiny kernels.")
@click.option("--peak", "peak_source", type=click.Choice(["measured", "spec"]), default="measured", show_default=True,
              help="GPU peaks for '% of peak': measured once per machine (cached) or the spec sheet.")
@click.option("--interpret", "force_interpret", is_flag=True, help="Use the CPU interpreter even with a GPU.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary and the run folder as JSON.")
def profile_cmd(kernels, all_kernels, case, dtype, iters, warmup, out_dir, config, seed, cuda_graph, peak_source,
                force_interpret, as_json):
    """Profile KERNELs: median time, TFLOP/s or GB/s, % of peak, ratio to torch; every autotune config's
    timing; a torch.profiler trace per case with NVTX ranges (domain tritondbg) and the autotune decisions on
    their own track; TensorBoard HParams, scalars, text and a roofline image; report.html (self-contained,
    offline). All in a new run folder under --out; the end of the output prints the command that views it.

    Without a GPU it runs under the interpreter and says so: interpreter timings are not GPU performance.
    Default case: the first GPU-size case on a GPU, `tiny` under the interpreter (--case all for every one).

    \b
    Program form: tritondbg profile [--out DIR] [--skip N] [--active M] [--json FILE] [--timeout S] -- CMD [ARGS...]
    profiles every Triton launch of a program (python model.py, python -m pytest ...) into the same run
    folder, plus a per-kernel table; exit status: the program's.
    """
    sys.exit(profile_kernels(kernels, all_kernels=all_kernels, case=case, dtype=dtype, iters=iters, warmup=warmup,
                             out_dir=out_dir, config=config, seed=seed, cuda_graph=cuda_graph,
                             peak_source=peak_source, force_interpret=force_interpret, as_json=as_json))
