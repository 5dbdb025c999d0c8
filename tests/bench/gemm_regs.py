"""Registers, spill (stack) bytes and shared memory of gemm's configs for sm_90, compiled on the CPU (no GPU).

    python tests/bench/gemm_regs.py [--decode] [--tma]

--decode: kernels/_splitk.py's 16-bit decode configs with 64/128-token tiles (gemm's M = 65..128 path);
--tma: kernels/gemm.py's TMA_CONFIGS of gemm_tma_kernel (bf16, row-major a and b), with and without the
split-K tail (TAIL_SPLIT). Reads the cubin's resource usage with the wheel's cuobjdump (no driver needed).
"""
from __future__ import annotations

import argparse
import sys

import triton
from triton.backends.compiler import GPUTarget

from tritondbg.ir.stages import cubin_usage

DIV16 = [["tt.divisibility", 16]]


def usage(kernel_fn, sig: dict, const: dict, div16: tuple, warps: int, stages: int) -> str:
    sig = dict(sig, **{k: "constexpr" for k in const})
    attrs = {(kernel_fn.arg_names.index(n),): DIV16 for n in div16}
    src = triton.compiler.ASTSource(fn=kernel_fn, signature=sig, constexprs=const, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))
    usage = cubin_usage(k.asm["cubin"])
    regs, stack = usage["REG"], usage["STACK"]
    return f"regs {regs:>3}  stack(spill) {stack:>4} B  smem {k.metadata.shared // 1024:>3} KiB"


def decode_rows():
    from tritondbg.kernels import _splitk as SK

    fn = SK.fp8_gemm_decode_kernel.fn
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32",
           "ws_ptr": "*fp32", "cnt_ptr": "*i32", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
    div16 = ("a_ptr", "b_ptr", "c_ptr", "ws_ptr", "cnt_ptr", "N", "K", "stride_am", "stride_bk", "stride_cm")
    for c in SK.WIDE_DECODE_CONFIGS:
        if c.kwargs["DEC_BLOCK_M"] < 64:
            continue
        const = dict(stride_ak=1, stride_bn=1, stride_cn=1, SCALE_A_ROWS=False, SCALE_B_COLS=False, **c.kwargs)
        name = "decode {DEC_BLOCK_M}x{DEC_BLOCK_N}x{DEC_BLOCK_K} sk{SPLIT_K}".format(**c.kwargs)
        yield f"{name} w{c.num_warps} s{c.num_stages}", usage(fn, sig, const, div16, c.num_warps, c.num_stages)


def tma_rows():
    from tritondbg.kernels import gemm as G

    fn = G.gemm_tma_kernel.fn
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "ws_ptr": "*fp32", "cnt_ptr": "*i32",
           "M": "i32", "N": "i32", "K": "i32", "stride_a": "i32", "stride_b": "i32"}
    div16 = ("a_ptr", "b_ptr", "c_ptr", "ws_ptr", "cnt_ptr", "N", "K", "stride_a", "stride_b")
    for c in G.TMA_CONFIGS:
        if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] < 128 * 128:
            continue
        for tail in (0, G.TAIL_SPLIT_MAX):
            const = dict(A_TRANS=False, B_TRANS=False, ACTIVATION="gelu", NUM_SMS=132, TAIL_SPLIT=tail,
                         **c.kwargs)
            name = "tma {BLOCK_M}x{BLOCK_N}x{BLOCK_K} sub={EPILOGUE_SUBTILE}".format(**c.kwargs)
            yield (f"{name} w{c.num_warps} s{c.num_stages} tail{tail} gelu",
                   usage(fn, sig, const, div16, c.num_warps, c.num_stages))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decode", action="store_true")
    ap.add_argument("--tma", action="store_true")
    args = ap.parse_args(argv)
    both = not (args.decode or args.tma)
    for rows, on in ((decode_rows, args.decode or both), (tma_rows, args.tma or both)):
        if on:
            for name, text in rows():
                print(f"{name:<48} {text}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
