"""The instruments of one ``tritondbg interpret`` run, from the command's options."""
from __future__ import annotations

from typing import Sequence


def build(target: str, *, sanitize: bool = True, pid: str | None = None, trace: bool = False,
          watch: Sequence[str] = (), breaks: Sequence[str] = (), out_dir=None) -> list:
    """Error/print attribution always; sanitizers unless turned off (else the spin watch alone); the stepper when a pid is traced,
    watched or broken into. Validates --pid/--break (UsageError, exit 2) before anything runs."""
    from tritondbg import loader, runner
    from tritondbg.interp.attribution import KernelReport
    from tritondbg.interp.stepper import Stepper, check_breaks, parse_break, parse_pid

    runner.set_mode("interpret")  # before the scenario (and its @triton.jit kernels) is imported
    chosen = parse_pid(pid)
    parsed = [parse_break(b) for b in breaks]
    if pid is not None and not (trace or watch or parsed):
        from tritondbg.errors import UsageError

        raise UsageError(f"--pid {pid} alone does nothing: it picks the program for --trace, --watch or --break")
    if parsed:
        check_breaks(parsed, loader.load(target).kernels)
    instruments = [KernelReport()]
    if sanitize:
        from tritondbg.interp.sanitize import Sanitizer

        instruments.append(Sanitizer())
    else:  # the sanitizers watch for programs that wait for each other; without them, this alone does
        from tritondbg.interp.spins import Spins

        instruments.append(Spins())
    if trace or watch or parsed:
        instruments.append(Stepper(chosen, trace=trace, watch=watch, breaks=parsed, out_dir=out_dir))
    return instruments
