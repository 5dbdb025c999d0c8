"""Small programs test_program.py runs under tritondbg: `python programs.py crash|sigint PIDFILE|inplace|device|sizes|
autotuned|autotuned_tail|pre_hook|autotuned_out|pruned|subclass|oob_load|oob_neighbour|raise_early|oob_then_segv|osexit|forkpool|forkpool_with`."""
import os
import sys
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))
from user_kernels import scale_shift  # noqa: E402


@triton.jit
def add_one_kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs * stride, tl.load(x_ptr + offs * stride, mask=mask) + 1, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 16})],
                 key=["n"])
@triton.jit
def accumulate_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    """acc += x: each run adds again (an autotuner that benchmarks it adds once per timed run)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)


from lib_tuner import lib_autotune  # noqa: E402


@lib_autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def unmasked_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))  # BUG: no mask (n = 100, BLOCK = 64)


@triton.jit
def unmasked_copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))  # BUG: no mask (x has 100 elements, y 128)


def call_through_a_library_tuner():
    x = torch.arange(100, dtype=torch.float32)
    unmasked_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, torch.empty_like(x), 100)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = 2 x: every timed run of its autotuner writes y as the kept launch does."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def _dividing(configs, named_args, **kwargs):
    return [c for c in configs if named_args["n"] % c.kwargs["BLOCK"] == 0]


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (256, 128, 64)], key=["n"],
                 prune_configs_by={"early_config_prune": _dividing})
@triton.jit
def triple_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = 3 x with no mask: right only for a BLOCK that divides n, which its pruning keeps."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 3)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 16})],
                 key=["n"])
@triton.jit
def tail_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = x + 1 with no mask: right for a BLOCK that divides n (32, 16 at n = 96), out of bounds for 64."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 1)  # BUG: no mask


def _zero_total(nargs):
    nargs["total_ptr"].zero_()
    print("pre_hook zeroed the total", file=sys.stderr)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, pre_hook=_zero_total), triton.Config({"BLOCK": 64},
                                                                                            pre_hook=_zero_total)],
                 key=["n"])
@triton.jit
def total_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    """total = sum(x), from the zero its config's pre_hook writes."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(total_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


def _shift_sum(n):
    return float(scale_shift(torch.arange(n, dtype=torch.float32), 2.0, 1.0).sum())


if __name__ == "__main__":
    if sys.argv[1] == "pruned":                     # two keys whose pruning keeps different first configs
        for n in (1024, 192):
            x = torch.randn(n)
            y = torch.full_like(x, float("nan"))
            triple_kernel[lambda meta: (n // meta["BLOCK"],)](x, y, n)
            assert torch.equal(y, 3 * x), f"n = {n}: wrong"
        sys.exit(0)
    if sys.argv[1] == "autotuned_out":              # an autotuned kernel with a pure output, on Triton's device
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
        x = torch.arange(100, dtype=torch.float32, device=DEVICE)
        y = torch.zeros(100, device=DEVICE)
        double_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, 100)
        assert torch.equal(y, 2 * x)
        sys.exit(0)
    if sys.argv[1] == "subclass":                   # launched through a library's Autotuner subclass
        call_through_a_library_tuner()
        sys.exit(0)
    if sys.argv[1] == "oob_load":                   # a load with no mask, past the end of x: what does y get?
        x, y = torch.ones(100), torch.full((128,), 5.0)
        unmasked_copy_kernel[(2,)](x, y, BLOCK=64)
        print(f"y[98:102] {y[98:102].tolist()}")
        sys.exit(0)
    if sys.argv[1] == "oob_neighbour":              # the same load where x's tail is y's memory (views of one base)
        base = torch.full((228,), 5.0)
        x, y = base[:100], base[100:]
        x.fill_(1.0)
        unmasked_copy_kernel[(2,)](x, y, BLOCK=64)
        print(f"y[98:102] {y[98:102].tolist()}")
        sys.exit(0)
    if sys.argv[1] == "raise_early":                # a launch that fails on its arguments, caught by the program
        class NoPointer:
            dtype = torch.float32

            def data_ptr(self):
                raise RuntimeError("no pointer here")
        try:
            unmasked_copy_kernel[(1,)](NoPointer(), torch.zeros(64), BLOCK=64)
        except RuntimeError as exc:
            print(f"caught: {exc}")
        y = torch.zeros(128)
        unmasked_copy_kernel[(2,)](torch.ones(128), y, BLOCK=64)
        sys.exit(0)
    if sys.argv[1] == "oob_then_segv":              # the same launch, then the program dies in C code
        import ctypes
        x, y = torch.ones(100), torch.full((128,), 5.0)
        unmasked_copy_kernel[(2,)](x, y, BLOCK=64)
        add_one_kernel[(1,)](x, y, 100, 1, BLOCK=128)
        ctypes.string_at(0)                         # SIGSEGV: no exit hook runs
    if sys.argv[1] == "autotuned_tail":             # an autotuned kernel right only for the configs that divide n
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
        x = torch.arange(96, dtype=torch.float32, device=DEVICE)
        y = torch.empty_like(x)
        tail_kernel[lambda meta: (triton.cdiv(96, meta["BLOCK"]),)](x, y, 96)
        assert torch.equal(y, x + 1)
        sys.exit(0)
    if sys.argv[1] == "pre_hook":                   # a config whose pre_hook zeroes the total before the launch
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
        x = torch.arange(100, dtype=torch.float32, device=DEVICE)
        total = torch.full((1,), 5.0, device=DEVICE)
        total_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, total, 100)
        assert total.item() == 4950.0, total.item()
        sys.exit(0)
    if sys.argv[1] == "autotuned":                  # an autotuned in-place kernel: must run exactly once
        x = torch.arange(100, dtype=torch.float32)
        acc = torch.ones(100)
        accumulate_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, acc, 100)
        print(f"acc {acc[:3].tolist()}")
        assert torch.equal(acc, x + 1), "the kernel ran more than once"
        sys.exit(0)
    if sys.argv[1] == "device":                     # tutorial style: ask Triton's driver for the device
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
        x = torch.arange(10, dtype=torch.float32, device=DEVICE)
        add_one_kernel[(1,)](x, x, 10, 1, BLOCK=16)
        print(f"device {DEVICE}: {x[:3].tolist()}")
        sys.exit(0)
    if sys.argv[1] == "bench":                      # tutorial style: time the kernel and torch with do_bench
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
        x = torch.arange(10, dtype=torch.float32, device=DEVICE)
        add_one_kernel[(1,)](x, x, 10, 1, BLOCK=16)
        launches = []
        getattr(torch, DEVICE.type).set_stream(getattr(torch, DEVICE.type).Stream())  # tutorial 02's benchmark
        ms = triton.testing.do_bench(lambda: launches.append(add_one_kernel[(1,)](x, x, 10, 1, BLOCK=16)))
        q = triton.testing.do_bench(lambda: x + 1, quantiles=[0.5, 0.2, 0.8])
        print(f"bench {ms} {q} {len(launches)} {x[:3].tolist()}")
        sys.exit(0)
    if sys.argv[1] == "sizes":                      # two distinct launch signatures, one repeated
        for n in (100, 200, 100):
            scale_shift(torch.arange(n, dtype=torch.float32), 2.0, 1.0)
        sys.exit(0)
    if sys.argv[1] == "inplace":
        buf = torch.arange(40, dtype=torch.float32)
        view = buf[3:23:2]                        # storage offset 3, stride 2; read and written in place
        add_one_kernel[(2,)](view, view, view.numel(), view.stride(0), BLOCK=8)
        assert torch.equal(buf[3:23:2], torch.arange(3, 23, 2, dtype=torch.float32) + 1)
        sys.exit(0)
    if sys.argv[1] == "forkpool":                   # forked workers (they end in os._exit), one launch each
        import multiprocessing as mp

        pool = mp.get_context("fork").Pool(2)
        pool.map(_shift_sum, [100, 200])
        pool.close()  # the workers end in os._exit (`with Pool` terminates them: "forkpool_with")
        pool.join()
    if sys.argv[1] == "forkpool_with":              # `with Pool`: its __exit__ ends the workers by SIGTERM
        import multiprocessing as mp

        with mp.get_context("fork").Pool(2) as pool:
            pool.map(_shift_sum, [100, 200])
    scale_shift(torch.arange(100, dtype=torch.float32), 2.0, 1.0)
    if sys.argv[1] == "osexit":                     # ends without atexit
        os._exit(3)
    if sys.argv[1] == "crash":
        raise RuntimeError("the program failed after one launch")
    if sys.argv[1] == "sigint":
        with open(sys.argv[2], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
