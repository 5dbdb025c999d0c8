"""A readable diff of one stage between two requests (two configs, archs, cases or dtypes).

Raw IR diffs are mostly renumbering: every SSA value, register and label shifts when one op changes. Both
sides are normalised first (locations and debug sections dropped, numbered names collapsed: ``%r123`` ->
``%r``, ``%acc_45`` -> ``%acc``, ``R12`` -> ``R``), then compared with difflib; the stats of both sides come
first, so the headline (wgmma vs mma, registers, vector widths) is visible without reading the diff.
"""
from __future__ import annotations

import difflib
import re

from tritondbg.errors import UsageError

DIFF_KEYS = ("arch", "case", "dtype", "config")

_MLIR_SUBS = [(re.compile(r"\sloc\(.*\)\s*$"), ""), (re.compile(r"%([A-Za-z_][\w]*?)_\d+\b"), r"%\1"),
              (re.compile(r"%\d+\b"), "%N"), (re.compile(r"\^bb\d+"), "^bb")]
_LLIR_SUBS = [(re.compile(r",?\s*!dbg\s+![0-9]+"), ""), (re.compile(r"%\d+\b"), "%N"),
              (re.compile(r"%([A-Za-z_.][\w.]*?)\d+\b"), r"%\1"), (re.compile(r"![0-9]+"), "!N")]
_PTX_SUBS = [(re.compile(r"%(r|rd|rs|f|fd|p|h|hh|b)\d+"), r"%\1"), (re.compile(r"\$L__\w+?\d+(_\d+)?"), "$L"),
             (re.compile(r"//.*$"), "")]
_SASS_SUBS = [(re.compile(r"/\*[0-9a-f]{4,}\*/"), ""), (re.compile(r"/\* 0x[0-9a-f]+ \*/"), ""),
              (re.compile(r"\b(U?R|U?P)\d+\b"), r"\1"), (re.compile(r"\.L_x_\d+"), ".L_x"),
              (re.compile(r"`\(\.L_x_\d+\)"), "`(.L_x)")]
_GCN_SUBS = [(re.compile(r"\b([vsa])\[\d+:\d+\]"), r"\1[..]"), (re.compile(r"\b([vsa])\d+\b"), r"\1"),
             (re.compile(r"\.LBB\d+_\d+"), ".LBB"), (re.compile(r";.*$"), "")]


def parse_side(text: str) -> dict[str, str]:
    """``arch=sm_80`` / ``case=tiny;dtype=bfloat16`` / ``config=BLOCK_M=64,num_warps=4`` -> overrides."""
    out: dict[str, str] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in DIFF_KEYS or not value.strip():
            raise UsageError(f"bad --diff side {text!r}: expected KEY=VALUE[;KEY=VALUE] with KEY in "
                             f"{', '.join(DIFF_KEYS)} (e.g. arch=sm_80, case=tiny_bt, config=BLOCK_M=64,num_warps=4)")
        out[key] = value.strip()
    if not out:
        raise UsageError(f"empty --diff side {text!r}")
    return out


def normalise(stage: str, text: str) -> list[str]:
    """The lines worth comparing, with numbering noise collapsed."""
    if stage in ("source", "ttir", "ttgir"):
        subs, drop = _MLIR_SUBS, ("#loc",)
    elif stage == "llir":
        subs, drop = _LLIR_SUBS, ("!",)
    elif stage == "ptx":
        subs, drop = _PTX_SUBS, (".loc", ".file", "//")
    elif stage == "sass":
        subs, drop = _SASS_SUBS, ("//##",)
    else:
        subs, drop = _GCN_SUBS, (".loc", ".file", ";")
    out = []
    for line in text.splitlines():
        s = line.strip()
        if stage in ("ptx", "amdgcn") and s.startswith(".section") and ".debug" in s:
            break   # DWARF sections run to the end of the file
        if not s or s.startswith(drop):
            continue
        for pattern, repl in subs:
            s = pattern.sub(repl, s)
        s = re.sub(r"\s+", " ", s).strip()
        if s:
            out.append(s)
    return out


def unified(stage: str, a_text: str, b_text: str, a_label: str, b_label: str, context: int = 2) -> list[str]:
    a, b = normalise(stage, a_text), normalise(stage, b_text)
    return list(difflib.unified_diff(a, b, fromfile=a_label, tofile=b_label, n=context, lineterm=""))


def stats_rows(a: dict, b: dict) -> list[tuple[str, str, str]]:
    """(name, A, B) rows for the numbers that differ or matter (always registers, spills, shared)."""
    rows = []
    for key in ("n_regs", "n_spills", "shared", "num_warps", "num_stages"):
        rows.append((key, _fmt(a.get(key)), _fmt(b.get(key))))
    mix_a, mix_b = a.get("instruction_mix", {}), b.get("instruction_mix", {})
    for source in sorted(set(mix_a) | set(mix_b)):
        names = sorted(set(mix_a.get(source, {})) | set(mix_b.get(source, {})))
        for n in names:
            va, vb = mix_a.get(source, {}).get(n, 0), mix_b.get(source, {}).get(n, 0)
            rows.append((f"{source}: {n}", str(va), str(vb)))
    return rows


def _fmt(v) -> str:
    return "-" if v is None else str(v)
