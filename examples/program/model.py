"""A model-like program for tritondbg's program mode (README: "Your program").

One block of a tiny transformer MLP: LayerNorm (tritondbg's bundled kernel), a projection (the bundled
GEMM), Liger-Kernel's SwiGLU and RMSNorm, then the user's own scale_shift kernel (user_kernels.py), which
has a planted out-of-bounds read when EXAMPLE_BUG=1.

    tritondbg interpret -- python examples/program/model.py          # EXAMPLE_BUG=1: one finding, exit 1
    tritondbg capture -- python examples/program/model.py            # one reproducer per kernel
Runs on a GPU as it is, or on the CPU under TRITON_INTERPRET=1 (what `tritondbg interpret` sets).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction
except ImportError:  # optional: `pip install liger-kernel` (in tritondbg's test extra)
    LigerRMSNormFunction = LigerSiLUMulFunction = None
    print("model: liger-kernel not installed (pip install liger-kernel): SwiGLU and RMSNorm run in torch",
          file=sys.stderr)
from tritondbg.kernels.gemm import gemm  # noqa: E402
from tritondbg.kernels.layernorm import layernorm  # noqa: E402
from user_kernels import scale_shift  # noqa: E402


def block(x, p):
    h = layernorm(x, p["ln_w"], p["ln_b"])                     # bundled kernel 1
    gate_up = gemm(h.half(), p["w_in"].half()).float()         # bundled kernel 2 (fp16 in)
    gate, up = gate_up.chunk(2, dim=-1)
    if LigerSiLUMulFunction is not None:
        act = LigerSiLUMulFunction.apply(gate.contiguous(), up.contiguous())   # Liger op 1
        normed = LigerRMSNormFunction.apply(act, p["rms_w"], 1e-6)             # Liger op 2
    else:
        act = torch.nn.functional.silu(gate) * up
        normed = act * torch.rsqrt(act.pow(2).mean(-1, keepdim=True) + 1e-6) * p["rms_w"]
    return scale_shift(normed.flatten(), 0.5, 0.1).view_as(normed)         # the user's kernel


def main():
    device = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") in ("", "0") else "cpu"
    g = torch.Generator().manual_seed(0)
    M, D, H = 6, 32, 40          # 6*40 = 240 outputs: not a multiple of the user kernel's BLOCK (64)
    p = {"ln_w": torch.randn(D, generator=g), "ln_b": torch.randn(D, generator=g),
         "w_in": torch.randn(D, 2 * H, generator=g) / D ** 0.5, "rms_w": torch.randn(H, generator=g)}
    p = {k: v.to(device) for k, v in p.items()}
    x = torch.randn(M, D, generator=g).to(device)
    y = block(x, p)
    print(f"model: output {tuple(y.shape)}, mean {y.float().mean().item():.4f}")


if __name__ == "__main__":
    main()
