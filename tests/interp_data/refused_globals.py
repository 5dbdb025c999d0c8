"""A jit helper that reads a module global the GPU compiler refuses (a plain float, not tl.constexpr), in the branch
a constexpr picks: kernl's linear layer (helper-53) passed `interpret` and failed `ir` for sm_90."""
import math

import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario

SQRT2 = math.sqrt(2.0)          # a plain float: the compiler refuses it
EPS = tl.constexpr(1e-6)         # fine: a constexpr global

@triton.jit
def gelu(x, EXACT: tl.constexpr):
    if EXACT:
        return 0.5 * x * (1 + tl.erf(x / SQRT2))
    return x * tl.sigmoid(1.702 * x) + EPS * 0

@triton.jit
def k(x_ptr, y_ptr, n, B: tl.constexpr, EXACT: tl.constexpr):
    o = tl.arange(0, B)
    x = tl.load(x_ptr + o, mask=o < n)
    tl.store(y_ptr + o, gelu(x, EXACT), mask=o < n)

def launch(x, exact):
    y = torch.empty_like(x)
    k[(1,)](x, y, x.numel(), B=16, EXACT=exact)
    return y

def ref(x, exact):
    return torch.nn.functional.gelu(x) if exact else x * torch.sigmoid(1.702 * x)

def make(case, dtype, device, generator):
    return dict(x=torch.randn(10, generator=generator), exact=case.params["exact"])


gelus = Scenario("gelus", make, launch, ref, [Case("exact", params=dict(exact=True), dtypes=("float32",)),
                                               Case("approx", params=dict(exact=False), dtypes=("float32",))],
                 kernels=[k])


SCALE = 2.0  # read by a kernel's own body: refused


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * SCALE, mask=o < n)


CONFIGS = [triton.Config({"B": 16}), triton.Config({"B": 32})]  # globals of the decorators and the defaults only:
WIDTH = 3.0                                                     # the compiler never reads them as the kernel's


def keep_all(configs, named_args, **kwargs):
    return configs


@triton.autotune(configs=CONFIGS, key=["n"], prune_configs_by={"early_config_prune": keep_all})
@triton.jit
def decorated_kernel(x_ptr, y_ptr, n, B: tl.constexpr, W: tl.constexpr = WIDTH):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * W, mask=o < n)


def scale_launch(x):
    y = torch.empty_like(x)
    scale_kernel[(1,)](x, y, x.numel(), B=16)
    return y


def decorated_launch(x):
    y = torch.empty_like(x)
    decorated_kernel[lambda meta: (triton.cdiv(x.numel(), meta["B"]),)](x, y, x.numel())
    return y


def _x(case, dtype, device, generator):
    return dict(x=torch.randn(10, generator=generator))


own = Scenario("own", _x, scale_launch, lambda x: 2 * x, [Case("tiny", dtypes=("float32",))], kernels=[scale_kernel])
decorated = Scenario("decorated", _x, decorated_launch, lambda x: 3 * x, [Case("tiny", dtypes=("float32",))],
                     kernels=[decorated_kernel])


from triton.language.extra.libdevice import tanh  # noqa: E402  (a name the interpreter's libdevice swaps for a run)


@triton.jit
def tanh_of(v):
    return tanh(v)  # in a helper: checked while the swapped-in function is the module's global (helper-55)


@triton.jit
def tanh_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(y_ptr + o, tanh_of(tl.load(x_ptr + o, mask=o < n)), mask=o < n)


def tanh_launch(x):
    y = torch.empty_like(x)
    tanh_kernel[(1,)](x, y, x.numel(), B=16)
    return y


tanh_helper = Scenario("tanh_helper", _x, tanh_launch, torch.tanh, [Case("tiny", dtypes=("float32",))],
                       kernels=[tanh_kernel])
