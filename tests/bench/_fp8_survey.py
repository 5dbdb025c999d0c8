"""Compile fp8_gemm's large-M kernels for sm_90 on the CPU (no GPU): registers, spills, shared memory per config.

Used by explore_fp8.py (``--survey``) and tests/test_fp8_tma.py. The kernels are specialised as an 8192^3 call
with b K-major would be (16-divisible pointers, sizes and strides; per-tensor scales; bf16 out).
"""
from __future__ import annotations

import triton
from triton.backends.compiler import GPUTarget


def _meta(k) -> dict:
    """regs / spills (LOCAL + STACK bytes / 4, as `tritondbg ir --stats` counts them) / shared bytes."""
    import tempfile
    from types import SimpleNamespace

    from tritondbg.ir.stages import resource_usage

    md = k.metadata
    shared = md.get("shared") if isinstance(md, dict) else getattr(md, "shared", None)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        usage = resource_usage(SimpleNamespace(files={"cubin": f.name}))
    return dict(regs=usage.get("REG"), spills=(usage.get("LOCAL", 0) + usage.get("STACK", 0)) // 4, smem=shared)


def compile_tma(meta: dict, num_warps: int, num_stages: int, fast_accum: bool = False, b_trans: bool = True,
                out="bf16"):
    from tritondbg.kernels import _fp8_tma as T

    jit = T.fp8_gemm_tma_kernel.fn
    sig = dict(a_ptr="*fp8e4nv", b_ptr="*fp8e4nv", c_ptr=f"*{out}", scale_a_ptr="*fp32", scale_b_ptr="*fp32",
               M="i32", N="i32", K="i32", stride_a="i32", stride_b="i32")
    consts = {**dict(SCALE_A_ROWS=False, SCALE_B_COLS=False, B_TRANS=b_trans, FAST_ACCUM=fast_accum, NUM_SMS=132,
                     EPILOGUE_SUBTILE=False, WARP_SPEC=False), **meta}
    opts = dict(num_warps=num_warps, num_stages=num_stages)
    k = _compile_opts(jit, sig, consts, ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_a", "stride_b"),
                      opts)
    return _meta(k)


def compile_ptr(meta: dict, num_warps: int, num_stages: int, fast_accum: bool = False, out="bf16"):
    from tritondbg.kernels import fp8_gemm as F

    jit = F.fp8_gemm_kernel.fn
    sig = dict(a_ptr="*fp8e4nv", b_ptr="*fp8e4nv", c_ptr=f"*{out}", scale_a_ptr="*fp32", scale_b_ptr="*fp32",
               M="i32", N="i32", K="i32", stride_am="i32", stride_ak="constexpr", stride_bk="constexpr",
               stride_bn="i32", stride_cm="i32", stride_cn="constexpr")
    consts = dict(stride_ak=1, stride_bk=1, stride_cn=1, SCALE_A_ROWS=False, SCALE_B_COLS=False,
                  FAST_ACCUM=fast_accum, **meta)
    k = _compile_opts(jit, sig, consts, ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn",
                                         "stride_cm"), dict(num_warps=num_warps, num_stages=num_stages))
    return _meta(k)


def _compile_opts(jit, signature, constexprs, divisible, opts, arch: int = 90):
    names = list(jit.arg_names)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in divisible}
    sig = {n: signature.get(n, "constexpr") for n in names}
    src = triton.compiler.ASTSource(fn=jit, signature=sig,
                                    constexprs={(names.index(k),): v for k, v in constexprs.items()},
                                    attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options=opts)
