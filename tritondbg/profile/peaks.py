"""Peak figures of the GPU: DRAM bandwidth and dense tensor-core throughput per dtype.

Two sources, and the record says which one was used:
- "measured": what torch reaches on this GPU (a 1 GiB device copy; 8192^3 torch.matmul in fp16/bf16/TF32,
  torch._scaled_mm in fp8), timed with do_bench once per machine and cached in
  ``$TRITONDBG_CACHE_DIR`` (default ``~/.cache/tritondbg``) ``/peaks.json``, keyed by GPU, CUDA and torch.
  On an H200 this gave 4.23 TB/s and ~690-740 TFLOP/s bf16 (shared/FACTS.md): achievable, not nominal.
- "spec": NVIDIA's datasheet numbers (dense, no sparsity) for known GPUs. Nominal; nothing reaches them.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# bytes/s and FLOP/s; "float32" is TF32 tensor-core throughput (Triton's default tl.dot precision for fp32)
SPEC: dict[str, dict[str, float]] = {
    "H200": {"bandwidth": 4.8e12, "float16": 989e12, "bfloat16": 989e12, "float32": 494e12,
             "float8_e4m3fn": 1979e12},
    "H100": {"bandwidth": 3.35e12, "float16": 989e12, "bfloat16": 989e12, "float32": 494e12,
             "float8_e4m3fn": 1979e12},
    "A100": {"bandwidth": 2.0e12, "float16": 312e12, "bfloat16": 312e12, "float32": 156e12},
    "L40S": {"bandwidth": 0.864e12, "float16": 362e12, "bfloat16": 362e12, "float32": 183e12,
             "float8_e4m3fn": 733e12},
}

SOURCES = ("measured", "spec")


def spec_peaks(device_name: str) -> dict[str, float] | None:
    """Datasheet peaks for a GPU whose name contains a known model (``NVIDIA H200`` -> H200)."""
    for model, figures in SPEC.items():
        if model in device_name.upper():
            return dict(figures)
    return None


def cache_path() -> Path:
    base = os.environ.get("TRITONDBG_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tritondbg")
    return Path(base) / "peaks.json"


def _machine_key() -> str:
    import torch

    return f"{torch.cuda.get_device_name()}|cuda {torch.version.cuda}|torch {torch.__version__}"


def measure() -> dict[str, float]:
    """Time the copy and matmuls on the current GPU (about 2 s on an H200). Failures leave a dtype out."""
    import torch
    import triton.testing

    dev = "cuda"
    out: dict[str, float] = {}
    src = torch.empty(2**28, dtype=torch.float32, device=dev)  # 1 GiB: far beyond any L2
    dst = torch.empty_like(src)
    ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=25, rep=200)
    out["bandwidth"] = 2 * src.numel() * 4 / (ms * 1e-3)  # read + write
    del src, dst
    n = 8192
    flop = 2.0 * n ** 3
    for name, dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16), ("float32", torch.float32)):
        try:
            a = torch.randn(n, n, device=dev, dtype=dtype)
            b = torch.randn(n, n, device=dev, dtype=dtype)
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=25, rep=200)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
            out[name] = flop / (ms * 1e-3)
        except Exception:  # noqa: BLE001 - a dtype this GPU lacks
            pass
    try:
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = torch.tensor(1.0, device=dev)
        ms = triton.testing.do_bench(
            lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), warmup=25, rep=200)
        out["float8_e4m3fn"] = flop / (ms * 1e-3)
    except Exception:  # noqa: BLE001 - no fp8 tensor cores (pre-Hopper) or an older torch
        pass
    return out


def gpu_peaks(source: str = "measured") -> dict[str, Any]:
    """Peaks of the current GPU: ``{"source", "device", "figures": {...}, "spec": {...}|None, "cache"}``."""
    import torch

    name = torch.cuda.get_device_name()
    spec = spec_peaks(name)
    if source == "spec":
        if spec is None:
            source = "measured"  # unknown GPU: measuring is the only way
        else:
            return {"source": "spec", "device": name, "figures": spec, "spec": spec, "cache": None}
    path = cache_path()
    key = _machine_key()
    cached = {}
    try:
        cached = json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    figures = cached.get(key)
    fresh = figures is None
    if fresh:
        figures = measure()
        cached[key] = figures
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(cached, indent=1))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home: measure again next time
    return {"source": "measured", "device": name, "figures": figures, "spec": spec, "cache": str(path),
            "measured_now": fresh}


def describe(peaks: dict[str, Any] | None) -> str:
    """One line for the console: where the peak figures come from."""
    if not peaks:
        return "no GPU peak: interpreter timings are not GPU performance"
    f = peaks["figures"]
    bw = f.get("bandwidth")
    flops = ", ".join(f"{k} {v / 1e12:.0f}" for k, v in f.items() if k != "bandwidth")
    if peaks["source"] == "spec":
        where = "NVIDIA spec sheet (dense, nominal)"
    else:
        where = (f"measured on this GPU {'now' if peaks.get('measured_now') else 'earlier'} "
                 f"(cached in {peaks['cache']})")
    return f"peaks of {peaks['device']}: {bw / 1e12:.2f} TB/s, TFLOP/s {flops}; {where}"
