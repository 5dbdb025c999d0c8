"""Zoo: a plain store racing other programs' atomics: program 0 zeroes the total that every program
tl.atomic_adds into. The interpreter runs program 0 first, so the sum comes out right on the CPU; on a GPU
another program's add can land before the zeroing store and be lost.

The twin sums through a ticket counter: each program stores its partial, takes a ticket with tl.atomic_add, and
the program that draws the last ticket adds the partials and resets the counter with a plain tl.store (after
its own atomic: no race). It also polls the counter with tl.atomic_add(count, 0), which changes nothing."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def sum_zeroed_in_kernel(x_ptr,    # *fp32 (n,), read
                         out_ptr,  # *fp32 (1,), zeroed by program 0, added into by every program
                         n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(out_ptr, 0.0)  # BUG: race (with the other programs' tl.atomic_add below)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def sum_ticket(x_ptr, partial_ptr, count_ptr, out_ptr, n, BLOCK: tl.constexpr, PROGRAMS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
    tl.atomic_add(count_ptr, 0)  # a poll: reads the counter, changes nothing
    ticket = tl.atomic_add(count_ptr, 1)  # acq_rel: the partials stored before it are seen by the last program
    if ticket == tl.num_programs(0) - 1:
        p = tl.arange(0, PROGRAMS)
        tl.store(out_ptr, tl.sum(tl.load(partial_ptr + p, mask=p < tl.num_programs(0), other=0.0), axis=0))
        tl.store(count_ptr, 0)  # reset for the next launch, by the program the counter picked


def _zeroed(x):
    out = torch.empty(1, dtype=torch.float32, device=x.device)  # the kernel zeroes it (program 0)
    sum_zeroed_in_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def _ticket(x):
    programs = triton.cdiv(x.numel(), 128)
    partial = torch.empty(programs, dtype=torch.float32, device=x.device)
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    out = torch.empty(1, dtype=torch.float32, device=x.device)
    sum_ticket[(programs,)](x, partial, count, out, x.numel(), BLOCK=128,
                            PROGRAMS=triton.next_power_of_2(programs))
    return out


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().sum().reshape(1)


_CASES = [Case("tiny", params=dict(n=500), atol=1e-3)]
buggy = Scenario("buggy", make_inputs, _zeroed, reference, _CASES, kernels=[sum_zeroed_in_kernel])
twin = Scenario("twin", make_inputs, _ticket, reference, _CASES, kernels=[sum_ticket])
