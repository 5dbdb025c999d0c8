"""Every prefill config of kernels/attention.py pinned, on shapes that take each of the kernel's paths (the
warp-specialised single loop: D = 128, even N, non-causal; the two-loop path: causal, an odd N, D = 64), against
the fp32 reference. The autotuner never checks results, so a config that computes garbage where it may run would
be picked whenever it is fast: on the H200 (Triton 3.6) four warp-specialised configs gave NaN at D = 64.
Prints one line per (shape, config) and "OK n" or "FAILED ..." last; exit 1 on any mismatch.
Run by tests/gpu/test_kernels_gpu.py."""
import sys

import torch
from triton.runtime.errors import OutOfResources

from tritondbg.kernels import attention as A

SHAPES = ((1, 4, 4, 512, 64, False), (1, 4, 4, 512, 128, False), (2, 4, 2, 500, 64, True), (1, 4, 4, 512, 128, True),
          (1, 4, 1, 333, 128, False),
          (2, 8, 4, 333, 128, True, True), (2, 8, 4, 333, 128, False, True))  # (B, H, H_KV, N, D, causal[, bnhd])
# bnhd: q, k, v made (B, N, H, D) and handed transposed, as steady_state.py's call that failed under load from
# other processes (sessions 53 and 56: attention B2 H8/4 N333 D128 causal bf16 bnhd, a tl config)


def main() -> int:
    torch.manual_seed(0)
    bad, skipped, n = [], [], 0
    only_bnhd = "--bnhd" in sys.argv[1:]
    for B, H, HKV, N, D, causal, *layout in SHAPES:
        bnhd = bool(layout and layout[0])
        if only_bnhd and not bnhd:
            continue

        def one(h):
            if bnhd:
                return torch.randn(B, N, h, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
            return torch.randn(B, h, N, D, device="cuda", dtype=torch.bfloat16)
        q, k, v = one(H), one(HKV), one(HKV)
        ref = A.reference(q, k, v, causal=causal).float()
        for cfg in A._PREFILL_CONFIGS:
            n += 1
            name = f"B{B} H{H}/{HKV} N{N} D{D}{' causal' if causal else ''}{' bnhd' if bnhd else ''} {cfg}"
            try:
                out = A._attention(q, k, v, causal, None, None, config=cfg).float()
                torch.cuda.synchronize()
            except OutOfResources as e:  # the autotuner drops such a config too: counted and named, not a pass
                print(f"skip {name}: out of resources: {str(e).splitlines()[0][:100]}", flush=True)
                skipped.append(name)
                continue
            except Exception as e:  # noqa: BLE001 - a config that cannot run is a failure, never a pass
                print(f"BAD {name}: {type(e).__name__}: {str(e).splitlines()[0][:100]}", flush=True)
                bad.append(name)
                continue
            err = (out - ref).abs().max().item()
            ok = bool(torch.isfinite(out).all()) and err <= 2e-2 * max(1.0, ref.abs().max().item())
            print(f"{'ok ' if ok else 'BAD'} {name}: max abs err {err:.3g}", flush=True)
            if not ok:
                bad.append(name)
    ran = n - len(skipped)
    print(f"OK {ran} ({len(skipped)} out of resources)" if not bad and ran else f"FAILED {len(bad)} of {n}: {bad}")
    return 1 if bad or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
