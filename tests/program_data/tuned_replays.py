"""Autotuned launches whose reproducers a stranger found wrong (tests/test_program_autotuned.py).

`python tuned_replays.py CASE`, CASE one of:
- reset: a config that refuses itself (tl.static_assert) ahead of the one that runs, and an accumulating kernel
  whose autotuner zeroes its output (reset_to_zero) before the first call of its key only; called twice.
- heuristics: the grid reads a @triton.heuristics value that follows the config (NPROG = cdiv(n, BLOCK)).
- dtype: configs that carry a tl.dtype value.
- made_up: an early_config_prune that returns new Config objects.
- warps: a @triton.heuristics above an autotuner whose configs set num_warps only (fla's chunk_local_cumsum).
- partial: partial sums laid out per program (the number written follows BLOCK), beside an elementwise output;
  `partial bug` makes the elementwise output wrong for BLOCK=64 only.
- persistent: a fixed grid of 4 programs, each writing one partial sum over the tiles it takes (their ranges
  follow BLOCK).
- added: an early_config_prune that reads an argument the program passes by keyword from its **kwargs and
  returns configs with a key the listed ones lack (gemlite's kernel_config_pruner: NUM_STAGES).
- tail: an elementwise kernel whose mask drops the tail for BLOCK=256 only (a bug the all-configs sweep must fail).
"""
import sys

import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (8, 16, 32)], key=["n"], reset_to_zero=["acc_ptr"])
@triton.jit
def acc_kernel(x_ptr, acc_ptr, n, s, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 16, "BLOCK too small")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=m) + tl.load(x_ptr + offs, mask=m) * s, mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64)], key=["n"])
@triton.heuristics({"NPROG": lambda a: triton.cdiv(a["n"], a["BLOCK"])})
@triton.jit
def heur_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, NPROG: tl.constexpr):
    p = tl.program_id(0)
    tl.device_assert(tl.num_programs(0) == NPROG, "launched with another grid than the config's")
    offs = p * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 16, "ACC": tl.float32}),
                          triton.Config({"BLOCK": 32, "ACC": tl.float64})], key=["n"])
@triton.jit
def dtype_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACC: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, (tl.load(x_ptr + offs, mask=m).to(ACC) * 2).to(tl.float32), mask=m)


def remake(configs, named_args, **kwargs):
    return [triton.Config(dict(c.kwargs), num_warps=c.num_warps) for c in configs if c.kwargs["BLOCK"] <= 64]


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128)], key=["n"],
                 prune_configs_by={"early_config_prune": remake})
@triton.jit
def made_up_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def add_stages(configs, named_args, **kwargs):
    scale = kwargs["scale"]  # KeyError unless passed by keyword
    return [triton.Config({**c.kwargs, "STAGES": c.num_stages, "SCALE": scale}, num_warps=c.num_warps,
                          num_stages=c.num_stages) for c in configs]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_stages=s) for b, s in ((16, 2), (32, 3))], key=["n"],
                 prune_configs_by={"early_config_prune": add_stages})
@triton.jit
def added_kernel(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr, STAGES: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * scale * (STAGES > 0), mask=offs < n)


@triton.heuristics({"HAS_SCALE": lambda a: a["scale"] is not None})
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 2, 4)], key=["n"])
@triton.jit
def warps_kernel(x_ptr, y_ptr, scale, n, BLOCK: tl.constexpr, HAS_SCALE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if HAS_SCALE:
        x = x * scale
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128)], key=["n"])
@triton.jit
def partial_kernel(x_ptr, part_ptr, y_ptr, n, BUG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    wrong = BUG and BLOCK == 64
    tl.store(y_ptr + offs, x * 2 + wrong, mask=offs < n)
    tl.store(part_ptr + tl.program_id(0), tl.sum(x, 0))


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 64)], key=["n"])
@triton.jit
def persistent_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid, nprog = tl.program_id(0), tl.num_programs(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for t in range(pid, tl.cdiv(n, BLOCK), nprog):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(acc, 0))


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (64, 256)], key=["n"])
@triton.jit
def tail_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if BLOCK == 256:
        mask = offs < (n // BLOCK) * BLOCK  # BUG: drops the tail
    else:
        mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


if __name__ == "__main__":
    case, n = sys.argv[1], 50
    torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")  # (compiled on the GPU machine)
    x = torch.randn(n)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    if case == "reset":
        acc = torch.full((n,), 7.0)
        acc_kernel[grid](x, acc, n, 3)  # the key's first call: zeroed, then 3x
        acc_kernel[grid](x, acc, n, 5)  # no reset: 3x + 5x
        print("OK" if torch.allclose(acc, 8 * x) else "WRONG")
    elif case == "heuristics":
        y = torch.empty(n)
        heur_kernel[lambda meta: (meta["NPROG"],)](x, y, n)
        print("OK" if torch.equal(y, 2 * x) else "WRONG")
    elif case == "warps":
        y = torch.empty(n)
        warps_kernel[(triton.cdiv(n, 32),)](x, y, 2.0, n, BLOCK=32)
        print("OK" if torch.allclose(y, 2 * x) else "WRONG")
    elif case in ("dtype", "made_up"):
        y = torch.empty(n)
        (dtype_kernel if case == "dtype" else made_up_kernel)[grid](x, y, n)
        print("OK" if torch.allclose(y, 2 * x) else "WRONG")
    elif case == "added":
        y = torch.empty(n)
        added_kernel[grid](x, y, n, scale=2.0)
        print("OK" if torch.allclose(y, 2 * x) else "WRONG")
    elif case == "persistent":
        part = torch.empty(4)
        persistent_kernel[(4,)](x, part, n)
        print("OK" if abs(float(part.sum() - x.sum())) < 1e-3 else "WRONG")
    elif case == "tail":
        x = torch.randn(1000)
        y = torch.empty(1000)
        tail_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, y, 1000)
        print("OK" if torch.equal(y, 2 * x) else "WRONG")
    elif case == "partial":
        part, y, launched = torch.empty(64), torch.empty(n), {}  # (mamba's ddA_cumsum: torch.empty)

        def counted(meta):
            launched["n"] = triton.cdiv(n, meta["BLOCK"])
            return (launched["n"],)

        partial_kernel[counted](x, part, y, n, len(sys.argv) > 2)
        print("OK" if abs(float(part[:launched["n"]].sum() - x.sum())) < 1e-3 else "WRONG")
