"""NaNs a tl.where drops (a guarded divide, 0/0 in the branch not taken) beside a NaN that reaches the output:
the nan_inf finding names the op whose NaN reached memory, not the first op that made one (helper-47: unsloth's
cross entropy had it name a guarded divide in its correct backward kernel)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def guarded_then_sqrt(x_ptr, out_ptr, n, BUG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    safe = tl.where(x == 0.0, 0.0, (x * 0.0) / x)  # MARK: guarded
    if BUG:
        bad = tl.sqrt(x - 0.5)  # MARK: sqrt
    else:
        bad = tl.sqrt(tl.maximum(x - 0.5, 0.0))
    tl.store(out_ptr + offs, safe + bad, mask=m)


@triton.jit
def padded_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("inf"))  # padding +inf: the max takes it
    safe = tl.where(x == 0.0, 0.0, (x * 0.0) / x)  # MARK: guarded2
    c = tl.max(x, 0)  # MARK: max
    tl.store(out_ptr + offs, x - c + safe, mask=offs < n)


def _inputs(case, dtype, device, generator):
    x = torch.rand(300, generator=generator)
    x[0] = 0.0
    return dict(x=x.to(device))


def _launch(bug):
    def launch(x):
        out = torch.empty_like(x)
        guarded_then_sqrt[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BUG=bug, BLOCK=128)
        return out
    return launch


def _padded(x):
    out = torch.empty_like(x)
    padded_max[(1,)](x, out, x.numel(), BLOCK=512)
    return out


_CASES = [Case("tiny", dtypes=("float32",))]
dropped = Scenario("dropped", _inputs, _launch(True), lambda x: torch.sqrt(torch.clamp(x - 0.5, min=0)), _CASES,
                   kernels=[guarded_then_sqrt])
dropped_twin = Scenario("dropped_twin", _inputs, _launch(False), lambda x: torch.sqrt(torch.clamp(x - 0.5, min=0)),
                        _CASES, kernels=[guarded_then_sqrt])
padded = Scenario("padded", _inputs, _padded, lambda x: x - x.max(), _CASES, kernels=[padded_max])
