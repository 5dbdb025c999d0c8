"""A captured launch of an autotuned kernel, replayed through its autotuner.

The program's autotuner picked one config; the reproducer runs that one by default. It runs through the kernel's
own Autotuner (its configs, ``prune_configs_by``, hooks) rather than the bare jit function, so ``check --gates
all-configs`` and ``interpret --all-configs`` on a reproducer sweep every config the program's autotuner could
have picked, and ``--config`` picks another. A grid given as a function of the config (``lambda meta:
(cdiv(n, meta["BLOCK"]),)``) is evaluated at capture for every listed config (``config_grids``), since the
recorded grid fits the picked config only.

Capture side: ``config_of``, ``config_grids``. Replay side: ``launch``.
"""
from __future__ import annotations

import copy

from tritondbg.configs import (CONFIG_ATTRS, NotApplicable, choose, config_dict, deciding, default_pin, find_autotuner,
                               heuristics_in, kernel_name)


def plain(value):
    """JSON-able form of option/config values (ints, floats, strings; else their repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def config_of(launch) -> dict | None:
    """The config the program's autotuner picked for ``launch`` (an ``attach.Launch``), as a flat dict."""
    cfg = launch.config
    if cfg is None:
        return None
    out = {k: plain(v) for k, v in dict(getattr(cfg, "kwargs", {}) or {}).items()}
    for k in CONFIG_ATTRS:
        if getattr(cfg, k, None) is not None:
            out[k] = plain(getattr(cfg, k))
    return out


def config_grids(launch) -> list[dict] | None:
    """[{"config": flat dict, "grid": [x, y, z]}] for every config the launch's autotuner lists, when its grid is a
    function of the config; [] when the grid is fixed; None for a launch no autotuner made (nothing to replay)."""
    if launch.config is None or not launch.configs:
        return None
    if not callable(launch.grid):
        return []
    out, listed = [], list(launch.configs)
    if not any(config_dict(c) == config_dict(launch.config) for c in listed):
        listed.append(launch.config)  # one its prune_configs_by made up (not among the listed): the launch's own
    for cfg in listed:
        meta = {**launch.args, **launch.options, **cfg.all_kwargs()}
        for heuristics in launch.extra.get("heuristics", ()):  # @triton.heuristics under the autotuner: their
            for name, rule in heuristics.values.items():       # values follow the config (the launch's own
                try:                                            # were computed for the captured one)
                    meta[name] = rule(meta)
                except Exception:  # noqa: BLE001 - a rule this config breaks: the grid call below says so
                    pass
        try:
            grid = tuple(int(g) for g in launch.grid(meta))
        except Exception:  # noqa: BLE001 - a grid this config cannot have: it is not replayed
            continue
        out.append({"config": {k: plain(v) for k, v in config_dict(cfg).items()}, "grid": list(grid)})
    try:  # last with the launch's own arguments: a grid function that records what it returned (the number of
        launch.grid({**launch.args, **launch.options})  # partial sums to add up) is left as the launch left it
    except Exception:  # noqa: BLE001
        pass
    return out


def _grid_for(grids: list[dict], fixed: list, ran: dict, captured: dict):
    """The grid callable of a replay: the capture's grid of whichever config the autotuner runs (matched on the
    config's kernel arguments: the launch options are not among the arguments a grid function is given).
    ``ran["other"]``: whether that config's kernel arguments are not the captured config's. A config's keyword
    that is no kernel argument (AMD's ``waves_per_eu``, ``matrix_instr_nonkdim``, ``kpack``: compile options
    Triton takes from a config's kwargs) is not in ``meta`` and not compared (helper-138: FBGEMM's fp8 configs
    were "not recorded at capture")."""
    def grid(meta):
        def args_of(config: dict) -> dict:
            return {k: v for k, v in config.items() if k not in CONFIG_ATTRS and k in meta}

        ran["other"] = any(plain(meta.get(k)) != v for k, v in args_of(captured).items())
        for entry in grids:
            if all(plain(meta.get(k)) == v for k, v in args_of(entry["config"]).items()):
                ran["grid"] = tuple(entry["grid"])
                return ran["grid"]
        if grids:
            raise NotApplicable("this config's grid was not recorded at capture: the program's grid function "
                             "could not be evaluated for it")
        ran["grid"] = tuple(fixed)
        return ran["grid"]
    return grid


def _listed(tuner, wanted: dict):
    """The listed config (the object itself: its pre_hook comes with it) equal to the captured one."""
    want = {"num_ctas": 1, **wanted}
    for cfg in tuner.configs:
        have = {"num_ctas": 1, **{k: plain(v) for k, v in config_dict(cfg).items()}}
        if have == want:
            return cfg
    return None


def launch(kernel, meta: dict, args: dict, options: dict, ran: dict) -> bool:
    """Launch ``kernel`` (the object the program launched: an Autotuner, maybe under Heuristics) through its
    autotuner, pinned to the captured config unless the run pinned another (a sweep, ``--config``). False when
    this launch cannot go that way (no autotuner, a reproducer written before configs' grids were saved, or no
    tritondbg run deciding configs, where the autotuner would benchmark): the caller launches the jit function
    with the captured config. ``ran``: the grid of the config that ran, whether it is another than the captured."""
    tuner = find_autotuner(kernel)
    grids = meta.get("config_grids")
    if tuner is None or not meta.get("config") or grids is None or not deciding():
        return False
    captured = _listed(tuner, meta["config"]) or choose(tuner, kernel_name(tuner), meta["config"], strict=False)
    added = {k: v for k, v in meta["config"].items() if k not in CONFIG_ATTRS and k not in captured.kwargs}
    if added:  # keys the autotuner's pruning added to the config it picked (gemlite's NUM_STAGES): kept
        captured = copy.copy(captured)
        captured.kwargs = {**captured.kwargs, **added}
    # what the autotuner and the @triton.heuristics (above or under it) give: not passed, they give it again
    given = {k for c in tuner.configs for k in c.kwargs} | set(meta["config"])
    given |= {name for h in heuristics_in(kernel) for name in h.values}
    # positionally up to the first argument they give (an early_config_prune reads them from the autotuner's
    # nargs, which holds the positional ones only), the rest by name, and by name those the program passed so (the
    # pruner reads them from its **kwargs: gemlite's kernel_config_pruner, kwargs['load_scales_as_block'])
    positional, named, past = [], {}, False
    by_name = set(meta.get("by_name") or ())
    for k, v in args.items():  # the kernel's parameter order (capture bound them to its signature)
        past = past or k in given or k in by_name
        if k in given:
            continue
        if past:
            named[k] = v
        else:
            positional.append(v)
    call_opts = {k: v for k, v in options.items() if k not in CONFIG_ATTRS and k not in given}
    with default_pin(tuner, captured, "captured"):
        kernel[_grid_for(grids, meta["grid"], ran, meta["config"])](*positional, **named, **call_opts)
    return True


def will_benchmark(tuner, args: tuple, kwargs: dict) -> bool:
    """Whether ``tuner.run(*args, **kwargs)`` is about to time its configs: more than one config and its key
    (Triton 3.6-3.9's: the key arguments, then every argument's dtype) not in its cache. True when unsure."""
    from tritondbg.configs import autotune_key

    try:
        if len(tuner.configs) <= 1:
            return False
        key = autotune_key(tuner, args, kwargs)
        return key is None or key not in tuner.cache
    except Exception:  # noqa: BLE001 - another Triton's autotuner: assume it times
        return True
