"""Sanitizer data (race): plain stores of several programs to one element. Every program setting a done flag to
the same value is harmless on the GPU (the flag ends 1 in any order): a warning (the same bits could also be a
race a uniform input hides). Programs storing their own pid to one element race for real (the last one wins): a
race error for that element."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def copy_and_flag(x_ptr, y_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    tl.store(flag_ptr, 1)                              # every program: the same bits


@triton.jit
def flag_and_last(x_ptr, y_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    tl.store(flag_ptr, 1)                              # the same bits: harmless
    tl.store(flag_ptr + 1, pid)                        # a different value per program: a race


def _launch(kernel):
    def launch(x):
        y, flags = torch.empty_like(x), torch.zeros(2, dtype=torch.int32, device=x.device)
        kernel[(triton.cdiv(x.numel(), 64),)](x, y, flags, x.numel(), BLOCK=64)
        return y, flags[:1]
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float(), torch.ones(1)


_CASES = [Case("tiny", params=dict(n=200))]
flag = Scenario("flag", make_inputs, _launch(copy_and_flag), reference, _CASES, kernels=[copy_and_flag])
flag_and_pid = Scenario("flag_and_pid", make_inputs, _launch(flag_and_last), reference, _CASES,
                        kernels=[flag_and_last])


@triton.jit
def rows_into_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # each program sums its row (masked without other=: its padding undefined) and every program stores its result
    # to out[0] (the row stride forgotten): the values only look alike here, the sanitizers' NaN in each
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    total = tl.sum(tl.load(x_ptr + row * n + cols, mask=cols < n), axis=0)
    tl.store(out_ptr, total)                           # RACE_UNDEFINED


def _launch_rows(x):
    out = torch.zeros(4, dtype=torch.float32, device=x.device)
    rows_into_one[(4,)](x, out, x.shape[1], BLOCK=64)
    return out


def make_rows(case, dtype, device, generator):
    return dict(x=torch.randn(4, 50, generator=generator).to(device=device, dtype=dtype))


undefined_values = Scenario("undefined_values", make_rows, _launch_rows, lambda x: x.float().sum(1),
                            [Case("tiny", params={})], kernels=[rows_into_one])
