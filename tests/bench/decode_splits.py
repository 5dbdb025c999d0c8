"""Decode attention: time attention_decode for several split counts beside SDPA (issue 7, split heuristic).

    python tests/bench/decode_splits.py [--splits 1,2,4,...]

For each decode shape of the issue (H=32, D=128, bf16) prints, per split count, do_bench and CUDA-graph
medians, with the count ``_decode_num_splits`` picks marked, and SDPA's default (cuDNN) and flash backends.
"""
from __future__ import annotations

import argparse
import sys

import torch
from kernels_h200 import baselines  # the SDPA calls the kernel table times (tests/bench/kernels_h200.py)
from triton.testing import do_bench

from tritondbg.check.perf import time_ms

SHAPES = [(1, 32, 32, 8192), (1, 32, 32, 32768), (8, 32, 32, 32768), (32, 32, 32, 4096), (8, 32, 8, 32768),
          (1, 32, 8, 32768), (8, 32, 32, 1024)]  # B, H, H_KV, S


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", default="1,2,3,4,6,8,12,16,24,32")
    ap.add_argument("--shapes", default="", help="B:H:H_KV:S,... (default: the list above)")
    args = ap.parse_args()
    shapes = [tuple(int(x) for x in s.split(":")) for s in args.shapes.split(",") if s] or SHAPES
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from tritondbg.kernels.attention import _decode_num_splits, _num_sms, attention_decode

    dev = torch.device("cuda")
    for B, H, HKV, S in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(B, H, 128, device=dev, dtype=torch.bfloat16, generator=g)
        k = torch.randn(B, HKV, S, 128, device=dev, dtype=torch.bfloat16, generator=g)
        v = torch.randn(B, HKV, S, 128, device=dev, dtype=torch.bfloat16, generator=g)
        picked = _decode_num_splits(B * HKV, S, _num_sms(dev))
        kv_bytes = 2 * k.numel() * k.element_size()
        rows = []
        for name, fn in baselines("attention", {"q": q, "k_cache": k, "v_cache": v}).items():
            try:
                fn()
                rows.append((name, do_bench(fn), time_ms(fn, "graph")))
            except Exception as e:  # noqa: BLE001
                rows.append((f"{name} ({type(e).__name__})", float("nan"), float("nan")))
        ref = None
        for ns in [int(s) for s in args.splits.split(",")]:
            if ns > max(1, S // 64):
                continue
            fn = lambda ns=ns, q=q, k=k, v=v: attention_decode(q, k, v, num_splits=ns)
            o = fn()
            o = fn()  # the steady-state launcher
            ref = o if ref is None else ref
            bad = (o.float() - ref.float()).abs().max().item()
            rows.append((f"ours splits={ns}{' (picked)' if ns == picked else ''}{'' if bad < 2e-2 else f' DIFFERS {bad:.3g}'}",
                         do_bench(fn), time_ms(fn, "graph")))
        print(f"\nB={B} H={H} H_KV={HKV} S={S}: KV {kv_bytes / 2**20:.0f} MiB, picked splits={picked}")
        print("| call | do_bench | graph | TB/s (graph) |\n|---|---|---|---|")
        for name, t, tg in rows:
            print(f"| {name} | {t * 1e3:.1f} us | {tg * 1e3:.1f} us | {kv_bytes / tg / 1e9:.2f} |", flush=True)
        del q, k, v
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
