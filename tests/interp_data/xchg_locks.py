"""tl.atomic_xchg as a test-and-set lock (each program adds its row into one accumulator under it: no race) and
as a flag (each program raises its own flag by exchange, then stores its pid to one element: still a race)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def tas_accumulate(x_ptr, acc_ptr, lock_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * N + cols, mask=cols < N, other=0.0)
    while tl.atomic_xchg(lock_ptr, 1) == 1:  # test-and-set: taken when it read 0
        pass
    a = tl.load(acc_ptr + cols, mask=cols < N, other=0.0)
    tl.store(acc_ptr + cols, a + x, mask=cols < N)
    tl.atomic_xchg(lock_ptr, 0)  # given back


@triton.jit
def flag_then_store(flags_ptr, out_ptr):
    pid = tl.program_id(0)
    tl.atomic_xchg(flags_ptr + pid, 1)  # a flag of its own, never given back: no lock
    tl.store(out_ptr, pid.to(tl.float32))  # MARK: flag_race


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(4, 10, generator=generator).to(device=device, dtype=dtype))


def _tas(x):
    acc = torch.zeros(10, dtype=torch.float32, device=x.device)
    lock = torch.zeros(1, dtype=torch.int32, device=x.device)
    tas_accumulate[(4,)](x, acc, lock, 10, BLOCK=16)
    return acc


def _flag(x):
    flags = torch.zeros(4, dtype=torch.int32, device=x.device)
    out = torch.zeros(1, dtype=torch.float32, device=x.device)
    flag_then_store[(4,)](flags, out)
    return out


_CASES = [Case("tiny", params={})]
tas_lock = Scenario("tas_lock", make_inputs, _tas, lambda x: x.float().sum(0), _CASES, kernels=[tas_accumulate])
xchg_flag = Scenario("xchg_flag", make_inputs, _flag, lambda x: torch.full((1,), 3.0), _CASES,
                     kernels=[flag_then_store])
