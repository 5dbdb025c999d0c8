"""Browse Triton's compile cache: list entries, show one, clear some - never touching anything outside it.

Layout (Triton 3.x): one folder per key (base32 of a sha256) holding ``{name}.json`` (metadata), the stages
``{name}.source/.ttir/.ttgir/.llir/.ptx/.cubin`` (AMD ``.amdgcn/.hsaco``) and ``__grp__{name}.json`` (the list
of child paths; Triton only trusts an entry whose group file lists existing files). Other folders hold
autotune decisions (``{fn}.autotune.json``) or built helper modules (``cuda_utils.so``, launchers).
Listing reads every entry defensively: an unreadable or incomplete one is listed with what is wrong.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from tritondbg.errors import UsageError
from tritondbg.ir.index import INDEX_DIRNAME, forget_entries
from tritondbg.ir.integrity import ownership, stage_problem

KIND_KERNEL, KIND_AUTOTUNE, KIND_MODULE, KIND_OTHER = "kernel", "autotune", "module", "other"
# the files Triton writes per compile stage, in pipeline order; "sass" is tritondbg's own disassembly beside them
TRITON_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "cubin", "amdgcn", "hsaco")
STAGE_ORDER = ("source", "ttir", "ttgir", "llir", "ptx", "cubin", "sass", "amdgcn", "hsaco")
_KEY = re.compile(r"^[A-Z2-7]{52}$|^[0-9a-f]{64}$")   # base32 (3.x) or hex sha256 keys
_BINARY = ("cubin", "hsaco")


@dataclass
class Entry:
    key: str
    path: str
    kind: str
    kernel: str | None = None
    target: str | None = None
    stages: list[str] = field(default_factory=list)
    size: int = 0
    mtime: float = 0.0
    problem: str = ""                  # "" when the entry is complete and readable
    files: dict[str, str] = field(default_factory=dict)   # stage/ext -> path
    metadata: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problem

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("metadata")
        d["ok"] = self.ok
        return d


def _size(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def _target(meta: dict) -> str | None:
    t = meta.get("target")
    if isinstance(t, dict):
        return f"{t.get('backend')}:{t.get('arch')}"
    return str(t) if t else None


def read_entry(folder: Path) -> list[Entry]:
    """The entries of one cache folder (usually one); never raises."""
    key = folder.name
    try:
        st = folder.stat()
        base = Entry(key=key, path=str(folder), kind=KIND_OTHER, size=_size(folder), mtime=st.st_mtime)
        if folder.is_symlink():
            base.problem = "symlink (not created by Triton)"
            return [base]
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return [Entry(key=key, path=str(folder), kind=KIND_OTHER, problem=f"unreadable: {exc.strerror or exc}")]
    groups = [n for n in names if n.startswith("__grp__") and n.endswith(".json")]
    unfinished = [n for n in names if n.startswith("tmp.pid_")]
    out = []
    for g in groups:
        out.append(_kernel_entry(folder, g, names, base))
    stems_done = {e.kernel for e in out}
    # metadata without a group file: Triton stopped between writing stages and the group (a partial entry)
    for n in names:
        stem = n[:-5] if n.endswith(".json") and not n.startswith("__grp__") and not n.endswith(".autotune.json") \
            else None
        if stem and stem not in stems_done and any(x.startswith(stem + ".") and x != n for x in names):
            e = Entry(**{**asdict(base), "kind": KIND_KERNEL, "kernel": stem})
            e.problem = "partial: no __grp__ file (Triton will recompile it)"
            e.stages = sorted({x[len(stem) + 1:] for x in names if x.startswith(stem + ".") and x != n})
            out.append(e)
    for n in names:
        if n.endswith(".autotune.json"):
            e = Entry(**{**asdict(base), "kind": KIND_AUTOTUNE, "kernel": n[:-len(".autotune.json")]})
            e.files = {"autotune": str(folder / n)}
            try:
                json.loads((folder / n).read_text())
            except (OSError, ValueError) as exc:
                e.problem = f"corrupt autotune record: {exc}"
            out.append(e)
    staged = sorted({n.rsplit(".", 1)[0] for n in names if n.rsplit(".", 1)[-1] in TRITON_STAGES})
    if not out and staged:  # stages without metadata or group file: a compile stopped midway (Ctrl-C during `ir`)
        for stem in staged:
            e = Entry(**{**asdict(base), "kind": KIND_KERNEL, "kernel": stem})
            e.stages = [s for s in TRITON_STAGES if f"{stem}.{s}" in names]
            e.problem = "partial: no metadata json and no __grp__ file (an unfinished compile; Triton will recompile it)"
            out.append(e)
    if not out:
        e = Entry(**asdict(base))
        if any(n.endswith((".so", ".pyd", ".dylib")) for n in names):
            e.kind, e.kernel = KIND_MODULE, ", ".join(n for n in names if n.endswith(".so")) or None
        e.stages = names
        if not names:
            e.problem = "empty folder"
        out.append(e)
    if unfinished:
        for e in out:
            e.problem = e.problem or f"unfinished write ({unfinished[0]})"
    return out


def _kernel_entry(folder: Path, group_name: str, names: list[str], base: Entry) -> Entry:
    stem = group_name[len("__grp__"):-len(".json")]
    e = Entry(**{**asdict(base), "kind": KIND_KERNEL, "kernel": stem})
    try:
        children = json.loads((folder / group_name).read_text())["child_paths"]
        if not isinstance(children, dict):
            raise ValueError("child_paths is not a mapping")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        e.problem = f"corrupt group file {group_name}: {exc}"
        e.stages = sorted({n.rsplit(".", 1)[-1] for n in names if n.startswith(stem + ".")})
        return e
    missing = []
    for child, recorded in children.items():
        ext = child.rsplit(".", 1)[-1]
        local = folder / os.path.basename(str(recorded))
        # the folder's own copy: a copied or moved cache keeps the absolute paths of the old place
        where = str(local) if local.is_file() else None
        if where is None:
            missing.append(child)
        elif child.endswith(".json"):
            e.files["json"] = where
        else:
            e.files[ext] = where
    sass = folder / f"{stem}.sass"
    if sass.is_file():
        e.files["sass"] = str(sass)
    e.stages = [s for s in STAGE_ORDER if s in e.files] + sorted(s for s in e.files if s not in ("json", *STAGE_ORDER))
    if missing:
        e.problem = f"partial: missing {', '.join(sorted(missing))}"
    for stage, path in e.files.items():   # each stage parsed: Triton itself would serve a truncated one
        why = "" if e.problem or stage in ("json", "sass") else stage_problem(stage, path)
        if why:
            e.problem = f"damaged: {os.path.basename(path)}: {why}"
            break
    if "json" in e.files:
        try:
            e.metadata = json.loads(Path(e.files["json"]).read_text())
            e.target = _target(e.metadata)
            e.kernel = e.metadata.get("name", stem) or stem
        except (OSError, ValueError) as exc:
            e.problem = e.problem or f"corrupt metadata {os.path.basename(e.files['json'])}: {exc}"
    elif not missing:
        e.problem = "partial: no metadata json"
    return e


def scan(cache_dir: str) -> list[Entry]:
    """Every entry of the cache folder, newest first (an absent folder is an empty cache)."""
    root = Path(cache_dir)
    if not root.is_dir():
        return []
    entries = []
    for child in root.iterdir():
        if child.name == INDEX_DIRNAME:
            continue
        if not child.is_dir():
            entries.append(Entry(key=child.name, path=str(child), kind=KIND_OTHER, problem="stray file",
                                 size=child.stat().st_size if child.exists() else 0))
            continue
        entries.extend(read_entry(child))
    entries.sort(key=lambda e: e.mtime, reverse=True)
    return entries


def matches(entry: Entry, kernel: str | None) -> bool:
    return kernel is None or (entry.kernel is not None and fnmatchcase(entry.kernel, kernel))


def find(cache_dir: str, key: str) -> list[Entry]:
    """Entries of one key: the folder name, a unique prefix (>= 4 characters) or a path inside the cache."""
    root = Path(cache_dir)
    if os.sep in key or key.startswith("."):
        folder = inside(cache_dir, key)
        return read_entry(folder)
    if len(key) < 4:
        raise UsageError(f"cache key {key!r} too short: give at least 4 characters")
    names = [n for n in (os.listdir(root) if root.is_dir() else []) if n.startswith(key) and n != INDEX_DIRNAME]
    if not names:
        raise UsageError(f"no cache entry {key!r} in {cache_dir}")
    if len(names) > 1:
        raise UsageError(f"cache key prefix {key!r} matches {len(names)} entries: {', '.join(sorted(names)[:5])}...")
    return read_entry(root / names[0])


def inside(cache_dir: str, path: str) -> Path:
    """``path`` as a direct child folder of the cache directory, or UsageError (no symlinks, no escapes)."""
    root = os.path.realpath(cache_dir)
    raw = os.path.abspath(os.path.expanduser(path))
    if os.path.islink(raw):
        raise UsageError(f"refusing {path}: a symlink (Triton never makes one; it may point outside the cache)")
    real = os.path.realpath(raw)
    if os.path.dirname(real) != root:
        raise UsageError(f"refusing {path}: not an entry of the Triton cache directory {root}")
    return Path(real)


def _safe_root(cache_dir: str) -> str:
    root = os.path.realpath(cache_dir)
    dangerous = {"/", os.path.realpath(os.path.expanduser("~")), os.path.realpath(os.getcwd())}
    if root in dangerous or len(Path(root).parts) < 3:
        raise UsageError(f"refusing to clear {root}: it does not look like a Triton cache directory")
    return root


def _deletable(folder: Path, root: str) -> str:
    """Why ``folder`` must not be deleted ("" when it may): only a key folder every file of which Triton wrote
    (read from their content: see integrity.ownership)."""
    if folder.is_symlink():
        return "a symlink"
    if os.path.dirname(os.path.realpath(folder)) != root:
        return f"not directly inside {root}"
    if not folder.is_dir():
        return "not a folder"
    if not _KEY.match(folder.name):
        return f"{folder.name!r} is not a Triton cache key"
    owned, why = ownership(folder)
    return "" if owned else why


def is_triton_entry(e: Entry) -> bool:
    return e.kind in (KIND_KERNEL, KIND_AUTOTUNE, KIND_MODULE)


def clear(cache_dir: str, *, kernel: str | None = None, keys: tuple[str, ...] = (), everything: bool = False,
          dry_run: bool = False) -> tuple[list[tuple[str, list[Entry], int]], int, list[str]]:
    """Delete entries (whole key folders) of ``kernel`` (a name or glob), of ``keys``, or all.

    Only direct, non-symlink children of the cache directory named like Triton keys and holding only files
    Triton writes (checked by content) are deleted: an explicit KEY/path that is anything else is refused
    before anything is deleted; with --kernel/--all such folders are skipped, and a directory with no Triton
    entry at all is refused. Returns ([(folder, its entries, bytes)], total bytes, skipped "path: why")."""
    if not (kernel or keys or everything):
        raise UsageError("cache clear needs --kernel NAME, KEY... or --all")
    given = [what for what, on in (("KEY...", keys), ("--kernel", kernel), ("--all", everything)) if on]
    if len(given) > 1:  # `--all --kernel X` removed every entry: the filter was never applied to --all
        raise UsageError(f"cache clear takes one of KEY..., --kernel NAME or --all, not {' and '.join(given)}")
    root = _safe_root(cache_dir)
    if not os.path.isdir(root):
        raise UsageError(f"no Triton cache directory at {root}")
    targets: dict[str, list[Entry]] = {}
    for key in keys:
        found = find(root, key)
        why = _deletable(Path(found[0].path), root)
        if why:
            raise UsageError(f"refusing {key}: {why}")
        targets[found[0].path] = found
    skipped = []
    if kernel or everything:
        for e in scan(root):
            if everything or matches(e, kernel):
                why = _deletable(Path(e.path), root)
                if not why and not everything and not all(matches(o, kernel) for o in read_entry(Path(e.path))):
                    why = "the folder also holds another kernel's files"
                if why:
                    if f"{e.path}: {why}" not in skipped:
                        skipped.append(f"{e.path}: {why}")
                else:
                    targets.setdefault(e.path, []).append(e)
    if everything and skipped and not any(is_triton_entry(e) for es in targets.values() for e in es):
        raise UsageError(f"refusing to clear {root}: it holds no Triton cache entry ({len(skipped)} other "
                         f"item(s), e.g. {skipped[0]})")
    if kernel and not targets and not keys:
        known = sorted({e.kernel for e in scan(root) if e.kernel and e.kind == KIND_KERNEL})
        raise UsageError(f"no cache entry for kernel {kernel!r}; kernels in {root}: {', '.join(known) or 'none'}")
    removed, total = [], 0
    for path, entries in sorted(targets.items()):
        folder = Path(path)
        size = _size(folder) if folder.is_dir() else 0
        total += size
        if not dry_run:
            shutil.rmtree(folder)
        removed.append((path, entries, size))
    if removed and not dry_run:
        forget_entries({os.path.basename(p) for p in targets}, root)
    return removed, total, skipped


def age(mtime: float) -> str:
    s = max(0.0, time.time() - mtime)
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= n:
            return f"{s / n:.0f}{unit}"
    return f"{s:.0f}s"


def human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
