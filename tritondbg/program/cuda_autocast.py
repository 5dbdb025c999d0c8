"""``torch.autocast("cuda")`` in a program run on the CPU (``interpret -- CMD`` without a GPU): CPU autocast at
CUDA's dtype, following CUDA autocast's op lists.

CPU and CUDA autocast cast different ops (aten/src/ATen/autocast_mode.cpp): under CUDA autocast layer_norm,
softmax, log_softmax, sum, exp, pow, cumsum, group_norm ... run in float32, and mv, addmv, addr, einsum,
chain_matmul, the RNN cells in the autocast dtype; CPU autocast leaves all of them in their input dtype. A program
whose reference runs under ``autocast("cuda")`` then compared a float16 reference with a kernel's float32 output
(attorch's own tests, helper-82: "dtype float32 != float16") although both agree on a GPU. While an autocast the
program opened for "cuda" is the innermost one, kernels registered here at the AutocastCPU dispatch key apply
CUDA's policy to the ops CPU autocast does not list; under ``autocast("cpu")`` they pass the call on unchanged, as
CPU autocast's fallthrough does.
"""
from __future__ import annotations

import threading

# CUDA's lower-precision ops that CPU autocast does not cast (AT_FORALL_LOWER_PRECISION_FP less the CPU list)
LOWER = ("addmv", "addr", "einsum", "mv", "chain_matmul", "linalg_multi_dot", "lstm_cell", "gru_cell",
         "rnn_tanh_cell", "rnn_relu_cell")
# CUDA's float32 ops that CPU autocast does not cast (AT_FORALL_FP32, _SET_OPT_DTYPE and norm's, less the CPU list)
FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
        "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
        "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
        "cosine_similarity", "dist", "pdist", "renorm", "logsumexp", "softmax.int", "softmax.Dimname",
        "log_softmax.int", "log_softmax.Dimname", "cumprod", "cumprod.dimname", "cumsum", "cumsum.dimname",
        "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum", "sum.dim_IntList",
        "sum.dim_DimnameList", "norm.Scalar", "norm.ScalarOpt_dim", "norm.names_ScalarOpt_dim")

_local = threading.local()  # .stack: one bool per entered CPU autocast, True where the program asked for "cuda"
_LIB: list = []  # the torch.library.Library holding the kernels (kept alive)


def cuda_policy() -> bool:
    """The innermost autocast the program entered was one it opened for "cuda"."""
    stack = getattr(_local, "stack", None)
    return bool(stack) and stack[-1]


def _cast(value, dtype, torch):
    if isinstance(value, torch.Tensor):
        eligible = value.is_floating_point() and value.dtype != torch.float64
        return value.to(dtype) if eligible and value.dtype != dtype else value
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
        return type(value)(_cast(v, dtype, torch) for v in value)
    return value


def _kernel(op, lower: bool, torch):
    """op's AutocastCPU kernel: CUDA's policy under a "cuda" autocast (float32, or the autocast dtype for
    ``lower``; an explicit ``dtype`` argument kept, as CUDA's fp32_set_opt_dtype does), else the call unchanged."""
    args_schema = op._schema.arguments
    dtype_at = next((i for i, a in enumerate(args_schema) if a.name == "dtype"), None)
    below = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)

    def kernel(*args, **kwargs):
        if cuda_policy():
            explicit = kwargs.get("dtype") if dtype_at is not None else None
            if dtype_at is not None and explicit is None and len(args) > dtype_at:
                explicit = args[dtype_at]
            if explicit is None:
                dtype = torch.get_autocast_dtype("cpu") if lower else torch.float32
                args = tuple(_cast(a, dtype, torch) for a in args)
                kwargs = {k: _cast(v, dtype, torch) for k, v in kwargs.items()}
        with torch._C._ExcludeDispatchKeyGuard(below):
            return op(*args, **kwargs)

    return kernel


def _register(torch) -> None:
    if _LIB:
        return
    lib = torch.library.Library("aten", "IMPL")
    for names, lower in ((LOWER, True), (FP32, False)):
        for qual in names:
            name, _, overload = qual.partition(".")
            packet = getattr(torch.ops.aten, name, None)
            op = getattr(packet, overload or "default", None) if packet is not None else None
            if op is None:  # an op this torch does not have
                continue
            lib.impl(qual, _kernel(op, lower, torch), "AutocastCPU")
    _LIB.append(lib)


def install(torch, cpu, state: dict) -> None:
    """``torch.autocast("cuda", ...)`` (and ``torch.cuda.amp.autocast``) becomes CPU autocast with CUDA's default
    dtype (float16) and CUDA's op lists, ``GradScaler("cuda")`` a CPU scaler: torch disabled both with a warning,
    and kernels got float32 where the GPU run gives them half precision (a user's report). ``cpu(device)`` returns
    its argument where it names no GPU device; ``state`` counts the moves ("moved") and the autocasts that cannot
    run on the CPU ("amp_off")."""
    autocast, scaler = torch.amp.autocast_mode.autocast, torch.amp.grad_scaler.GradScaler
    autocast_init, scaler_init = autocast.__init__, scaler.__init__
    enter, leave = autocast.__enter__, autocast.__exit__

    def __init__(self, *args, **kwargs):
        device = args[0] if args else kwargs.get("device_type")
        cuda = cpu(device) is not device
        if cuda:
            state["moved"] += 1
            args, kwargs = args[1:], dict(kwargs, device_type="cpu")
            if len(args) < 1 and kwargs.get("dtype") is None:
                kwargs["dtype"] = torch.float16  # CUDA autocast's default (the CPU's is bfloat16)
            dtype = args[0] if args else kwargs.get("dtype")
            if dtype not in (torch.float16, torch.bfloat16):  # (attorch's autocast('cuda', dtype=float32)): CPU
                args, kwargs = (), dict(kwargs, dtype=torch.bfloat16, enabled=False)  # autocast has no such
                state["amp_off"] = state.get("amp_off", 0) + 1                         # dtype: off, said once
        autocast_init(self, *args, **kwargs)
        self._tdbg_cuda = cuda

    def __enter__(self):
        out = enter(self)
        if getattr(self, "device", None) == "cpu":
            if not hasattr(_local, "stack"):
                _local.stack = []
            _local.stack.append(bool(getattr(self, "_tdbg_cuda", False)))
        return out

    def __exit__(self, *exc):
        if getattr(self, "device", None) == "cpu" and getattr(_local, "stack", None):
            _local.stack.pop()
        return leave(self, *exc)

    def scaler_on_cpu(self, *args, **kwargs):
        device = args[0] if args else kwargs.get("device", "cuda")
        if cpu(device) is not device:
            state["moved"] += 1
            args, kwargs = args[1:], dict(kwargs, device="cpu")
        scaler_init(self, *args, **kwargs)

    autocast.__init__, scaler.__init__ = __init__, scaler_on_cpu
    autocast.__enter__, autocast.__exit__ = __enter__, __exit__
    _register(torch)
    # the state a library asks for (attorch's get_output_dtype, torch.amp.custom_fwd(device_type="cuda")): CUDA's
    # is the CPU's, where CUDA autocast runs
    enabled, get_dtype = torch.is_autocast_enabled, torch.get_autocast_dtype

    def is_autocast_enabled(*args, **kwargs):
        device = args[0] if args else kwargs.get("device_type", "cuda")
        return enabled("cpu") if cpu(device) is not device else enabled(*args, **kwargs)

    def get_autocast_dtype(device_type):
        return get_dtype("cpu") if cpu(device_type) is not device_type else get_dtype(device_type)

    torch.is_autocast_enabled, torch.get_autocast_dtype = is_autocast_enabled, get_autocast_dtype
    torch.get_autocast_gpu_dtype = lambda: get_dtype("cpu")
