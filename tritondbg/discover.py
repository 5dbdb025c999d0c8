"""The autotuned kernels a scenario's launch really runs, whether ``Scenario.kernels`` lists them or not.

Used by the all-configs gate (tritondbg/check/gates.py) and ``interpret --all-configs`` (tritondbg/interp/sweep.py),
which read ``Scenario.kernels`` only before: a scenario that does not list its kernels (fla's
``chunk_simple_gla`` launches six autotuned kernels from inside its own wrappers) was skipped as "no autotuned
kernel", although ``interpret`` pinned each of them. One run of each case under ``launched_autotuners`` sees
every Autotuner the launch calls (``interpret`` pins them the same way: Triton's ``Autotuner.run``), and the gate
then sweeps the scenario as if it listed them. (The resources gate compiles through ``tritondbg ir``, whose
``--all-configs`` sweep finds the autotuners of the launches it captures: ``tritondbg/ir/request.py``.)
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator

from tritondbg.configs import autotuners, kernel_name
from tritondbg.errors import UsageError


class NoAutotunedKernel(UsageError):
    """``--all-configs`` has nothing to sweep: ``Scenario.kernels`` lists no autotuned kernel and the cases launch
    none (``with_autotuned_kernels``). ``interpret --all-configs`` then runs the one config as without the flag
    (tritondbg/commands/execute.py): the type says so, whatever the message's words."""


@contextlib.contextmanager
def launched_autotuners() -> Iterator[dict[str, Any]]:
    """{kernel name: Autotuner} of every autotuned kernel launched while the block runs (filled as they run)."""
    from triton.runtime.autotuner import Autotuner

    seen: dict[str, Any] = {}
    original = Autotuner.run

    def run(tuner, *args, **kwargs):
        seen.setdefault(kernel_name(tuner), tuner)
        return original(tuner, *args, **kwargs)

    Autotuner.run = run
    try:
        yield seen
    finally:
        Autotuner.run = original


def with_launched_kernels(scenario, runs, *, device: str, seed: int = 0):
    """``scenario``, with every autotuned kernel that one run of each (case, dtype) of ``runs`` launches added to
    its ``kernels`` (a copy; the scenario itself when it already lists them all). The sweep and the runner's
    pinning read ``kernels``: an added kernel is swept and pinned as a listed one is."""
    from tritondbg import runner

    listed = autotuners(scenario.kernels)
    with launched_autotuners() as seen:
        for case, dtype in runs:
            runner.run_case(scenario, case, dtype, device=device, seed=seed)
    extra = [tuner for name, tuner in seen.items() if name not in listed]
    return dataclasses.replace(scenario, kernels=[*scenario.kernels, *extra]) if extra else scenario


def with_autotuned_kernels(scenario, runs, *, device: str, seed: int = 0):
    """``with_launched_kernels``, raising ``NoAutotunedKernel`` when the scenario still has no autotuned kernel:
    the check after the cases ran, of the all-configs gate and of ``interpret --all-configs``'s sweep."""
    scenario = with_launched_kernels(scenario, runs, device=device, seed=seed)
    if not autotuners(scenario.kernels):
        raise NoAutotunedKernel(f"--all-configs: {scenario.name} launches no autotuned kernel")
    return scenario
