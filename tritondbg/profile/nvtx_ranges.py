"""The range around every profiled launch: an NVTX push/pop range in domain ``tritondbg`` (for Nsight:
``ncu --nvtx --nvtx-include "regex:tritondbg@<kernel:case:dtype>.*/"``) and a torch ``record_function`` (for the torch trace;
Kineto does not record NVTX).

The NVTX attributes are built once per case, so a launch pays only push + pop (0.1 us on the dev VM, 0.3-0.6
us on the H200 VM, with no NVTX tool attached). ``record_function`` costs 8-30 us a call even when no profiler
runs (the torch.ops dispatch), so only the launches traced inside the profiler session enter it
(``LaunchRange.recording()``): outside one it would record nothing anyway (tests/bench/profile.md).

Messages contain no ``/`` (ncu reads ``/`` as the separator of nested push/pop ranges) and no ``@``.
"""
from __future__ import annotations

import copy
import re

from typing import Any, Mapping

DOMAIN = "tritondbg"

_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "f8e4m3", "float64": "f64",
          "int32": "i32", "int64": "i64", "int8": "i8", "uint8": "u8", "bool": "b1"}


def _clean(text: str) -> str:
    return text.replace("/", "|").replace("@", "at")


def config_text(config: Mapping[str, Mapping[str, Any]]) -> str:
    """``{"add_kernel": {"BLOCK": 1024, "num_warps": 4}}`` -> ``"add_kernel BLOCK=1024 num_warps=4"``."""
    return "; ".join(f"{k} " + " ".join(f"{n}={v}" for n, v in cfg.items()) for k, cfg in config.items())


def shapes_text(inputs: Mapping[str, Any]) -> str:
    """Tensor inputs as ``name=dtype[d0xd1]`` (no commas, to keep ncu filter expressions simple) plus small
    scalars: ``x=f32[4099] y=f32[4099]``."""
    parts = []
    for name, v in inputs.items():
        shape = getattr(v, "shape", None)
        if shape is not None and hasattr(v, "dtype"):
            dt = str(v.dtype).replace("torch.", "")
            parts.append(f"{name}={_SHORT.get(dt, dt)}[{'x'.join(str(d) for d in shape)}]")
        elif isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) < 16):
            parts.append(f"{name}={v}")
    return " ".join(parts)


def range_name(scenario: str, case: str, dtype: str) -> str:
    """The stable part of a range name, ``scenario:case:dtype`` (also the record_function name)."""
    return _clean(f"{scenario}:{case}:{dtype}")


def range_message(scenario: str, case: str, dtype: str, config: Mapping[str, Mapping[str, Any]],
                  inputs: Mapping[str, Any], phase: str = "") -> str:
    """The NVTX message: ``add:tiny:float32 | add_kernel BLOCK=1024 num_warps=4 | x=f32[4099] y=f32[4099]``."""
    parts = [range_name(scenario, case, dtype)]
    if phase:
        parts[0] += f" ({phase})"
    cfg = config_text(config)
    if cfg:
        parts.append(cfg)
    shapes = shapes_text(inputs)
    if shapes:
        parts.append(shapes)
    return _clean(" | ".join(parts))


def _domain():
    try:
        import nvtx
    except ImportError:  # nvtx is a dependency; a broken install should not stop profiling
        return None
    return nvtx.get_domain(DOMAIN)


def nvtx_state() -> dict[str, bool]:
    """Whether NVTX calls are made (the nvtx package, not NVTX_DISABLE) and whether a tool records them
    (Nsight Systems/Compute load through NVTX_INJECTION64_PATH)."""
    import os

    try:
        import nvtx

        available = bool(nvtx.enabled())
    except ImportError:
        available = False
    return {"available": available, "tool_attached": bool(os.environ.get("NVTX_INJECTION64_PATH"))}


class LaunchRange:
    """``with rng: launch()``: an NVTX push/pop (domain tritondbg) around the launch; ``with
    rng.recording(): launch()`` also enters a torch ``record_function``, for launches inside a torch.profiler
    session. The caller knows whether it is inside one, so a launch never asks the profiler. Measured on the
    H200 VM (2026-11-29, tests/bench/profile.md): +0.46 us a launch for the plain range."""

    def __init__(self, name: str, message: str, payload: int | None = None, record: bool = False):
        import torch

        self.name = name
        self.message = message
        self._record_function = torch.autograd.profiler.record_function
        self._record = record
        self._domain = _domain()
        self._attrs = None
        if self._domain is not None:
            self._attrs = self._domain.get_event_attributes(message=message, payload=payload)
        self._rf = None

    def recording(self) -> "LaunchRange":
        """The same range, also recorded as a torch ``record_function`` (use inside a profiler session)."""
        twin = copy.copy(self)
        twin._record, twin._rf = True, None
        return twin

    def __enter__(self) -> "LaunchRange":
        if self._attrs is not None:
            self._domain.push_range(self._attrs)
        if self._record:
            self._rf = self._record_function(self.name)
            self._rf.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._rf is not None:
            self._rf.__exit__(exc_type, exc, tb)
            self._rf = None
        if self._attrs is not None:
            self._domain.pop_range()

    def describe(self) -> dict[str, Any]:
        """What the record keeps about this range."""
        return {"domain": DOMAIN, "message": self.message, "record_function": self.name,
                "ncu_filter": ncu_filter(self.message)}


def ncu_filter(message: str) -> str:
    """An ``ncu --nvtx-include`` filter for this case's ranges (the first launch's and the traced ones).

    The literal form ``tritondbg@<message>/`` profiled nothing on the H200 (ncu 2025.3, 2026-11-29: the message
    holds ``|``, ``[`` and ``=``); the regex form on the ``kernel:case:dtype`` prefix profiled exactly the
    case's launches (``--iters 2``: 3 add_kernel launches, the first one included)."""
    prefix = message.split(" ", 1)[0]
    return f"regex:{DOMAIN}@{re.escape(prefix)}.*/"
