"""Program mode on the command line: `tritondbg capture -- CMD` and `tritondbg interpret [OPTIONS] -- CMD`.

`interpret` keeps its scenario form (`tritondbg interpret KERNEL`); ``WithProgramForm`` sends a command
line holding ``--`` to the program form instead (``program_interpret_cmd``), whose options are its own.
"""
from __future__ import annotations

import sys

import click

_PROGRAM = dict(ignore_unknown_options=True, allow_interspersed_args=False)


def _kernels(values) -> list[str]:
    return [k.strip() for v in values for k in v.split(",") if k.strip()]


@click.command("capture", context_settings=_PROGRAM)
@click.option("--out", "out_dir", metavar="DIR", default=None,
              help="Folder for the reproducers [default: ./traces/capture-<time>].")
@click.option("--max-per-kernel", type=click.IntRange(min=1), default=1, show_default=True,
              help="Distinct launches saved with their data per kernel.")
@click.option("--max-mb", type=click.FloatRange(min=0), default=256.0, show_default=True,
              help="Tensor data written in all; launches past it are listed as skipped.")
@click.option("--kernel", "kernels", metavar="NAME", multiple=True, help="Only these kernels (repeatable).")
@click.option("--interpret/--compiled", "interpret", default=None,
              help="Run the program under the CPU interpreter / compiled on the GPU [default: the interpreter "
                   "when no GPU is visible].")
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def capture_cmd(out_dir, max_per_kernel, max_mb, kernels, interpret, cmd):
    """Run CMD (after --) with tritondbg attached; save each kernel's distinct launches as reproducers.

    \b
      tritondbg capture -- python model.py --steps 1
      tritondbg capture --max-per-kernel 3 -- python -m pytest tests/test_ops.py
    Each reproducer is a scenario file (NAME.py) with its saved tensors: `tritondbg interpret NAME.py`
    replays it on the CPU with sanitizers, `tritondbg ir NAME.py --arch sm_80` compiles it. The folder's
    captures.json lists them. Exit status: the program's.
    """
    from tritondbg.program import modes

    sys.exit(modes.capture(list(cmd), out_dir=out_dir, max_per_kernel=max_per_kernel, max_mb=max_mb,
                           kernels=_kernels(kernels), interpret=interpret))


@click.command("interpret", context_settings=_PROGRAM)
@click.option("--json", "json_path", metavar="FILE", default=None, help="Write every finding to FILE (JSON).")
@click.option("--kernel", "kernels", metavar="NAME", multiple=True,
              help="Only check these kernels (name or glob; repeatable, or comma-separated).")
@click.option("--capture-on-finding", is_flag=True, help="Write a reproducer for each launch with a finding.")
@click.option("--sanitize/--no-sanitize", default=True, show_default=True,
              help="Sanitizers on every launch (kernel errors and asserts are always reported).")
@click.option("--out", "out_dir", metavar="DIR", default=None,
              help="Folder for reproducers [default: ./traces/interpret-<time>].")
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def program_interpret_cmd(json_path, kernels, capture_on_finding, sanitize, out_dir, cmd):
    """Run CMD (after --) under the Triton interpreter on the CPU, sanitizers on every launch."""
    from tritondbg.program import modes

    sys.exit(modes.interpret(list(cmd), json_path=json_path, kernels=_kernels(kernels),
                             capture_on_finding=capture_on_finding, sanitize=sanitize, out_dir=out_dir))


class WithProgramForm(click.Command):
    """A command that also has a program form: a command line with ``--`` goes to ``program_command``."""

    program_command: click.Command = program_interpret_cmd

    def parse_args(self, ctx, args):
        if "--" in args:
            ctx.meta["tritondbg.program_args"] = list(args)
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        args = ctx.meta.get("tritondbg.program_args")
        if args is None:
            return super().invoke(ctx)
        cut = args.index("--")
        sub = self.program_command.make_context(ctx.info_name, args[:cut] + ["--"] + args[cut + 1:], parent=ctx.parent)
        with sub:
            return self.program_command.invoke(sub)
