"""Program mode on the command line: `tritondbg capture -- CMD` and `tritondbg interpret [OPTIONS] -- CMD`.

`interpret` keeps its scenario form (`tritondbg interpret KERNEL`); ``WithProgramForm`` sends a command
line holding ``--`` to the program form instead (``program_interpret_cmd``), whose options are its own.
``ProgramCommand`` parses a program form: its own options before ``--``, the program after it, untouched.
"""
from __future__ import annotations

import sys

import click

from tritondbg import options

_PROGRAM = dict(allow_interspersed_args=False)
# the kernel form's options that step through one program instance of one launch (not in the program form: a
# program launches many kernels, many times; a captured launch is one): the option -> its value in the hint
STEPPING = {"--trace": "", "--watch": " EXPR", "--break": " LINE", "--pid": " X,Y,Z"}


class ProgramCommand(click.Command):
    """`tritondbg NAME [OPTIONS] -- CMD [ARGS]...`: only this command's options go before the first ``--`` (a
    value option takes its value, never the ``--``); everything after it is the program's. An unknown option or
    an argument before ``--`` is a usage error naming it and the options of this form (exit 2, nothing run).
    Without ``--`` the program starts at the first argument (`tritondbg capture python model.py`)."""

    def form(self, ctx) -> str:
        """`tritondbg profile [--out DIR] [--skip N] ... -- CMD [ARGS]...`: this form's synopsis."""
        parts = []
        for p in self.params:
            if not isinstance(p, click.Option) or p.name == "help":
                continue
            name = "/".join(p.opts + p.secondary_opts)
            parts.append(f"[{name}]" if p.is_flag else f"[{p.opts[0]} {p.metavar or 'VALUE'}]")
            parts[-1] += "..." if p.multiple else ""
        return f"{ctx.command_path} {' '.join(parts)} -- CMD [ARGS]..."

    def _value_option(self, arg: str) -> click.Option | None:
        return next((p for p in self.params if isinstance(p, click.Option) and not p.is_flag and arg in p.opts), None)

    def parse_args(self, ctx, args):
        cut = args.index("--") if "--" in args else None
        head = list(args if cut is None else args[:cut])
        opt = self._value_option(head[-1]) if cut is not None and head else None
        if opt is not None:   # `--json -- CMD`: click would take the `--` as the file
            raise click.UsageError(f"{head[-1]} needs its {opt.metavar or 'value'} before --: {self.form(ctx)}", ctx)
        try:
            rest = super().parse_args(ctx, head)
        except click.NoSuchOption as exc:
            kernel_form = ctx.meta.get("tritondbg.kernel_form")
            where = ""
            if kernel_form is not None and any(exc.option_name in [*p.opts, *p.secondary_opts]
                                               for p in kernel_form.params if isinstance(p, click.Option)):
                where = f" ({exc.option_name} is an option of `{ctx.command_path} KERNEL`"
                if exc.option_name in STEPPING:
                    where += (f"; to step through one launch of a program, save it and step through the "
                              f"reproducer: `tritondbg capture --kernel NAME -- CMD`, then `{ctx.command_path} "
                              f"{exc.option_name}{STEPPING[exc.option_name]} traces/capture-<time>/NAME_0.py`")
                where += ")"
            else:  # a typo (--kernal): the nearest option named, the kernel form's too (--wacth: --watch is its)
                import difflib

                theirs = [o for p in (kernel_form.params if kernel_form is not None else ())
                          if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
                near = difflib.get_close_matches(exc.option_name, list(exc.possibilities or ()) + theirs, n=1)
                if near and near[0] not in (exc.possibilities or ()):
                    where = f" (did you mean {near[0]}? it is an option of `{ctx.command_path} KERNEL`)"
                elif near:
                    where = f" (did you mean {near[0]}?)"
            what = "the program form" if kernel_form is not None else f"`{ctx.command_path}`"
            raise click.UsageError(f"{exc.option_name} is not an option of {what}{where}: {self.form(ctx)}",
                                   ctx) from None
        if cut is not None:
            if ctx.params.get("cmd"):
                raise click.UsageError(f"unexpected argument {ctx.params['cmd'][0]!r} before --: the program goes "
                                       f"after it: {self.form(ctx)}", ctx)
            ctx.params["cmd"] = tuple(args[cut + 1:])
        return rest


class NoProgramForm(click.Command):
    """A KERNEL command without a program form: ``-- CMD [ARGS]`` is refused in one line saying what to run instead
    (``ir -- python prog.py`` said "/usr/bin/python is not a Python file"). One scenario target after ``--`` (a
    .py file, ``FILE::name``, a bundled name) is still the KERNEL argument."""

    instead = "`tritondbg capture -- {cmd}`, then `{command} traces/capture-<time>/KERNEL_0.py` (a reproducer it wrote)"

    def parse_args(self, ctx, args):
        if "--" in args:
            after = list(args[args.index("--") + 1:])
            several = any(p.nargs == -1 for p in self.params if isinstance(p, click.Argument))  # check, list
            if (len(after) > 1 and not several) or not all(_scenario_like(a) for a in after):
                import shlex

                from tritondbg.errors import UsageError

                command = ctx.command_path
                raise UsageError(f"`{command}` has no program form: run "
                                 + self.instead.format(cmd=shlex.join(after), command=command))
        return super().parse_args(ctx, args)


class CheckNoProgramForm(NoProgramForm):
    instead = ("`tritondbg interpret --strict -- {cmd}` (exit 1 on a finding, for CI), or `tritondbg capture -- {cmd}`, "
               "then `{command} traces/capture-<time>/` (the reproducers it wrote)")


class ListNoProgramForm(NoProgramForm):
    instead = "`tritondbg capture -- {cmd}`: it lists each kernel the program launches, and writes a reproducer of each"


def _scenario_like(arg: str) -> bool:
    from tritondbg import loader

    return arg.partition("::")[0].endswith(".py") or "::" in arg or arg in loader.bundled_names()


def _kernels(values) -> list[str]:
    return [k.strip() for v in values for k in v.split(",") if k.strip()]


def _arch_option(f):
    return click.option("--arch", "arch", metavar="TARGET", default=None,
                        help="GPU that the program's host code sees through the CPU stand-in (driver target, device "
                             "properties, torch.cuda capability) [default: sm_90]; e.g. sm_80, sm_100, gfx942.")(f)


def _checked_arch(arch: str | None) -> str | None:
    """A bad or unsupported name is bad usage (exit 2) before the program starts."""
    if arch is None:
        return None
    from tritondbg.ir.targets import check_supported, parse_arch

    the_arch = parse_arch(arch)
    check_supported(the_arch)
    return the_arch.name


@click.command("capture", cls=ProgramCommand, context_settings=_PROGRAM)
@options.out_dir_option("--out", "out_dir", purpose="the reproducers go there",
                        help="Folder for the reproducers [default: ./traces/capture-<time>].")
@click.option("--max-per-kernel", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Distinct launches saved with their data per kernel (over all the program's processes).")
@click.option("--max-mb", type=options.Positive(), default=256.0, show_default=True, metavar="MB",
              help="Tensor data written in all (all processes); launches past it are listed as skipped.")
@click.option("--kernel", "kernels", metavar="NAME", multiple=True,
              help="Only capture these kernels (name or glob; repeatable, or comma-separated).")
@click.option("--interpret/--compiled", "interpret", default=None,
              help="Run the program under the CPU interpreter / compiled on the GPU [default: the interpreter "
                   "when no GPU is visible].")
@_arch_option
@options.program_timeout
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def capture_cmd(out_dir, max_per_kernel, max_mb, kernels, interpret, arch, timeout, cmd):
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
                           kernels=_kernels(kernels), interpret=interpret, arch=_checked_arch(arch),
                           timeout=timeout))


@click.command("interpret", cls=ProgramCommand, context_settings=_PROGRAM)
@options.out_file_option("--json", "json_path", purpose="the findings go there",
                         help="Write every finding to FILE (JSON).")
@click.option("--kernel", "kernels", metavar="NAME", multiple=True,
              help="Only check these kernels (name or glob; repeatable, or comma-separated).")
@click.option("--capture-on-finding", is_flag=True, help="Write a reproducer for each launch with a finding.")
@click.option("--sanitize/--no-sanitize", default=True, show_default=True,
              help="Sanitizers on every launch (kernel errors and asserts are always reported).")
@options.out_dir_option("--out", "out_dir", purpose="the reproducers go there",
                        help="Folder for reproducers [default: ./traces/interpret-<time>].")
@click.option("--strict", is_flag=True,
              help="Warnings fail the run too (for CI): a kernel error the program caught (a fallback, "
                   "pytest.raises), an output a launch left a band of unwritten.")
@_arch_option
@options.program_timeout
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def program_interpret_cmd(json_path, kernels, capture_on_finding, sanitize, out_dir, strict, arch, timeout, cmd):
    """Run CMD (after --) under the Triton interpreter on the CPU, sanitizers on every launch."""
    from tritondbg.program import modes

    arch = _checked_arch(arch)
    sys.exit(modes.interpret(list(cmd), json_path=json_path, kernels=_kernels(kernels),
                             capture_on_finding=capture_on_finding, sanitize=sanitize, out_dir=out_dir, arch=arch,
                             strict=strict, timeout=timeout))


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
        ctx.meta["tritondbg.kernel_form"] = self   # names a kernel-form option given to the program form
        sub = self.program_command.make_context(ctx.info_name, args, parent=ctx.parent)
        with sub:
            return self.program_command.invoke(sub)
