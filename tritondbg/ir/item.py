"""IRItem: one compiled kernel of one `ir` request, as every output (console, --json, --diff, index) reads it."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

# how the entry was obtained, as printed in "cache hit/miss" lines and checked by tests
COMPILED = "compiled"          # Triton's compile cache had no entry: compiled now and stored
TRITON_HIT = "triton-cache"    # Triton's compile cache had it (key recomputed from the real arguments)
INDEX_HIT = "index"            # found through tritondbg's request index (no torch import), files verified
IN_PROCESS = "in-process"      # compiled earlier in this process (--diff/--all-configs reuse)
NOT_COMPILED = "not-compiled"  # listed only (a pruned config the resources gate does not need compiled)


@dataclass
class IRItem:
    scenario: str
    case: str
    dtype: str
    arch: str                     # "sm_90", "gfx942"
    arch_source: str              # why this arch ("--arch", "local GPU (nvidia-smi)", "default (no local GPU)")
    kernel: str                   # the @triton.jit function name
    kernel_file: str              # its Python file (for the source map)
    config: dict[str, Any]
    config_source: str
    grid: list[int] | None
    specialization: list[dict[str, Any]]   # per parameter: name, type, kind, value / divisible_by
    entry: str                    # the Triton cache entry folder
    files: dict[str, str]         # stage extension -> file in the entry (source, ttir, ..., cubin / hsaco)
    metadata_file: str
    name: str                     # the compiled kernel's name in the entry (file stem)
    source: str = COMPILED
    compile_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return os.path.basename(self.entry)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "IRItem":
        return cls(**d)

    def short_spec(self) -> str:
        """``a_ptr:*fp16/16 M:i32/16 stride_ak=1 BLOCK_M=16`` - what the compiler specialised on."""
        parts = []
        for p in self.specialization:
            if p["kind"] == "arg":
                div = f"/{p['divisible_by']}" if p.get("divisible_by") else ""
                parts.append(f"{p['name']}:{p['type']}{div}")
            else:
                parts.append(f"{p['name']}={p['value']}")
        return " ".join(parts)


def specialization(fn, src) -> list[dict[str, Any]]:
    """Per parameter of ``fn``: its type in the compiled signature and what it was specialised on, from the
    ASTSource Triton compiled (signature, constants keyed by (index,), attrs like [['tt.divisibility', 16]])."""
    out = []
    signature = dict(getattr(src, "signature", {}) or {})
    constants = dict(getattr(src, "constants", {}) or {})
    attrs = dict(getattr(src, "attrs", {}) or {})
    for i, p in enumerate(fn.params):
        ty = signature.get(p.name, "?")
        entry: dict[str, Any] = {"name": p.name, "type": str(ty)}
        if ty == "constexpr":
            value = constants.get((i,), constants.get(p.name))
            entry["kind"] = "constexpr" if p.is_constexpr else "specialised"  # an int == 1 (or None) argument
            entry["value"] = _show(value)
        else:
            entry["kind"] = "arg"
            for a in attrs.get((i,), []) or []:
                if isinstance(a, (list, tuple)) and len(a) == 2 and "divisibility" in str(a[0]):
                    entry["divisible_by"] = int(a[1])
        out.append(entry)
    return out


def _show(value) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    name = getattr(value, "__name__", None)
    return name if name else str(value)
