"""The request index: what an `ir` request resolved to, so a warm call reads the cache without importing torch.

Triton's cache key hashes the kernel source and the real arguments' specialisation, which needs the scenario
imported and its inputs built: importing torch alone takes ~5 s on the 2-core dev machine. So after a capture,
the request (kernel, case, dtype, config, arch, ...) is stored with the Triton cache entries it resolved to and
everything that decided them; a later identical request uses them only if all of that is unchanged:
- the contents (sha1) of every project Python file that was imported (scenario, kernels, tritondbg itself);
- the Triton install (path and version), the Python version, and every TRITON_*/MLIR_*/LLVM_* variable;
- the files that could change a default config (autotune records, run records): the same set still matches;
- every file of every entry still exists.
Anything else falls back to the full capture, which recomputes Triton's own key. The index lives inside the
Triton cache directory (``tritondbg-ir-index/``), so clearing that directory clears it too.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from tritondbg.ir.decision import Watch
from tritondbg.ir.integrity import group_problem
from tritondbg.ir.item import INDEX_HIT, NOT_COMPILED, IRItem

INDEX_DIRNAME = "tritondbg-ir-index"
FORMAT = 1
# set while compiling on purpose; the index would hide that intent
_BYPASS_ENV = ("TRITON_ALWAYS_COMPILE", "TRITON_KERNEL_OVERRIDE", "TRITON_KERNEL_DUMP")


def triton_cache_dir() -> str:
    """Triton's compile cache folder: $TRITON_CACHE_DIR, else $TRITON_HOME/.triton/cache (home by default)."""
    explicit = os.environ.get("TRITON_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    home = os.environ.get("TRITON_HOME") or os.path.expanduser("~/")
    return os.path.abspath(os.path.join(home, ".triton", "cache"))


def index_dir(cache_dir: str | None = None) -> Path:
    return Path(cache_dir or triton_cache_dir()) / INDEX_DIRNAME


# read by Triton but without effect on what it compiles (and not in its own cache key either)
_NOT_COMPILE_ENV = ("TRITON_INTERPRET", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_PTXAS_LOG",
                    "TRITON_PRINT_AUTOTUNING")


def env_snapshot() -> dict[str, str]:
    """The variables that can change what Triton compiles (conservatively: every TRITON_/MLIR_/LLVM_ one)."""
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith(("TRITON_", "MLIR_", "LLVM_", "USE_IR_LOC", "NVPTX_", "AMDGCN_"))
            and k not in _NOT_COMPILE_ENV}


def triton_install() -> dict[str, str]:
    """Where Triton is and its version, read from its files (no import: ~0.7 s saved)."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.origin:
        return {"dir": "", "version": ""}
    text = Path(spec.origin).read_text(errors="replace")
    m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text)
    return {"dir": os.path.dirname(spec.origin), "version": m.group(1) if m else ""}


def project_files() -> list[str]:
    """Python files imported so far that are not the standard library nor installed packages, plus tritondbg's
    own (bundled kernels and scenarios included): the code that decides arguments, configs and kernel source."""
    import site
    import sysconfig

    import tritondbg

    outside = {os.path.realpath(p) for p in (sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                                                 "platlib")) if p}
    outside.update(os.path.realpath(p) for p in site.getsitepackages() + [site.getusersitepackages()])
    ours = os.path.realpath(os.path.dirname(tritondbg.__file__))
    found = set()
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if not f or not f.endswith(".py"):
            continue
        real = os.path.realpath(f)
        if real.startswith(ours + os.sep) or not any(real.startswith(o + os.sep) for o in outside):
            if os.path.isfile(real):
                found.add(real)
    return sorted(found)


def _sha1(path: str) -> str | None:
    try:
        return hashlib.sha1(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def request_key(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()[:40]


def store(request: dict[str, Any], items: list[IRItem], watch: Watch, env: dict[str, str],
          cache_dir: str | None = None) -> Path | None:
    """Record what ``request`` resolved to (atomic write). ``env``: the env_snapshot() taken before the capture
    (before set_mode adds its defaults). Returns the index file, None if not writable."""
    if any(os.environ.get(v) for v in _BYPASS_ENV):
        return None
    data = {
        "format": FORMAT,
        "request": request,
        "files": {p: _sha1(p) for p in project_files()},
        "env": env,
        "triton": triton_install(),
        "python": sys.version,
        "watch": watch.globs,
        "items": [i.to_dict() for i in items],
    }
    folder = index_dir(cache_dir)
    path = folder / f"{request_key(request)}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, default=str))
        os.replace(tmp, path)
    except OSError:
        return None
    return path


def lookup(request: dict[str, Any], cache_dir: str | None = None) -> tuple[list[IRItem] | None, str]:
    """The items of an earlier identical request if nothing they depend on changed; else (None, why)."""
    if any(os.environ.get(v) for v in _BYPASS_ENV):
        return None, "compiling on request (TRITON_ALWAYS_COMPILE / override / dump set)"
    path = index_dir(cache_dir) / f"{request_key(request)}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, "not in the index"
    if data.get("format") != FORMAT or data.get("request") != json.loads(json.dumps(request, default=str)):
        return None, "index entry of another format"
    if data.get("python") != sys.version or data.get("triton") != triton_install():
        return None, "Python or Triton changed"
    if data.get("env") != env_snapshot():
        return None, "TRITON_* environment changed"
    for f, digest in data.get("files", {}).items():
        if _sha1(f) != digest:
            return None, f"{f} changed"
    if not Watch.still_valid(data.get("watch", {})):
        return None, "autotune/run records changed"
    items = [IRItem.from_dict(d) for d in data.get("items", [])]
    root = os.path.realpath(cache_dir or triton_cache_dir())
    for item in items:
        if item.source == NOT_COMPILED and not item.entry:   # listed without a compile: no files to check
            continue
        if os.path.dirname(os.path.realpath(item.entry)) != root:   # e.g. a copied cache: not ours to trust
            return None, f"index entry points outside {root}"
        needed = [item.metadata_file, *item.files.values()]
        if not all(os.path.isfile(p) for p in needed):
            return None, f"cache entry {item.key} is gone or incomplete"
        damaged = group_problem({os.path.basename(p): p for p in needed})
        if damaged:   # the capture's cache check says which file and compiles a fresh entry
            return None, f"cache entry {item.key} is damaged ({os.path.basename(damaged[0])}: {damaged[1]})"
        item.source = INDEX_HIT
    return (items or None), ("" if items else "empty index entry")


def forget_entries(keys: set[str], cache_dir: str) -> int:
    """Drop index files that point at any of the cache entry folders ``keys`` (after `cache clear`)."""
    removed = 0
    folder = index_dir(cache_dir)
    if not folder.is_dir():
        return 0
    for path in folder.glob("*.json"):
        try:
            data = json.loads(path.read_text())
            used = {os.path.basename(i["entry"]) for i in data.get("items", [])}
        except (OSError, ValueError, KeyError, TypeError):
            used = keys  # unreadable: drop it
        if used & keys:
            path.unlink(missing_ok=True)
            removed += 1
    return removed
