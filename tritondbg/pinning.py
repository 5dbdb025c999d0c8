"""Pinning: which config each autotuned kernel of a run takes, put in place for the run and recorded.

``plan`` decides (``--config``, an all-configs sweep's config, the case's config; under the interpreter every other
autotuned kernel runs the first config its own pruning keeps); ``Pinning.active`` patches ``Autotuner.run`` (and a
subclass's own run, ``configs.every_autotuner_run``) and a launch past the autotuner (``configs.past_tuner``) for the
run, and records what ran. ``tried_configs`` says which configs an autotuner would try for a case (the sweep).
"""
from __future__ import annotations

import contextlib
import functools
import sys
from typing import Any, Iterator

from tritondbg.configs import (LISTED, autotuners, cached_config, call_kwargs, check_keys, choose, choose_requested,
                               config_dict, config_str, default_for, every_autotuner_run, kernel_name, known_keys,
                               not_applicable_reason, past_tuner, trial)

CACHED = "its autotuner's cache (the program's own pick for this key)"


class Pinning:
    """Patches Autotuner.run (and a subclass's own run: ``every_autotuner_run``) for the duration of a run:
    pinned kernels run their one chosen config; under the interpreter every other autotuned kernel runs its
    first config after pruning. Records what ran."""

    def __init__(self, pins: dict[int, tuple[Any, str]], pin_all: bool, tuners=()):
        self.pins = pins                 # id(autotuner) -> (Config, source)
        self.pin_all = pin_all           # interpreter: never benchmark
        self.tuners = list(tuners)       # the scenario's autotuners: their jit functions are watched (past_tuner)
        self.inside: set[int] = set()    # id(autotuner) of those whose run is running now
        self.used: dict[str, dict[str, Any]] = {}
        self.sources: dict[str, str] = {}
        self.tried: dict[str, list] = {}  # kernel name -> the configs its autotuner would try (after pruning)
        self.ran: dict[str, list] = {}  # kernel name -> each config it ran (pinned per call: one per autotune key)
        self.skipped: dict[str, list[str]] = {}  # kernel name -> default candidates that were not applicable
        self.keys_seen: dict[int, set] = {}      # id(autotuner) -> the autotune keys it was called with
        self.races: list[dict] = []  # the bundled kernels' races decided in the block (kernels/_race.py records)

    @contextlib.contextmanager
    def active(self) -> Iterator["Pinning"]:
        pinning = self
        bundled = _bundled_launch()
        if bundled is not None:
            bundled.SERVED.clear()
        races = sys.modules.get("tritondbg.kernels._race")
        decided = set(races.DECISIONS) if races is not None else set()

        def make(original):
            return functools.partial(run, original)

        def run(original, tuner, *args, **kwargs):
            pinning.inside.add(id(tuner))
            try:
                return decide_and_run(original, tuner, *args, **kwargs)
            finally:
                pinning.inside.discard(id(tuner))

        def decide_and_run(original, tuner, *args, **kwargs):
            name = kernel_name(tuner)
            chosen, source = pinning.pins.get(id(tuner)) or default_for(tuner) or (None, "")
            if chosen is not None and bundled is not None:
                bundled.PINNED.add(name)  # a bundled wrapper must not race another kernel past this pin
            candidates = [chosen]
            if len(tuner.configs) > 1 and (name not in pinning.tried or chosen is None and pinning.pin_all):
                # the autotuner's own rules (early_config_prune, perf_model + top_k), as Autotuner.run applies them
                # to each new key: pruned for this call's arguments (n = 192 may rule out what n = 1024 kept)
                pruned = pinning._pruned(name, tuner, args, kwargs)
                cached = cached_config(tuner, args, kwargs) if chosen is None and pinning.pin_all else None
                if cached is not None:  # the program's own pick for this key (tuned before, or a table it
                    # loaded into the cache: DeepSpeed's): the autotuner runs it without timing, as on the GPU
                    candidates, source = [cached], CACHED
                elif chosen is None and pinning.pin_all:
                    # the first config the autotuner would try that can run at all: like Triton's benchmark, skip
                    # the ones that fail their own tl.static_assert (they would time as inf)
                    candidates, source = pruned, "default"
                elif source == "--config" and not any(config_dict(c) == config_dict(chosen) for c in pruned):
                    source = "--config; its prune_configs_by removes it for this call: the autotuner never runs it here"
            if candidates[0] is not None and default_for(tuner) is None and source != CACHED:  # (a reproducer's saved bytes are the
                pinning._reset_after_benchmark(tuner, args, kwargs)  # ones at its launch: any reset was before)
            if candidates[0] is None:
                result = original(tuner, *args, **kwargs)
                if tuner.best_config is not None:
                    pinning.used[name] = config_dict(tuner.best_config)
                    pinning.sources[name] = "autotuned" if len(tuner.configs) > 1 else "only"
                return result
            saved = tuner.configs
            for i, chosen in enumerate(candidates):
                tuner.configs, LISTED[id(tuner)] = [chosen], saved
                refused = False
                try:
                    with trial(source == "default" and i + 1 < len(candidates)):  # another may replace it
                        return original(tuner, *args, **kwargs)
                except Exception as exc:
                    reason = not_applicable_reason(exc) if source == "default" else None
                    if reason is None:
                        raise
                    if i + 1 == len(candidates):
                        refused = True  # it did not run either: no config to report (helper-67)
                        raise RuntimeError(f"none of the {len(candidates)} configs the autotuner of {name} would try "
                                           f"can run here; the last: {reason}") from exc
                    pinning.skipped.setdefault(name, []).append(f"{config_str(config_dict(chosen))}: {reason}")
                    refused = True
                finally:
                    tuner.configs = saved
                    LISTED.pop(id(tuner), None)
                    if not refused:  # (one refused in favour of the next did not run)
                        pinning._ran(name, chosen, source)

        try:
            with every_autotuner_run(make), past_tuner(self.tuners, self._past):
                yield self
        finally:
            if bundled is not None:
                bundled.PINNED.clear()
                for name, config in bundled.SERVED.items():  # run outside an autotuner (gemm's Gluon kernel)
                    self.used[name] = dict(config)
                    self.sources[name] = "raced"
            races = sys.modules.get("tritondbg.kernels._race")
            if races is not None:
                self.races = [r for sig, r in list(races.DECISIONS.items()) if sig not in decided]


    def _past(self, tuner, fn, args, kwargs):
        """A launch of ``tuner``'s jit function outside its run (a config the caller cached: vLLM's
        ``launch_autotuned``): the run's config put in, and recorded, as if the autotuner had run it."""
        if id(tuner) in self.inside:
            return kwargs
        name = kernel_name(tuner)
        chosen, source = self.pins.get(id(tuner)) or default_for(tuner) or (None, "")
        pruned = None
        if len(tuner.configs) > 1 and name not in self.tried:
            # (a pruner that wants the autotuner's own call fails here: its listed configs then)
            pruned = self._pruned(name, tuner, args, call_kwargs(tuner, kwargs), tolerant=True)
        if chosen is None and self.pin_all:
            chosen, source = (pruned or self.tried.get(name) or tuner.configs)[0], "default"
        past = "launched past its autotuner, with a config the caller kept"
        if chosen is None:  # a GPU run that pins nothing: the caller's config runs
            self.used[name] = {k: v for k, v in kwargs.items() if k in known_keys(tuner)}
            self.sources[name] = past
            return kwargs
        kwargs = {**kwargs, **chosen.all_kwargs()}
        if chosen.pre_hook is not None:
            chosen.pre_hook({**dict(zip(fn.arg_names, args)), **kwargs})
        self._ran(name, chosen, f"{source}; {past}: this config put in its place")
        return kwargs

    def _pruned(self, name: str, tuner, args, kwargs, tolerant: bool = False) -> list:
        """The configs ``tuner``'s own rules keep for this call (early_config_prune, perf_model + top_k, as
        Autotuner.run applies them to each new key), noted as what it would try; ``tolerant``: its listed configs
        when the pruning fails."""
        try:
            tuner.nargs = dict(zip(tuner.arg_names, args))
            pruned = list(tuner.prune_configs(kwargs))
        except Exception:  # noqa: BLE001
            if not tolerant:
                raise
            pruned = list(tuner.configs)
        self.tried.setdefault(name, pruned)
        _LAST_TRIED.setdefault(name, pruned)
        return pruned

    def _ran(self, name: str, config, source: str) -> None:
        """``config`` ran for kernel ``name``, chosen by ``source``: the record's config and the sweep's list."""
        self.used[name] = config_dict(config)
        self.sources[name] = source
        if self.used[name] not in self.ran.setdefault(name, []):
            self.ran[name].append(self.used[name])

    def _reset_after_benchmark(self, tuner, args, kwargs) -> None:
        """Triton's autotuner, on the first call with a new key, benchmarks the configs and then zeroes the
        ``reset_to_zero`` arguments before the real launch (``pre_hook(..., reset_only=True)``); a pinned config
        skips the benchmark, so do that reset here: the first call's outputs are then what the GPU's are (a later
        call with the same key gets no reset, on the GPU as here)."""
        if len(tuner.configs) < 2 or not getattr(tuner, "reset_to_zero", None):
            return
        nargs = dict(zip(tuner.arg_names, args))
        given = {**nargs, **kwargs}
        key = tuple([given[k] for k in getattr(tuner, "keys", ()) if k in given]
                    + [str(v.dtype) for k, v in given.items() if k in tuner.arg_names and hasattr(v, "dtype")])
        seen = self.keys_seen.setdefault(id(tuner), set())
        try:
            if key in seen:
                return
            seen.add(key)
            tuner.nargs = nargs
            if len(tuner.prune_configs(kwargs)) > 1:  # one config left: Triton runs it without a benchmark
                tuner.pre_hook(given, reset_only=True)
        except Exception:  # noqa: BLE001 - an autotuner of another shape: leave its arguments as they are
            pass


def _bundled_launch():
    """The bundled kernels' launch module when they are loaded (it carries what their wrappers ran outside an
    autotuner, ``SERVED``, and takes the pins, ``PINNED``), else None: pinning a user's kernel imports nothing."""
    import sys

    return sys.modules.get("tritondbg.kernels._launch")


_LAST_TRIED: dict[str, list] = {}


def tried_configs(run) -> dict[str, list]:
    """kernel name -> the configs its autotuner would try (Triton's ``prune_configs``: ``early_config_prune``,
    ``perf_model`` + ``top_k``), as seen by the interpreted launches ``run()`` makes. Kernels it does not
    launch are absent."""
    _LAST_TRIED.clear()
    run()
    return dict(_LAST_TRIED)


def plan(kernels, case_config: dict[str, Any] | None, requested: dict[str, Any], *, interpret: bool,
         exact: dict[str, Any] | None = None) -> Pinning:
    """Decide which config each autotuned kernel of a scenario runs with.

    ``exact``: kernel name -> triton.Config to run as is (an all-configs sweep), overriding the rest."""
    tuners = autotuners(kernels)
    check_keys(tuners, requested)
    picks = choose_requested(tuners, requested)
    pins: dict[int, tuple[Any, str]] = {}
    for name, tuner in tuners.items():
        if exact and name in exact:
            pins[id(tuner)] = (exact[name], "sweep")
            continue
        chosen = picks.get(name)
        if chosen is not None:
            pins[id(tuner)] = (chosen, "--config")
            continue
        if interpret and case_config:
            chosen = choose(tuner, name, dict(case_config), strict=False)
            if chosen is not None:
                pins[id(tuner)] = (chosen, "case")
    return Pinning(pins, pin_all=interpret, tuners=tuners.values())
