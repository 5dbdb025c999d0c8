"""Which cases and dtypes a run takes: ``--case`` (names, comma-separated lists, globs, ``all``) and ``--dtype``
(one or a list, in the usual spellings). Shared by interpret / run, the all-configs sweep, ir and profile."""
from __future__ import annotations

import fnmatch
import sys

from tritondbg.errors import UsageError
from tritondbg.scenario import Case, Scenario


def case_specs(case: str | None) -> list[str]:
    """``--case`` as its parts: a name, a comma-separated list, shell-style globs (``decode*``), ``all``."""
    return [] if case is None else [t.strip() for t in case.split(",") if t.strip()]


def _matches(spec: str, name: str) -> bool:
    return name == spec or fnmatch.fnmatchcase(name, spec)  # an exact name first: it may hold a '['


def case_wanted(case: str | None, name: str) -> bool:
    """Whether ``--case`` (None: every case) takes the case called ``name``."""
    return case is None or any(t == "all" or _matches(t, name) for t in case_specs(case))


def no_cases(scenario: Scenario) -> str | None:
    """One line when the scenario lists no case (``Scenario(cases=[])``): nothing to run, list, compile or check
    (it was "every case is interpret=False" under `interpret` and "max() arg is an empty sequence" under `list`)."""
    return None if scenario.cases else no_cases_line(scenario.name)


def no_cases_line(name: str) -> str:
    return f"{name} lists no case (its `cases` is empty): add a Case(...) to run, compile or list it"


def select_cases(scenario: Scenario, case: str | None, *, interpret: bool) -> list[Case]:
    """The cases to run: those ``case`` names (comma-separated names or globs, "all" for every runnable case),
    else ``tiny``, else the first runnable."""
    empty = no_cases(scenario)
    if empty:
        raise UsageError(empty)
    runnable = [c for c in scenario.cases if c.interpret or not interpret]
    specs = case_specs(case)
    if case is not None and not specs:
        raise UsageError("--case is empty; name a case, a comma-separated list, a glob such as 'tiny*', or all")
    if "all" in specs:
        return runnable
    chosen: dict[str, Case] = {}
    for spec in specs:  # in the order named; a glob's cases in the scenario's order
        glob = spec not in scenario.case_names and any(ch in spec for ch in "*?[")
        hits = [c for c in scenario.cases if _matches(spec, c.name)]
        if not hits:
            raise UsageError((f"no case of {scenario.name} matches {spec!r}" if glob else
                              f"unknown case {spec!r} for {scenario.name}")
                             + f"; choose from: {', '.join(scenario.case_names)}, all")
        usable = [c for c in hits if c.interpret or not interpret]
        if not usable:
            choose = (f"under the interpreter choose from: {', '.join(c.name for c in runnable)}" if runnable else
                      f"{scenario.name} has no case that runs under the interpreter: run it on a GPU (`tritondbg "
                      "run`), or add a small case to the scenario")
            raise UsageError((f"the cases matching {spec!r} are GPU-size cases" if glob else
                              f"case {spec!r} is a GPU-size case") + f" (interpret=False); {choose}")
        chosen.update((c.name, c) for c in usable)
    if chosen:
        return list(chosen.values())
    for c in runnable:
        if c.name == "tiny":
            return [c]
    if not runnable:
        raise UsageError(f"{scenario.name} has no case that runs" + (
            " under the interpreter (every case is interpret=False): run it on a GPU, or add a small case"
            if interpret else ""))
    return [runnable[0]]


# Other spellings of the dtypes a case lists (Triton's and the usual short ones); "fp8" is ambiguous: not one
DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "f16": "float16", "half": "float16", "fp32": "float32",
                 "f32": "float32", "float": "float32", "fp64": "float64", "f64": "float64", "double": "float64",
                 "e4m3": "float8_e4m3fn", "fp8e4nv": "float8_e4m3fn", "float8e4nv": "float8_e4m3fn",
                 "e5m2": "float8_e5m2", "fp8e5": "float8_e5m2", "float8e5": "float8_e5m2",
                 "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64"}


def select_dtypes(case: Case, dtype: str | None) -> list[str]:
    """The dtypes to run: every one the case lists, or those ``dtype`` names (a comma-separated list; bf16, fp16,
    fp32, torch.bfloat16 and the like spelled either way)."""
    if dtype is None:
        return list(case.dtypes)
    wanted: list[str] = []
    for given in (t.strip() for t in dtype.split(",")):
        if not given:
            continue
        bare = given.lower().removeprefix("torch.")
        name = DTYPE_ALIASES.get(bare, bare)
        if name not in case.dtypes:
            import torch

            if not isinstance(getattr(torch, name, None), torch.dtype):  # a typo, not a dtype the case lacks
                raise UsageError(f"{given!r} is not a torch dtype; case {case.name!r} takes: {', '.join(case.dtypes)}")
            raise UsageError(f"case {case.name!r} has no dtype {given!r}; choose from: {', '.join(case.dtypes)}")
        if name not in wanted:
            wanted.append(name)
    if not wanted:
        raise UsageError(f"--dtype is empty; choose from: {', '.join(case.dtypes)}")
    return wanted


def select_runs(selected: list[Case], dtype: str | None) -> list[tuple[Case, str]]:
    """(case, dtype) of every selected case for each ``--dtype`` it lists. With one case a dtype it lacks is a
    usage error, as before; with several (``--case all``) a case that lists none of them is left out with a note
    on stderr, and only none at all is an error (``--case all --dtype fp32`` was refused for the one bf16-only
    case)."""
    if dtype is None or len(selected) <= 1:
        return [(c, dt) for c in selected for dt in select_dtypes(c, dtype)]
    runs, left = [], []
    for c in selected:
        names = [DTYPE_ALIASES.get(t.strip().lower().removeprefix("torch."), t.strip().lower().removeprefix("torch."))
                 for t in dtype.split(",") if t.strip()]
        mine = ",".join(n for n in dict.fromkeys(names) if n in c.dtypes)
        if mine:
            runs += [(c, dt) for dt in select_dtypes(c, mine)]
        missing = [n for n in dict.fromkeys(names) if n not in c.dtypes]
        if missing:
            left.append(f"{'/'.join(missing)} for {c.name} (it lists {'/'.join(c.dtypes)})")
    if not runs:
        listed = "; ".join(f"{c.name}: {', '.join(c.dtypes)}" for c in selected)
        raise UsageError(f"no selected case has dtype {dtype!r}; their dtypes: {listed}")
    if left:
        print(f"note: --dtype {dtype}: not run: {'; '.join(left)}", file=sys.stderr)
    return runs
