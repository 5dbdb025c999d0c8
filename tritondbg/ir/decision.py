"""Which autotune config `ir` compiles, and why (always printed).

Order: ``--config`` (or the one an ``--all-configs`` sweep pins) > the config a reproducer's launch asks for
(``configs.default_pin``: the program's own pick) > the only config left after the kernel's own
pruning (the autotuner runs it without benchmarking) > a recorded decision: Triton's ``{fn}.autotune.json``
(written when ``cache_results=True`` / ``TRITON_CACHE_AUTOTUNING=1``), then the newest compiled-mode run
record of the same kernel, case and dtype > the case's config > the first config left after pruning.
"""
from __future__ import annotations

import contextlib
import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritondbg.configs import autotune_key as tuning_key  # noqa: F401 (tests/ir_helper.py imports it from here)
from tritondbg.configs import choose, config_dict, config_str, default_for

RECORD_LIMIT = 30  # newest compiled run records read per call: each is a small JSON file (~2 ms)


class _NoRecord(Exception):
    """Raised into Triton's check_disk_cache instead of benchmarking: there is no recorded decision."""


@dataclass
class Watch:
    """Files whose appearance would change a default decision (the fast index re-checks them)."""

    globs: dict[str, list[str]] = field(default_factory=dict)

    def add(self, pattern: str) -> None:
        if pattern not in self.globs:
            self.globs[pattern] = sorted(glob.glob(pattern))

    @staticmethod
    def still_valid(globs: dict[str, list[str]]) -> bool:
        return all(sorted(glob.glob(p)) == seen for p, seen in globs.items())


def run_record_pattern(out_dir: str) -> str:
    """Where `tritondbg run` saves records (commands/execute.run_folder, tritondbg.record.record_path)."""
    from tritondbg.record import RECORD_DIR, RECORD_NAME

    return os.path.join(os.path.abspath(out_dir), "*-compiled-*", RECORD_DIR, RECORD_NAME)


def recorded_runs(out_dir: str, scenario: str, case: str, dtype: str) -> list[tuple[dict, str, str]]:
    """(config per kernel, record path, GPU name) of compiled runs that autotuned this scenario/case/dtype,
    newest first."""
    legacy = os.path.join(os.path.abspath(out_dir), "*-compiled-*", "record.json")  # before tritondbg/ existed
    paths = glob.glob(run_record_pattern(out_dir)) + glob.glob(legacy)
    paths = sorted(paths, key=lambda p: Path(p).relative_to(os.path.abspath(out_dir)).parts[0],
                   reverse=True)[:RECORD_LIMIT]
    found = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        gpu = (data.get("environment") or {}).get("gpu") or "a GPU"
        for r in data.get("results", []):
            if (r.get("kernel"), r.get("case"), r.get("dtype"), r.get("mode")) != (scenario, case, dtype, "compiled"):
                continue
            tuned = {k: v for k, v in (r.get("config") or {}).items()
                     if (r.get("config_source") or {}).get(k) == "autotuned"}
            if tuned:
                found.append((tuned, path, gpu))
    return found


def autotune_json(tuner, args, kwargs, pruned, cache_dir: str, name: str):
    """(config recorded in Triton's ``{fn}.autotune.json`` for this target and key, or None; the file's path).

    Uses the autotuner's own ``check_disk_cache`` (so the key is computed as the running Triton computes it; the
    stub driver makes it the requested target's) with a "benchmark" that raises instead of running, and watches
    which cache folder it opens, so the exact file is known even when it does not exist yet."""
    import triton.runtime.autotuner as autotuner_module

    check = getattr(tuner, "check_disk_cache", None)
    if check is None or not isinstance(getattr(tuner, "cache", None), dict):
        return None, None   # a library's autotuner keeping its own cache (FlagGems' LibTuner: a database)
    key = tuning_key(tuner, args, kwargs)
    opened = []
    original_manager = getattr(autotuner_module, "get_cache_manager", None)

    def no_bench():
        raise _NoRecord

    def spy(cache_key):
        manager = original_manager(cache_key)
        opened.append(getattr(manager, "cache_dir", None))
        return manager

    saved = dict(tuner.cache)
    before = set(_listdir(cache_dir))
    if original_manager is not None:
        autotuner_module.get_cache_manager = spy
    try:
        found = bool(check(key, pruned, no_bench))
        chosen = tuner.cache.get(key) if found else None
    except Exception:  # noqa: BLE001 - _NoRecord, or an unreadable record: no record; the default applies
        chosen = None
    finally:
        if original_manager is not None:
            autotuner_module.get_cache_manager = original_manager
        tuner.cache.clear()
        tuner.cache.update(saved)
        for new in set(_listdir(cache_dir)) - before:   # Triton's cache manager made the key folder to look in
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(cache_dir, new))   # only succeeds when empty
    path = os.path.join(opened[-1], f"{name[:150]}.autotune.json") if opened and opened[-1] else None
    return chosen, path


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


@dataclass
class Decider:
    """Decides each autotuned launch's config for one capture; ``watch`` lists what a cached answer relies on."""

    requested: dict[str, Any]
    case_name: str
    case_config: dict[str, Any] | None
    records: list[tuple[dict, str, str]]
    cache_dir: str
    record_pattern: str
    picks: dict[str, Any] = field(default_factory=dict)  # kernel name -> its --config match or None (configs.py)
    pins: dict[str, Any] = field(default_factory=dict)   # kernel name -> exact triton.Config (--all-configs)
    watch: Watch = field(default_factory=Watch)
    kept: dict[str, list[dict]] = field(default_factory=dict)  # kernel -> configs its pruning keeps (swept)
    kept_configs: dict[str, list] = field(default_factory=dict)  # the same, the Config objects it returned
    # kernel name -> Autotuner of every autotuned launch decided, listed in Scenario.kernels or not (swept)
    tuners: dict[str, Any] = field(default_factory=dict)

    def decide(self, tuner, name: str, args, kwargs) -> tuple[Any, str]:
        self.tuners.setdefault(name, tuner)
        if name in self.pins:
            # what the kernel's own pruning keeps for these arguments: a pruned config never runs for them
            tuner.nargs = dict(zip(tuner.arg_names, args))
            self.kept_configs[name] = list(tuner.prune_configs(kwargs))
            self.kept[name] = [config_dict(c) for c in self.kept_configs[name]]
            return self.pins[name], "--all-configs"
        if self.requested:
            chosen = self.picks[name] if name in self.picks else choose(tuner, name, self.requested, strict=True)
            if chosen is not None:
                return chosen, "--config"
        asked = default_for(tuner)  # a reproducer's captured config
        if asked is not None:
            return asked
        tuner.nargs = dict(zip(tuner.arg_names, args))
        pruned = tuner.prune_configs(kwargs)
        if len(pruned) == 1:
            n = len(tuner.configs)
            return pruned[0], ("the only config" if n == 1 else
                               f"the only one of {n} configs left after the kernel's pruning (no benchmark needed)")
        chosen, path = autotune_json(tuner, args, kwargs, pruned, self.cache_dir, name)
        # a cached answer stays valid while this exact record file stays absent (or present)
        self.watch.add(glob.escape(path) if path else
                       os.path.join(glob.escape(self.cache_dir), "*", f"{name[:150]}.autotune.json"))
        if chosen is not None:
            return chosen, f"recorded autotune decision {path}"
        self.watch.add(self.record_pattern)
        for tuned, path, gpu in self.records:
            if name in tuned:
                chosen = choose(tuner, name, tuned[name], strict=False)
                if chosen is not None and _listed(tuner, chosen):
                    return chosen, f"autotuned on {gpu} (run record {path})"
        if self.case_config:
            chosen = choose(tuner, name, dict(self.case_config), strict=False)
            if chosen is not None:
                return chosen, f"case {self.case_name}'s config (no recorded autotune decision)"
        which = (f"first of the {len(pruned)} configs (its pruning drops none)" if len(pruned) == len(tuner.configs)
                 else f"first of the {len(pruned)} configs left after the kernel's pruning")
        return pruned[0], (f"{which} (no recorded autotune decision, and not necessarily one the GPU's autotuner "
                           "keeps; pick one with --config or see --all-configs)")


def _listed(tuner, config) -> bool:
    d = config_dict(config)
    return any(config_dict(c) == d for c in tuner.configs)


def describe(config) -> str:
    return config_str(config_dict(config))
