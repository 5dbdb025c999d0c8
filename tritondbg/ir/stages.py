"""The text of one compile stage of a cache entry; SASS from the cubin with the nvdisasm in Triton's wheel.

Triton caches source/ttir/ttgir/llir/ptx/cubin (AMD: amdgcn/hsaco) but not SASS. SASS is disassembled once with
``nvdisasm -c -gi`` (code only, line info with inlining, ~0.6 s for the gemm) and kept beside the other stages as
``{name}.sass`` in the entry folder (Triton reads only the files its ``__grp__`` json lists, so it ignores it).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

from tritondbg.errors import UsageError

LINE_INFO_PREFIX = "//##"   # nvdisasm's line-info comments


class StageError(Exception):
    """A stage cannot be produced (tool missing or failing)."""


def nvidia_tool(name: str) -> str:
    """Path of ``cuobjdump``/``nvdisasm``/``ptxas`` as Triton finds it: $TRITON_<NAME>_PATH, the wheel, PATH."""
    env = os.environ.get(f"TRITON_{name.upper().replace('-', '_')}_PATH")
    if env and os.access(env, os.X_OK):
        return env
    spec = importlib.util.find_spec("triton")  # finds the package without importing it
    if spec is not None and spec.origin:
        wheel = os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin", name)
        if os.access(wheel, os.X_OK):
            return wheel
    found = shutil.which(name)
    if found:
        return found
    raise StageError(f"{name} not found (Triton's wheel ships it in triton/backends/nvidia/bin)")


def run_tool(cmd: list[str], what: str) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except OSError as exc:
        raise StageError(f"{what}: {exc}") from exc
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise StageError(f"{what} failed ({os.path.basename(cmd[0])} exit {p.returncode}): {msg[0] if msg else ''}")
    return p.stdout


def check_stage(stage: str, arch) -> str:
    stage = (stage or arch.default_stage).lower()
    if stage not in arch.stages():
        raise UsageError(f"--stage {stage} does not exist for {arch.name}; choose from: {', '.join(arch.stages())}")
    return stage


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only cache still shows the SASS, it is just not kept


def sass_path(item) -> Path:
    return Path(item.entry) / f"{item.name}.sass"


def sass(item) -> tuple[str, str, bool]:
    """(SASS with nvdisasm line-info comments, path, whether it was read from the entry)."""
    path = sass_path(item)
    if path.is_file():
        return path.read_text(), str(path), True
    cubin = item.files.get("cubin")
    if not cubin or not os.path.isfile(cubin):
        raise StageError(f"cache entry {item.key} has no cubin to disassemble")
    text = run_tool([nvidia_tool("nvdisasm"), "-c", "-gi", cubin], "disassembling the cubin")
    _atomic_write(path, text)
    return text, str(path), False


def strip_line_info(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.lstrip().startswith(LINE_INFO_PREFIX))


def stage_text(item, stage: str, *, line_info: bool = False) -> tuple[str, str]:
    """(text, file it came from) of ``stage`` for one item."""
    if stage == "sass":
        text, path, _ = sass(item)
        return (text if line_info else strip_line_info(text)), path
    path = item.files.get(stage)
    if not path or not os.path.isfile(path):
        hint = ""
        if stage == "ttir" and "ttgir" in item.files:  # Gluon: written with layouts, it starts at TTGIR
            hint = "; a Gluon kernel has no TTIR, its first IR is --stage ttgir"
        raise StageError(f"cache entry {item.key} has no {stage} (stages present: "
                         f"{', '.join(sorted(item.files))}){hint}")
    return Path(path).read_text(errors="replace"), path


def resource_usage(item) -> dict[str, int]:
    """``cuobjdump -res-usage`` of a cache entry's cubin (``cubin_usage``); {} without one."""
    cubin = item.files.get("cubin")
    return cubin_usage(cubin) if cubin else {}


def cubin_usage(cubin: str | bytes) -> dict[str, int]:
    """``cuobjdump -res-usage`` of a cubin (a path, or its bytes: ``CompiledKernel.asm["cubin"]``): REG, STACK,
    SHARED (static), LOCAL, CONSTANT[0] ... of its kernel."""
    if isinstance(cubin, (bytes, bytearray)):
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(cubin)
        try:
            return cubin_usage(f.name)
        finally:
            os.unlink(f.name)
    out = run_tool([nvidia_tool("cuobjdump"), "-res-usage", cubin], "reading resource usage")
    usage: dict[str, int] = {}
    for line in out.splitlines():
        if "REG:" in line:
            for field in line.split():
                key, _, value = field.partition(":")
                if value.isdigit():
                    usage[key] = int(value)
            break
    return usage
