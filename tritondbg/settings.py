"""Typed settings read from the environment, in one place (after Triton's knobs.py)."""
from __future__ import annotations

import os
from dataclasses import dataclass


def _bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Settings:
    out_dir: str          # TRITONDBG_OUT: where run records and traces go (default ./traces)
    debug: bool           # TRITONDBG_DEBUG=1: show full tracebacks instead of one-line errors
    save_records: bool    # TRITONDBG_SAVE=0 disables writing run records

    @classmethod
    def from_env(cls) -> "Settings":
        return cls(
            out_dir=os.environ.get("TRITONDBG_OUT", "traces"),
            debug=_bool("TRITONDBG_DEBUG"),
            save_records=_bool("TRITONDBG_SAVE", True),
        )


def get() -> Settings:
    return Settings.from_env()
