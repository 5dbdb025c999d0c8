"""Decode attention: every config of ``_DECODE_CONFIGS`` pinned, at the picked split count and its neighbours,
beside SDPA (do_bench and CUDA-graph medians): is the autotuner's pick the best config there?

    python tests/bench/decode_configs.py [--shapes B:H:H_KV:S,...] [--extra BLOCK_N:STAGES:WARPS[:ROW],...] [--json OUT]

``--extra``: configs outside ``_DECODE_CONFIGS`` pinned beside them (ROW = 1: per-row softmax state).
"""
from __future__ import annotations

import argparse
import json
import sys

import torch
from kernels_h200 import baselines  # the SDPA calls the kernel table times (tests/bench/kernels_h200.py)
from triton.testing import do_bench

from tritondbg.check.perf import time_ms

SHAPES = [(1, 32, 8, 32768), (8, 32, 32, 1024), (1, 32, 32, 1024), (8, 32, 32, 4096)]  # B, H, H_KV, S


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="", help="B:H:H_KV:S,... (default: the list above)")
    ap.add_argument("--extra", default="", help="BLOCK_N:STAGES:WARPS[:ROW],... pinned beside the configs")
    ap.add_argument("--splits", default="", help="split counts to time, or 'picked' (default: the pick, half and double it)")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    shapes = [tuple(int(x) for x in s.split(":")) for s in args.shapes.split(",") if s] or SHAPES
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from tritondbg.kernels import _attention_decode as D

    kernel, configs = D._attn_decode_kernel, list(D._attn_decode_kernel.configs)
    extra = [tuple(int(v) for v in e.split(":")) for e in args.extra.split(",") if e]
    pinned = configs + [D._decode_cfg(e[0], e[1], e[2], bool(e[3]) if len(e) > 3 else False) for e in extra]
    dev, out = torch.device("cuda"), []
    for B, H, HKV, S in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(B, H, 128, device=dev, dtype=torch.bfloat16, generator=g)
        k = torch.randn(B, HKV, S, 128, device=dev, dtype=torch.bfloat16, generator=g)
        v = torch.randn(B, HKV, S, 128, device=dev, dtype=torch.bfloat16, generator=g)
        picked = D._decode_num_splits(B * HKV, S, D._num_sms(dev))
        rows = [(name, do_bench(fn), time_ms(fn, "graph"))
                for name, fn in baselines("attention", {"q": q, "k_cache": k, "v_cache": v}).items()]
        ref = D.attention_decode(q, k, v)
        splits = ([picked] if args.splits == "picked" else [int(v) for v in args.splits.split(",")] if args.splits
                  else sorted({max(1, picked // 2), picked, min(picked * 2, max(1, S // 512))}))
        for ns in splits:
            D._PLANS.clear()
            kernel.configs = configs
            auto = lambda ns=ns, q=q, k=k, v=v: D.attention_decode(q, k, v, num_splits=ns)  # noqa: E731
            auto(), auto()
            rows.append((f"splits={ns} autotuned -> {kernel.best_config}", do_bench(auto), time_ms(auto, "graph")))
            for c in pinned:
                kernel.configs = [c]
                kernel.cache.clear()
                D._PLANS.clear()
                fn = lambda ns=ns, q=q, k=k, v=v: D.attention_decode(q, k, v, num_splits=ns)  # noqa: E731
                try:
                    o = fn()
                    o = fn()
                except Exception as e:  # noqa: BLE001 - a config the prune would have dropped
                    rows.append((f"splits={ns} {c} ({type(e).__name__})", float("nan"), float("nan")))
                    continue
                bad = (o.float() - ref.float()).abs().max().item()
                ran = kernel.best_config  # the prune may swap a pinned config for its smallest tile
                rows.append((f"splits={ns} {ran}{'' if bad < 2e-2 else f' DIFFERS {bad:.3g}'}", do_bench(fn),
                             time_ms(fn, "graph")))
        kernel.configs = configs
        kernel.cache.clear()
        D._PLANS.clear()
        print(f"\nB={B} H={H} H_KV={HKV} S={S}, picked splits={picked}")
        print("| call | do_bench | graph |\n|---|---|---|")
        for name, t, tg in rows:
            print(f"| {name} | {t * 1e3:.1f} us | {tg * 1e3:.1f} us |", flush=True)
        out.append(dict(shape=[B, H, HKV, S], picked=picked, rows=[[n, t * 1e3, tg * 1e3] for n, t, tg in rows]))
        del q, k, v
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(triton=__import__("triton").__version__, torch=torch.__version__,
                           gpu=torch.cuda.get_device_name(), shapes=out), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
