"""``--all-configs``: run every config of each autotuned kernel and report the ones that disagree.

A bug that only some block sizes expose (a missing mask that is harmless when BLOCK divides N) passes
with the config a case pins; running each listed config once, pinned exactly (``run_case(pinned=...)``),
shows which ones fail the reference or a sanitizer. A kernel the case does not launch (attention's decode
kernels in a prefill case) is run once, not once per config.
"""
from __future__ import annotations

from typing import Sequence

from tritondbg.errors import UsageError


def sweep(scenario, runs, *, device: str, seed: int = 0, instruments: Sequence = ()):
    """Run every listed config of every autotuned kernel on each (case, dtype) of ``runs``, pinned exactly.

    Returns (results, failures); each result's ``extra["sweep"]`` says which kernel and config it ran. Shared
    by ``interpret --all-configs`` and the all-configs gate of ``tritondbg check``."""
    from tritondbg import runner
    from tritondbg.configs import autotuners, config_dict, config_str

    results, failures = [], []
    for case, dt in runs:
        for name, tuner in autotuners(scenario.kernels).items():
            for i, cfg in enumerate(tuner.configs):
                r = runner.run_case(scenario, case, dt, device=device, seed=seed, instruments=instruments,
                                    pinned={name: cfg})
                used = name in r.config
                r.extra["sweep"] = {"kernel": name, "index": i, "of": len(tuner.configs),
                                    "config": config_dict(cfg), "used": used}
                results.append(r)
                if not r.passed:
                    failures.append({"kernel": name, "config": config_str(config_dict(cfg)), "case": case.name,
                                     "dtype": dt, "status": r.status, "message": r.message})
                if not used:  # this case never launches the kernel: its configs cannot matter here
                    break
    return results, failures


def run_all_configs(target: str, *, cases: str | None = None, dtype: str | None = None, seed: int = 0,
                    command: str = "", instruments: Sequence = ()):
    """The record of every (case, dtype, kernel, config) run; ``record.extra["sweep"]`` lists the failures."""
    from tritondbg import __version__, loader, runner
    from tritondbg.configs import autotuners
    from tritondbg.record import RunRecord, environment

    runner.set_mode("interpret")
    device = runner.default_device("interpret")
    scenario = loader.load(target)
    if not autotuners(scenario.kernels):
        raise UsageError(f"--all-configs: {scenario.name} has no autotuned kernel")
    selected = runner.select_cases(scenario, cases, interpret=True)
    runs = [(c, dt) for c in selected for dt in runner.select_dtypes(c, dtype)]
    record = RunRecord(command=command or f"interpret {target} --all-configs")
    record.results, failures = sweep(scenario, runs, device=device, seed=seed, instruments=instruments)
    record.environment = environment()
    record.extra["scenario_source"] = scenario.source
    record.extra["sweep"] = {"runs": len(record.results), "failures": failures}
    record.tool_version = __version__
    return record
