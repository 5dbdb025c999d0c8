"""Issue 18: the profile behind each target the sweep misses, ours beside the baseline, from Nsight Compute.

    python tests/bench/ncu_misses.py [--only gemm64,gemm127,gemm1024,prefill1000,fp8,fp8dec1,fp8dec16,fp8m127,decode1k,decode32kgqa]
                                     [--out ncu_misses.json]

For each workload and each implementation (ours, then the baselines), one child process builds the inputs, warms
up (autotunes, compiles) and makes one timed call inside the NVTX range ``ncu``; ``ncu --clock-control none
--nvtx --nvtx-include ncu/`` (clocks left as they are, as for every other timing here) profiles the kernels of
that call only, with the SpeedOfLight, LaunchStats and Occupancy sections (duration, SM and DRAM throughput in %
of peak, registers per thread, grid and block size, shared memory, achieved occupancy).
Prints one line per kernel and writes every metric as JSON. ncu from PATH or /usr/local/cuda/bin; needs a CUDA
GPU (exit 2 without one or without ncu).
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# workload -> implementations (the first is ours)
WORKLOADS = {
    "gemm64": ("ours", "torch.matmul"),         # 64x4096x4096 bf16: weight-read-bound, 0.87x (session 16)
    "gemm127": ("ours", "torch.matmul"),        # 127x4096x4096 bf16: the split-K decode kernel, 0.81x
    "gemm1024": ("ours", "torch.matmul"),       # 1024x4096x4096 bf16: one round of 128 tiles, 0.92x
    "prefill1000": ("ours", "sdpa flash", "sdpa cudnn"),  # B8 H16 N1000 D128 non-causal: 1.31x flash
    "fp8": ("ours", "torch._scaled_mm"),        # 8192^3 e4m3 -> bf16: 0.80x
    "fp8dec1": ("ours", "torch._scaled_mm"),    # 1x8192x8192 e4m3 (b K-major): 0.98x (session 18)
    "fp8dec16": ("ours", "torch._scaled_mm"),   # 16x8192x8192: 0.95x
    "fp8m127": ("ours", "torch._scaled_mm"),    # 127x11008x4096: 0.89x
    "decode1k": ("ours", "sdpa default"),       # decode attention B8 H32 KV1024 D128 bf16: 0.98x
    "decode32kgqa": ("ours", "sdpa default"),   # decode attention B1 H32/8 KV32768 D128 bf16: 0.97x (session 29)
}
SHOWN = (("Duration", "us"), ("Compute (SM) Throughput", "%"), ("DRAM Throughput", "%"), ("L2 Hit Rate", "%"),
         ("Registers Per Thread", ""), ("Grid Size", ""), ("Block Size", ""), ("Achieved Occupancy", "%"),
         ("Dynamic Shared Memory Per Block", ""))


def _call(workload: str, who: str):
    """A zero-argument callable: ``who``'s implementation of ``workload`` on fixed inputs."""
    import torch

    sys.path.insert(0, HERE)
    import kernels_h200 as kh

    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    if workload.startswith("gemm"):
        from tritondbg.kernels import gemm as G

        M = {"gemm64": 64, "gemm127": 127}.get(workload, 1024)
        a = torch.randn(M, 4096, device=dev, generator=g).to(torch.bfloat16)
        b = (torch.randn(4096, 4096, device=dev, generator=g) / 64).to(torch.bfloat16)
        return (lambda: G.gemm(a, b)) if who == "ours" else kh.baselines("gemm", dict(a=a, b=b))[who]
    from tritondbg.kernels import attention as A

    if workload == "prefill1000":
        q, k, v = (torch.randn(8, 16, 1000, 128, device=dev, generator=g).to(torch.bfloat16) for _ in range(3))
        if who == "ours":
            return lambda: A.attention(q, k, v)
        return kh.baselines("attention", dict(q=q, k=k, v=v, causal=False))[who]
    if workload.startswith("decode"):
        B, HKV, S = (8, 32, 1024) if workload == "decode1k" else (1, 8, 32768)
        q = torch.randn(B, 32, 128, device=dev, generator=g).to(torch.bfloat16)
        k, v = (torch.randn(B, HKV, S, 128, device=dev, generator=g).to(torch.bfloat16) for _ in range(2))
        if who == "ours":
            return lambda: A.attention_decode(q, k, v)
        return kh.baselines("attention", dict(q=q, k_cache=k, v_cache=v))[who]
    from tritondbg.kernels import fp8_gemm as F8

    M, N, K = {"fp8dec1": (1, 8192, 8192), "fp8dec16": (16, 8192, 8192),
               "fp8m127": (127, 11008, 4096)}.get(workload, (8192, 8192, 8192))
    a = torch.randn(M, K, device=dev, generator=g).to(F8.FP8_DTYPE)
    b = torch.randn(N, K, device=dev, generator=g).to(F8.FP8_DTYPE).t()
    one = torch.ones((), device=dev)
    if who == "ours":
        return lambda: F8.fp8_gemm(a, b, one, one)
    return kh.baselines("fp8_gemm", dict(a=a, b=b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))[who]


def _child(workload: str, who: str) -> int:
    import torch

    fn = _call(workload, who)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("ncu")
    fn()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    return 0


def _parse(text: str) -> list[dict]:
    """ncu --csv --page details: one row per (kernel launch, metric) -> one dict per launch."""
    start = text.find('"ID"')
    if start < 0:
        return []
    kernels: dict = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        k = kernels.setdefault(row["ID"], {"kernel": row["Kernel Name"][:80]})
        k[row["Metric Name"]] = f"{row['Metric Value']} {row['Metric Unit']}".strip()
    return list(kernels.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--out", default="ncu_misses.json")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)  # WORKLOAD:WHO
    args = ap.parse_args(argv)
    if args.child:
        workload, who = args.child.split(":", 1)
        return _child(workload, who)
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.path.exists(ncu):
        print("needs ncu (Nsight Compute) on PATH or in /usr/local/cuda/bin", file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    rows, t0 = [], time.time()
    for workload in args.only.split(","):
        for who in WORKLOADS[workload]:
            cmd = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", "ncu/", "--section", "SpeedOfLight", "--section", "LaunchStats",
                   "--section", "Occupancy", "--section", "MemoryWorkloadAnalysis", "--section", "WarpStateStats", "--csv", "--page", "details",
                   sys.executable, os.path.abspath(__file__), "--child", f"{workload}:{who}"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            kernels = _parse(p.stdout)
            if p.returncode != 0 or not kernels:
                err = (p.stderr.strip() or p.stdout.strip())[-300:]
                rows.append(dict(workload=workload, who=who, error=err))
                print(f"{workload:12s} {who:18s} ERROR {err}", flush=True)
                continue
            for k in kernels:
                rows.append(dict(workload=workload, who=who, **k))
                shown = "  ".join(f"{name.split(' Per ')[0].replace('Throughput', 'thr')} {k.get(name, '-')}"
                                  for name, _ in SHOWN)
                print(f"{workload:12s} {who:18s} {k['kernel'][:40]:40s} {shown}", flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                triton=__import__("triton").__version__, seconds=round(time.time() - t0),
                command="python tests/bench/ncu_misses.py " + " ".join(sys.argv[1:] if argv is None else argv))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(json.dumps(meta))
    return 0 if not any("error" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
