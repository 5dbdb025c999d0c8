"""Atomics: scope="cta" across programs (atomic within one program only: a race between programs), the same scope
on each program's own element (fine), and an atomic without mask= past the end of its tensor."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def cta_total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0), scope="cta")  # MARK: cta


@triton.jit
def cta_own(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + pid + offs * 0, x, mask=offs < n, scope="cta")  # lanes of one program: fine


@triton.jit
def unmasked_atomic(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + offs, x)  # MARK: unmasked


def _x(case, dtype, device, generator):
    return dict(x=torch.randn(40, generator=generator).to(device=device, dtype=dtype))


def _total(x):
    out = torch.zeros(1, dtype=torch.float32, device=x.device)
    cta_total[(3,)](x, out, 40, BLOCK=16)
    return out


def _own(x):
    out = torch.zeros(3, dtype=torch.float32, device=x.device)
    cta_own[(3,)](x, out, 40, BLOCK=16)
    return out


def _unmasked(x):
    out = torch.zeros(40, dtype=torch.float32, device=x.device)
    unmasked_atomic[(3,)](x, out, 40, BLOCK=16)
    return out


_CASES = [Case("tiny", params={})]
cta = Scenario("cta", _x, _total, lambda x: x.float().sum().reshape(1), _CASES, kernels=[cta_total])
own = Scenario("own", _x, _own, lambda x: torch.nn.functional.pad(x.float(), (0, 8)).reshape(3, 16).sum(1), _CASES,
               kernels=[cta_own])
unmasked = Scenario("unmasked", _x, _unmasked, lambda x: x.float(), _CASES, kernels=[unmasked_atomic])
