"""Map IR lines back to the Python kernel lines that produced them, and interleave the two.

Where each stage keeps its locations:
- TTIR/TTGIR (MLIR): ``loc(#locN)`` on each op; ``#locN = loc("file":line:col)``, ``loc("name"(#locM))``,
  ``loc(callsite(#callee at #caller))``, ``loc(fused[...])``.
- LLVM IR: ``!dbg !N`` -> ``!N = !DILocation(line:, scope:, inlinedAt:)``, the scope chain ends in a ``!DIFile``.
- PTX / AMDGCN: ``.file N "path"`` (or ``"dir" "name"``) and ``.loc N line col[, ..., inlined_at N line col]``,
  applying to the instructions that follow.
- SASS: nvdisasm ``-gi`` comments ``//## File "path", line L [inlined at "path", line L]...``.
Where a location lies in Triton's own package with no caller (AMDGCN's .loc; Triton 3.6's cubins, for tl.max's
reduce in standard.py), it is put at the kernel line located last.
Each line gets a frame stack (innermost first); it is shown at the innermost frame outside Triton's own
package (a ``tl.cdiv`` inlined into the kernel maps to the kernel line that called it).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

Frame = tuple[str, int]   # (file, line)

_COMMENT = {"source": "//", "ttir": "//", "ttgir": "//", "llir": ";", "ptx": "//", "sass": "//", "amdgcn": ";"}


@dataclass
class Mapped:
    """One IR line and where it came from (``frame`` None: no location)."""

    number: int          # 1-based line number in the IR text
    text: str
    frame: Frame | None
    frames: tuple[Frame, ...]


def _library_dirs() -> tuple[str, ...]:
    import importlib.util

    spec = importlib.util.find_spec("triton")
    return (os.path.dirname(spec.origin) + os.sep,) if spec and spec.origin else ()


def pick_frame(frames, library=None) -> Frame | None:
    """The innermost frame outside the Triton package, else the innermost. Line 0 is DWARF's "no line"
    (code the compiler made up, e.g. ``.loc 1 0 0`` in PTX): no frame."""
    frames = [f for f in frames if f[1] > 0]
    if not frames:
        return None
    library = _library_dirs() if library is None else library
    for f in frames:
        if not f[0].startswith(library) or not library:
            return f
    return frames[0]


def _with_caller(frames, library, last_user):
    """(frames, last_user) after a location: frames that lie only in Triton's package carry no caller in
    AMDGCN's .loc nor in Triton 3.6's cubins (tl.max's reduce in standard.py): that code was inlined at the kernel
    line located last, appended as their caller; any other location becomes the kernel line located last."""
    if library and frames and all(f[0].startswith(library) for f in frames if f[1] > 0):
        return frames + ((last_user,) if last_user else ()), last_user
    return frames, pick_frame(frames, library) or last_user


# ---------------------------------------------------------------------------------------------- MLIR
_MLIR_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_MLIR_TRAILING = re.compile(r"\sloc\((.*)\)\s*$")


def _split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside parentheses, brackets and quotes."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted:
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and text.startswith(sep, i):
                parts.append(text[start:i])
                i += len(sep)
                start = i
                continue
        i += 1
    parts.append(text[start:])
    return parts


class _MlirLocs:
    def __init__(self, text: str):
        self.aliases = {}
        for line in text.splitlines():
            m = _MLIR_ALIAS.match(line.strip())
            if m:
                self.aliases[m.group(1)] = m.group(2)
        self.memo: dict[str, tuple[Frame, ...]] = {}

    def resolve(self, expr: str, depth: int = 0) -> tuple[Frame, ...]:
        expr = expr.strip()
        if depth > 64:
            return ()
        if expr in self.memo:
            return self.memo[expr]
        frames: tuple[Frame, ...] = ()
        if expr.startswith("#loc"):
            frames = self.resolve(self.aliases.get(expr, ""), depth + 1)
        elif expr.startswith("callsite(") and expr.endswith(")"):
            parts = _split_top(expr[len("callsite("):-1], " at ")
            if len(parts) == 2:
                frames = self.resolve(parts[0], depth + 1) + self.resolve(parts[1], depth + 1)
        elif expr.startswith("fused"):
            inner = expr[expr.find("[") + 1:expr.rfind("]")]
            for part in _split_top(inner, ","):
                frames = self.resolve(part, depth + 1)
                if frames:
                    break
        elif expr.startswith('"'):
            m = re.match(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)', expr)
            if m:
                frames = ((m.group(1), int(m.group(2))),)
            else:  # a named location: "name"(inner)
                m = re.match(r'^"(?:[^"\\]|\\.)*"\((.*)\)$', expr)
                if m:
                    frames = self.resolve(m.group(1), depth + 1)
        self.memo[expr] = frames
        return frames


def _map_mlir(text: str) -> list[Mapped]:
    locs = _MlirLocs(text)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#loc"):
            continue
        m = _MLIR_TRAILING.search(line)
        frames = locs.resolve(m.group(1)) if m else ()
        shown = line[:m.start()] if m else line
        out.append(Mapped(n, shown, pick_frame(frames), frames))
    return out


# ---------------------------------------------------------------------------------------------- LLVM IR
_LL_META = re.compile(r"^(![0-9]+)\s*=\s*(?:distinct\s+)?!(\w+)\((.*)\)\s*$")


def _map_llir(text: str) -> list[Mapped]:
    meta: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        m = _LL_META.match(line)
        if m:
            meta[m.group(1)] = (m.group(2), m.group(3))

    def field(body: str, name: str) -> str | None:
        m = re.search(rf"\b{name}:\s*(\"(?:[^\"\\]|\\.)*\"|![0-9]+|[0-9]+)", body)
        return m.group(1) if m else None

    @lru_cache(maxsize=None)
    def file_of(ref: str, depth: int = 0) -> str | None:
        kind, body = meta.get(ref, ("", ""))
        if kind == "DIFile":
            name, directory = (field(body, "filename") or '""')[1:-1], (field(body, "directory") or '""')[1:-1]
            return name if os.path.isabs(name) else os.path.join(directory, name)
        for key in ("file", "scope"):
            nxt = field(body, key)
            if nxt and nxt.startswith("!") and depth < 32:
                found = file_of(nxt, depth + 1)
                if found:
                    return found
        return None

    @lru_cache(maxsize=None)
    def frames_of(ref: str, depth: int = 0) -> tuple[Frame, ...]:
        kind, body = meta.get(ref, ("", ""))
        if kind != "DILocation" or depth > 32:
            return ()
        line, scope, inlined = field(body, "line"), field(body, "scope"), field(body, "inlinedAt")
        file = file_of(scope) if scope else None
        here = ((file, int(line)),) if file and line and line.isdigit() else ()
        return here + (frames_of(inlined, depth + 1) if inlined else ())

    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if _LL_META.match(line):
            continue
        m = re.search(r",?\s*!dbg\s+(![0-9]+)", line)
        frames = frames_of(m.group(1)) if m else ()
        shown = line[:m.start()] + line[m.end():] if m else line
        out.append(Mapped(n, shown, pick_frame(frames), frames))
    return out


# ---------------------------------------------------------------------------------------------- PTX / AMDGCN
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,?\s*"([^"]*)")?')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)$")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+\d+")


def _map_asm(text: str) -> list[Mapped]:
    files: dict[str, str] = {}
    for line in text.splitlines():
        m = _FILE.match(line)
        if m:
            a, b = m.group(2), m.group(3)
            files[m.group(1)] = os.path.join(a, b) if b is not None and not os.path.isabs(b) else (b or a)
    library = _library_dirs()
    out, frames, in_debug, last_user = [], (), False, None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(".section") and ".debug" in stripped:
            in_debug = True   # DWARF sections at the end of PTX: no instructions there
        if in_debug or _FILE.match(line):
            continue
        m = _LOC.match(line)
        if m:
            frames = ((files.get(m.group(1), "?"), int(m.group(2))),) + tuple(
                (files.get(f, "?"), int(ln)) for f, ln in _INLINED.findall(m.group(3)))
            frames, last_user = _with_caller(frames, library, last_user)
            continue
        if not stripped or stripped.startswith(("//", ";")):
            out.append(Mapped(n, line, None, ()))
            continue
        out.append(Mapped(n, line, pick_frame(frames), frames))
        if stripped.endswith(":") or stripped in ("}", "{"):
            out[-1] = Mapped(n, line, None, ())
    return out


# ---------------------------------------------------------------------------------------------- SASS
_SASS_INFO = re.compile(r'"([^"]+)",\s*line\s+(\d+)')


def _map_sass(text: str) -> list[Mapped]:
    library = _library_dirs()
    out, frames, last_user = [], (), None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("//##"):
            frames, last_user = _with_caller(tuple((f, int(ln)) for f, ln in _SASS_INFO.findall(stripped)),
                                             library, last_user)
            continue
        is_insn = stripped.startswith("/*") and "*/" in stripped
        out.append(Mapped(n, line, pick_frame(frames, library) if is_insn else None, frames if is_insn else ()))
    return out


def map_lines(stage: str, text: str) -> list[Mapped]:
    """Every displayable IR line with its source frame (location-only lines are dropped)."""
    if stage in ("source", "ttir", "ttgir"):
        return _map_mlir(text)
    if stage == "llir":
        return _map_llir(text)
    if stage in ("ptx", "amdgcn"):
        return _map_asm(text)
    if stage == "sass":
        return _map_sass(text)
    raise ValueError(f"no source map for stage {stage}")


@lru_cache(maxsize=64)
def _source_lines(path: str) -> tuple[str, ...]:
    try:
        with open(path, errors="replace") as f:
            return tuple(f.read().splitlines())
    except OSError:
        return ()


def source_line(frame: Frame) -> str:
    lines = _source_lines(frame[0])
    return lines[frame[1] - 1].strip() if 0 < frame[1] <= len(lines) else ""


def interleave(stage: str, text: str) -> str:
    """The IR with a comment line ``// file.py:LINE  <python source>`` wherever the source line changes."""
    comment = _COMMENT.get(stage, "//")
    out, last = [], None
    for m in map_lines(stage, text):
        if m.frame is not None and m.frame != last:
            last = m.frame
            out.append(f"{comment} {os.path.basename(m.frame[0])}:{m.frame[1]}  {source_line(m.frame)}")
        out.append(m.text)
    return "\n".join(out) + "\n"
