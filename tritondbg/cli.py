"""The `tritondbg` command line.

Each command is a thin Click command in ``tritondbg/commands/<module>.py``; this module only maps names to
them (a lazy group, from the Click docs) so that `tritondbg --help` imports neither torch nor triton, and the
runner, not the CLI, decides when kernel modules (and so @triton.jit) are imported.
"""
from __future__ import annotations

import importlib
import os
import sys

import click

from tritondbg import __version__
from tritondbg.errors import ModeError, UsageError

# command name -> "module:attribute" of its click.Command. One line per command.
COMMANDS = {
    "check": "tritondbg.commands.check:check_cmd",
    "list": "tritondbg.commands.catalog:list_cmd",
    "interpret": "tritondbg.commands.execute:interpret_cmd",
    "run": "tritondbg.commands.execute:run_cmd",
    "ir": "tritondbg.commands.ir:ir_cmd",
    "cache": "tritondbg.commands.cache:cache_cmd",
    "profile": "tritondbg.commands.profile:profile_cmd",
    "capture": "tritondbg.commands.program:capture_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def resolve_command(self, ctx, args):
        """An unknown command with the nearest one named (``interpet`` -> interpret), as click does for options."""
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and name not in COMMANDS:
            import difflib

            near = difflib.get_close_matches(name, sorted(COMMANDS), n=1, cutoff=0.6)
            if near:
                ctx.fail(f"No such command {name!r}. Did you mean {near[0]!r}?")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tritondbg")
def cli():
    """Debug and profile Triton kernels: run them on the CPU interpreter, read their IR for any GPU,
    profile them, gate them in CI.

    KERNEL is a bundled kernel (see `tritondbg list`) or your own scenario file: path/to/cases.py[::name].
    """


class _PipeSafe:
    """Standard output that a reader closed early (``tritondbg check ... | head -1``) stops taking text instead of
    raising BrokenPipeError in the middle of the run: the run goes on and exits with its own status (it was 1)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input and kernel failures become one line and an exit status, never a traceback."""
    from tritondbg import settings

    if not isinstance(sys.stdout, _PipeSafe) and sys.stdout is not None:
        sys.stdout = _PipeSafe(sys.stdout)
    try:
        cli.main(args=argv, prog_name="tritondbg", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except SystemExit as e:  # a command's own exit status; an interrupted run's (130, 143) skips the teardown
        if e.code in _INTERRUPTED:
            _exit_interrupted(e.code)
        raise
    except click.UsageError as e:   # click's own usage errors too: one line, with where to read more
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        click.echo(f"error: {e.format_message()}{hint}", err=True)
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Abort:  # click's form of a KeyboardInterrupt
        click.echo("interrupted (Ctrl-C)", err=True)
        _exit_interrupted(130)
    except (UsageError, ModeError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        _exit_interrupted(130)
    except Exception as e:  # noqa: BLE001 - the tool's own bug: one line, full traceback on request
        if settings.get().debug:
            raise
        click.echo(f"error: {type(e).__name__}: {e} (set TRITONDBG_DEBUG=1 for the traceback)", err=True)
        sys.exit(1)


_INTERRUPTED = (130, 143)  # 128 + SIGINT, 128 + SIGTERM


def _exit_interrupted(code: int) -> None:
    """Exit ``code`` (130, 143) after Ctrl-C / SIGTERM without Python's teardown. Every ``with`` block has run
    by now (partial folders removed, records written); what is left is the interpreter freeing torch's C++
    state, and a profiler or Triton launch stopped mid-way by the interrupt can crash there (SIGSEGV, exit -11
    instead of 130: seen in CI, ``test_real_profile_run_killed_midway...``). atexit hooks still run."""
    import atexit

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe must not stop the exit
            pass
    atexit._run_exitfuncs()
    os._exit(code)
