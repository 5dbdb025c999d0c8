"""Is a Triton cache entry whole, and is a folder one Triton wrote? Read from the files' content, not their names.

Triton trusts an entry whose ``__grp__{name}.json`` lists files that exist; it never checks what is in them, so
a truncated PTX is served as a cache hit and a truncated metadata json dies in ``json.loads`` naming no file.
Here each stage is parsed just enough to see that it is complete: the metadata parses and has Triton's keys,
text stages have their markers and balanced braces (a cut file loses its closing ``}``), ELF binaries hold their
section table (it sits at the end of the file). Costs ~1 ms for a small kernel's entry.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import sys
from pathlib import Path
from typing import Iterator

# markers each complete stage has (besides balanced braces for the text ones)
_MARKERS = {
    "source": ("tt.func", "module"),
    "ttir": ("tt.func", "module"),
    "ttgir": ("tt.func", "module"),
    "llir": ("define ",),
    "ptx": (".version", ".target", ".entry"),
    "amdgcn": (".amdgcn_target", ".end_amdgpu_metadata"),
}
_ELF = ("cubin", "hsaco")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_METADATA_KEYS = ("hash", "target", "name")   # what Triton's compile() writes in every {name}.json


def metadata_problem(path: str) -> str:
    """Why ``path`` is not a Triton metadata json ("" when it is one)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        return f"unreadable ({exc})"
    except ValueError as exc:
        return f"not valid JSON ({exc})"
    if not isinstance(data, dict) or not all(k in data for k in _METADATA_KEYS):
        return "not Triton metadata (no hash/target/name)"
    return ""


def _elf_problem(data: bytes) -> str:
    if data[:4] != b"\x7fELF":
        return "not an ELF file"
    if len(data) < 64 or data[4] != 2:   # ELFCLASS64: what cubins and hsaco are
        return "truncated ELF header"
    end = "<" if data[5] == 1 else ">"
    (shoff,) = struct.unpack_from(end + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
    if shoff + shentsize * shnum > len(data):
        return f"truncated ({len(data)} bytes; its section table ends at byte {shoff + shentsize * shnum})"
    return ""


def stage_problem(stage: str, path: str) -> str:
    """Why the file of ``stage`` is not a complete one ("" when it looks whole)."""
    if stage == "json":
        return metadata_problem(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if not data:
        return "empty"
    if stage in _ELF:
        return _elf_problem(data)
    markers = _MARKERS.get(stage)
    if markers is None:
        return ""
    text = data.decode("utf-8", errors="replace")
    missing = [m.strip() for m in markers if m not in text]
    if missing:
        return f"no {', '.join(missing)} (truncated or not {stage})"
    if stage != "amdgcn":
        code = _STRING.sub('""', text)   # a brace inside a string (a device_print format) is not structure
        if code.count("{") != code.count("}"):
            return f"truncated ({code.count('{')} '{{' but {code.count('}')} '}}')"
    return ""


def group_problem(group: dict[str, str]) -> tuple[str, str] | None:
    """(file, why) of the first damaged file of an entry's group (child name -> path), or None."""
    for child, path in group.items():
        stage = "json" if child.endswith(".json") else child.rsplit(".", 1)[-1]
        why = stage_problem(stage, path)
        if why:
            return path, why
    return None


def _group_children(path: Path) -> dict[str, str] | None:
    try:
        children = json.loads(path.read_text()).get("child_paths")
    except (OSError, ValueError, AttributeError):
        return None
    return children if isinstance(children, dict) else None


def ownership(folder: Path) -> tuple[bool, str]:
    """(True, what) when every file of ``folder`` is one Triton writes there, else (False, the first that is not).

    Triton's files: a ``__grp__*.json`` group whose child_paths are files of this folder, the files it lists,
    metadata jsons that parse as Triton's, ``*.autotune.json`` records, built helper modules (``*.so``, ELF),
    its lock and unfinished ``tmp.pid_*`` writes, and the ``{name}.sass`` tritondbg keeps beside a cubin."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return False, f"unreadable ({exc.strerror or exc})"
    if not names:
        return True, "an empty folder"
    explained: set[str] = set()
    found = []
    for n in names:
        if n.startswith("__grp__") and n.endswith(".json"):
            children = _group_children(folder / n)
            if children is None:
                continue
            local = {os.path.basename(str(p)) for p in children.values()}
            explained.add(n)
            explained.update(x for x in local if x in names)
            stem = n[len("__grp__"):-len(".json")]
            explained.add(f"{stem}.sass")
            found.append(stem)
    for n in names:
        if n in explained:
            continue
        p = folder / n
        if n.startswith("tmp.pid_") or n == "lock":
            explained.add(n)
        elif n.endswith(".autotune.json"):
            try:
                if "configs_timings" in json.loads(p.read_text()):   # what Triton's autotuner writes
                    explained.add(n)
                    found.append(n)
            except (OSError, ValueError, TypeError):
                pass
        elif n.endswith(".json") and p.is_file() and not metadata_problem(str(p)):
            explained.add(n)   # metadata of a partial entry (Triton stopped before its group file)
            found.append(n)
        elif n.endswith(".so") and p.is_file() and _head(p) == b"\x7fELF":
            explained.add(n)
            found.append(n)
    partial_stems = {n[:-5] for n in explained if n.endswith(".json") and not n.startswith("__grp__")}
    explained.update(n for n in names if n.rsplit(".", 1)[0] in partial_stems)   # stages of a partial entry
    for n in names:   # stages a failed compile left without metadata (e.g. an unsupported target): whole ones
        stage = n.rsplit(".", 1)[-1]
        if n not in explained and (stage in _MARKERS or stage in _ELF) and not stage_problem(stage, str(folder / n)):
            explained.add(n)
    strangers = [n for n in names if n not in explained or (folder / n).is_symlink()]
    if strangers:
        return False, f"holds {strangers[0]!r}, which Triton did not write"
    return True, ", ".join(found) or "Triton's temporary files"


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(4)
    except OSError:
        return b""


def checked_group(manager, filename: str, group: dict[str, str]) -> dict[str, str] | None:
    """``group`` if every file of the cache entry is whole; else say which file is damaged, remove the entry's
    files (the group file first, so a crash midway leaves a miss, not a hit) and return None: Triton compiles
    the kernel again into the same key folder."""
    bad = group_problem(group)
    if bad is None:
        return group
    path, why = bad
    sys.stderr.write(f"damaged cache entry: {path}: {why}; removing the entry and compiling it again\n")
    folder = os.path.realpath(manager.cache_dir)
    stem = filename[:-len(".json")]
    for victim in [os.path.join(folder, f"__grp__{filename}"), *group.values(), os.path.join(folder, f"{stem}.sass")]:
        if os.path.dirname(os.path.realpath(victim)) == folder:   # only files of this entry's own folder
            with contextlib.suppress(OSError):
                os.remove(victim)
    return None


@contextlib.contextmanager
def checked_cache() -> Iterator[None]:
    """Within: every hit of Triton's file cache is checked first (``checked_group``); a damaged entry is named
    and compiled again instead of being served (or dying in ``json.loads``). Imports triton. Any command that
    compiles (`ir`; `run`/`profile`/`check` on a GPU) can wrap its launches in it."""
    from triton.runtime.cache import FileCacheManager

    original = FileCacheManager.get_group

    def get_group(manager, filename):
        group = original(manager, filename)
        return group if group is None else checked_group(manager, filename, group)

    FileCacheManager.get_group = get_group
    try:
        yield
    finally:
        FileCacheManager.get_group = original
