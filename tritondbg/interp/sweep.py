"""``--all-configs``: run every config each autotuner would try and report the ones that disagree.

A bug that only some block sizes expose (a missing mask that is harmless when BLOCK divides N) passes
with the config a case pins; running each listed config once, pinned exactly (``run_case(pinned=...)``),
shows which ones fail the reference or a sanitizer. A kernel the case does not launch (attention's decode
kernels in a prefill case) is run once, not once per config, and listed as not launched (that run's findings
are the other kernels'). An autotuner whose pruning returns configs of its own runs those.
"""
from __future__ import annotations

from typing import Sequence


def sweep(scenario, runs, *, device: str, seed: int = 0, instruments: Sequence = (), skipped: list | None = None,
          results: list | None = None, failures: list | None = None, on_result=None):
    """Run every config the autotuner would try, of every autotuned kernel, on each (case, dtype) of ``runs``,
    pinned exactly.

    The configs are the autotuner's own: its ``prune_configs_by`` rules (``early_config_prune``, ``perf_model`` +
    ``top_k``) applied to the case's real arguments, found by one default run. A config that fails its own
    ``tl.static_assert`` (or a compile-time resource limit) is not applicable: it goes to ``skipped`` with the
    reason, never to the failures. Returns (results, failures); each result's ``extra["sweep"]`` says which kernel
    and config it ran. ``results`` / ``failures``: lists to fill as the runs finish (a sweep cut short keeps what
    ran), ``on_result(result)`` is called for each. Shared by ``interpret --all-configs`` and the all-configs gate
    of ``tritondbg check``."""
    from tritondbg import runner
    from tritondbg.configs import autotuners, config_dict, config_str, distinct, made_up
    from tritondbg.pinning import tried_configs

    results = results if results is not None else []
    failures = failures if failures is not None else []
    skipped = skipped if skipped is not None else []
    for case, dt in runs:
        tried = tried_configs(lambda: runner.run_case(scenario, case, dt, device=device, seed=seed))
        for name, tuner in autotuners(scenario.kernels).items():
            not_launched = {"kernel": name, "config": "every config", "case": case.name, "dtype": dt,
                            "reason": "this case does not launch it", "count": len(tuner.configs)}
            if name not in tried and len(tuner.configs) > 1:  # (every launched one with a choice is in tried)
                skipped.append(not_launched)
                continue
            configs = distinct(tried.get(name, tuner.configs))
            if made_up(tuner.configs, configs):  # its pruning returns configs of its own: those run, once each
                skipped.append({"kernel": name, "config": f"its {len(tuner.configs)} listed configs", "case": case.name,
                                "dtype": dt, "count": len(tuner.configs), "reason": f"its prune_configs_by returns {len(configs)} config(s) of "
                                                      "its own for this case, in their place (run)"})
            else:
                said = set()
                for cfg in tuner.configs:  # (a prune_configs_by may return new Config objects: compared by value)
                    text = config_str(config_dict(cfg))
                    if text not in said and not any(cfg is c or config_dict(cfg) == config_dict(c) for c in configs):
                        said.add(text)
                        skipped.append({"kernel": name, "config": text, "case": case.name,
                                        "dtype": dt, "reason": "pruned by the autotuner's prune_configs_by"})
            for i, cfg in enumerate(configs):
                try:
                    r = runner.run_case(scenario, case, dt, device=device, seed=seed, instruments=instruments,
                                        pinned={name: cfg})
                except BaseException as exc:  # Ctrl-C, SIGTERM, a timeout (run_case returns every other error):
                    results.append(_unfinished(scenario, case, dt, name, cfg, i, len(configs), seed, exc))  # the
                    raise  # config that was running
                used = name in r.config
                if not used:  # this case never launches the kernel: its configs cannot matter here (the run's
                    skipped.append(not_launched)  # findings are another kernel's)
                    break
                if r.extra.get("not_applicable"):
                    skipped.append({"kernel": name, "config": config_str(config_dict(cfg)), "case": case.name,
                                    "dtype": dt, "reason": r.extra["not_applicable"]})
                    continue
                r.extra["sweep"] = {"kernel": name, "index": i, "of": len(configs), "listed": len(tuner.configs),
                                    "config": config_dict(cfg), "used": used}
                results.append(r)
                if not r.passed:
                    failures.append({"kernel": name, "config": config_str(config_dict(cfg)), "case": case.name,
                                     "dtype": dt, "status": r.status, "message": _why(r)})
                if on_result is not None:
                    on_result(r)
    return results, failures


def _unfinished(scenario, case, dt, name, cfg, i, n, seed, exc):
    """The error result of the config run a Ctrl-C, SIGTERM or timeout cut short (the summary said "0/0 passed"
    and named no config)."""
    from tritondbg.configs import config_dict, config_str
    from tritondbg.record import CaseResult

    from tritondbg import stops

    if isinstance(exc, KeyboardInterrupt):  # Ctrl-C or a SIGTERM (a CI cancel) its handler turned into one
        why = f"interrupted by {stops.noted() or 'SIGINT'}"
    else:
        why = type(exc).__name__ if str(exc) == "" else f"{type(exc).__name__}: {exc}"
    r = CaseResult(kernel=scenario.name, case=case.name, dtype=dt, mode="interpret", device="cpu", seed=seed,
                   params=dict(case.params), status="error",
                   message=f"config {config_str(config_dict(cfg))} of {name} did not finish ({why})")
    r.extra["sweep"] = {"kernel": name, "index": i, "of": n, "config": config_dict(cfg), "used": True}
    r.extra["interrupted"] = True
    return r


def _why(result) -> str:
    """A failed run in a line: its message, and where its first error finding is."""
    errors = [f for f in result.findings if f.get("severity", "error") == "error"]
    if not errors:
        return result.message
    f = errors[0]
    return f"{result.message} (first: {f.get('kind')} at {f.get('file', '?')}:{f.get('line', '?')})"


def run_all_configs(target: str, *, cases: str | None = None, dtype: str | None = None, seed: int = 0,
                    command: str = "", instruments: Sequence = (), arch: str | None = None, on_result=None):
    """The record of every (case, dtype, kernel, config) run; ``record.extra["sweep"]`` lists the failures.
    ``on_result`` sees each run as it finishes. Interrupted (Ctrl-C, SIGTERM, a timeout), the exception leaves
    with ``.record``: the runs that finished."""
    from tritondbg import __version__, loader, runner, selection
    from tritondbg.discover import with_autotuned_kernels
    from tritondbg.record import RunRecord, environment

    runner.set_mode("interpret", arch)
    device = runner.default_device("interpret")
    scenario = loader.load(target)
    selected = selection.select_cases(scenario, cases, interpret=True)
    runs = selection.select_runs(selected, dtype)
    # every autotuned kernel the runs launch, listed in Scenario.kernels or not (fla's wrappers launch their own)
    scenario = with_autotuned_kernels(scenario, runs, device=device, seed=seed)
    record = RunRecord(command=command or f"interpret {target} --all-configs")
    skipped: list = []
    failures: list = []
    record.environment = environment()
    record.extra["scenario_source"] = scenario.source
    record.tool_version = __version__
    try:
        sweep(scenario, runs, device=device, seed=seed, instruments=instruments, skipped=skipped,
              results=record.results, failures=failures, on_result=on_result)
    except BaseException as exc:
        exc.record = record
        raise
    finally:
        record.extra["sweep"] = {"runs": len(record.results), "failures": failures, "not_applicable": skipped}
    return record
