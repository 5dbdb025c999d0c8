"""GPU targets by name (``sm_90``, ``sm_80``, ``sm_100a``, ``gfx942``) and the default one.

Imports nothing heavy: the warm `ir` path resolves the default arch without torch (about 5 s to import on the
2-core dev machine, against a 2 s budget for the whole command).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from tritondbg.errors import UsageError

DEFAULT_ARCH = "sm_90"  # no local GPU: Hopper, the GPU the bundled configs were tuned on (H200)
# AMD wavefront size by gfx family: CDNA (gfx9xx) runs wave64, RDNA (gfx10xx-12xx) wave32.
_WAVE32_PREFIXES = ("gfx10", "gfx11", "gfx12")


@dataclass(frozen=True)
class Arch:
    """A compile target: ``backend`` "cuda" (``arch`` int capability, 90) or "hip" (``arch`` "gfx942")."""

    name: str          # as the user wrote it, normalised: "sm_90", "gfx942"
    backend: str
    arch: int | str
    warp_size: int

    @property
    def is_cuda(self) -> bool:
        return self.backend == "cuda"

    def gpu_target(self):
        """The triton GPUTarget (imports triton)."""
        from triton.backends.compiler import GPUTarget

        return GPUTarget(self.backend, self.arch, self.warp_size)

    def stages(self) -> tuple[str, ...]:
        if self.is_cuda:
            return ("source", "ttir", "ttgir", "llir", "ptx", "sass")
        return ("source", "ttir", "ttgir", "llir", "amdgcn")

    @property
    def default_stage(self) -> str:
        return "ptx" if self.is_cuda else "amdgcn"


def parse_arch(text: str) -> Arch:
    """``sm_90``/``sm90``/``sm_90a``/``90`` -> cuda 90; ``gfx942`` -> hip gfx942 (wave64)."""
    t = text.strip().lower()
    m = re.fullmatch(r"(?:sm_?|cuda:?)?(\d{2,3})a?", t)
    if m:
        cap = int(m.group(1))
        if cap < 50:
            raise UsageError(f"--arch {text}: compute capability {cap} is older than Triton supports (sm_75+)")
        return Arch(f"sm_{cap}", "cuda", cap, 32)
    m = re.fullmatch(r"(?:hip:)?(gfx[0-9a-f]{3,4})", t)
    if m:
        gfx = m.group(1)
        return Arch(gfx, "hip", gfx, 32 if gfx.startswith(_WAVE32_PREFIXES) else 64)
    raise UsageError(f"unknown --arch {text!r}; examples: sm_80, sm_90, sm_100, gfx942")


_AMD_EXAMPLES = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200")


def cuda_capabilities() -> set[int]:
    """Compute capabilities the ptxas binaries in Triton's wheel accept (``--gpu-name`` values, ~50 ms);
    empty when none is found (then nothing is refused up front)."""
    import importlib.util

    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.origin:
        return set()
    found: set[int] = set()
    folder = os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin")
    for tool in (os.environ.get("TRITON_PTXAS_PATH"), os.path.join(folder, "ptxas"),
                 os.path.join(folder, "ptxas-blackwell"), os.environ.get("TRITON_PTXAS_BLACKWELL_PATH")):
        if not tool or not os.access(tool, os.X_OK):
            continue
        try:
            text = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        found.update(int(m) for m in re.findall(r"'sm_(\d+)[a-z]?'", text))
    return found


def check_supported(arch: Arch) -> None:
    """UsageError (one line naming valid targets) when the installed Triton cannot compile for ``arch``:
    NVIDIA from its ptxas' list of GPU names, AMD from its LLVM (``amd.get_target_triple``, Triton 3.9)."""
    if arch.is_cuda:
        caps = cuda_capabilities()
        if caps and arch.arch not in caps:
            valid = ", ".join(f"sm_{c}" for c in sorted(c for c in caps if c >= 75))
            raise UsageError(f"--arch {arch.name}: not a target this Triton's ptxas knows; valid: {valid}")
        return
    try:
        from triton._C.libtriton import amd
    except ImportError:
        return
    triple = getattr(amd, "get_target_triple", None)   # not in every Triton version: then the compile says it
    if triple is None:
        return
    try:
        triple(arch.arch)
    except (ValueError, RuntimeError):
        valid = []
        for gfx in _AMD_EXAMPLES:
            try:
                triple(gfx)
                valid.append(gfx)
            except (ValueError, RuntimeError):
                pass
        raise UsageError(f"--arch {arch.name}: not an AMD target this Triton knows; valid: "
                         f"{', '.join(valid) or ', '.join(_AMD_EXAMPLES)}, ...") from None


def local_arch() -> tuple[Arch | None, str]:
    """The first visible local GPU and how it was found, without importing torch when possible.

    NVIDIA: ``nvidia-smi --query-gpu=compute_cap`` (about 50 ms); falls back to torch when the tool is missing.
    AMD (/dev/kfd present): torch's gcnArchName. No GPU device node: (None, reason) at once.
    """
    if os.path.exists("/dev/nvidia0") or os.path.isdir("/proc/driver/nvidia/gpus"):
        smi = shutil.which("nvidia-smi")
        if smi:
            try:
                out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                                     text=True, timeout=20).stdout.split()
                visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
                idx = int(visible) if visible.isdigit() and int(visible) < len(out) else 0
                if out:
                    major, _, minor = out[idx].partition(".")
                    return parse_arch(f"sm_{int(major)}{int(minor or 0)}"), "local GPU (nvidia-smi)"
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
        return _torch_arch()
    if os.path.exists("/dev/kfd"):
        return _torch_arch()
    return None, "no local GPU"


def _torch_arch() -> tuple[Arch | None, str]:
    import torch  # only when a GPU device node exists but the vendor tool did not answer

    if not torch.cuda.is_available():
        return None, "no GPU visible to torch"
    if getattr(torch.version, "hip", None):
        name = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
        return parse_arch(name), "local GPU (torch)"
    major, minor = torch.cuda.get_device_capability()
    return parse_arch(f"sm_{major}{minor}"), "local GPU (torch)"


def resolve_arch(text: str | None, recorded: str | None = None) -> tuple[Arch, str]:
    """--arch, else the local GPU, else ``recorded`` (a reproducer's: the GPU its launch was captured for), else
    sm_90; with a few words saying which."""
    if text is not None:  # --arch "" is a bad value, not "no --arch"
        return parse_arch(text), "--arch"
    arch, how = local_arch()
    if arch is not None:
        return arch, how
    if recorded:
        try:
            return parse_arch(recorded), f"recorded at capture; {how}"
        except UsageError:
            pass  # a name this Triton does not know: the default
    return parse_arch(DEFAULT_ARCH), f"default ({how})"
