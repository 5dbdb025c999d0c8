"""`tritondbg interpret -- CMD` on a machine without a GPU: the program's "cuda" tensors are made on the CPU.

Programs and test suites written for a GPU name the device: ``torch.randn(n, device="cuda")``, ``x.cuda()``,
``x.to("cuda:0")``, ``torch.set_default_device("cuda")`` (Liger-Kernel's and most kernel authors' tests, every
benchmark script). Without a GPU each of these dies with "Torch not compiled with CUDA enabled" before the first
launch, and the only way under the interpreter was to edit the program. Here a torch function mode, pushed when
the program imports torch, answers such requests with CPU tensors (where the interpreter runs kernels anyway):

- a ``device=`` argument naming CUDA (``"cuda"``, ``"cuda:1"``, ``torch.device("cuda")``, a bare index) becomes
  ``"cpu"``; ``Tensor.to(<cuda device>, ...)`` likewise; ``Tensor.cuda()`` returns the tensor;
- ``pin_memory=True`` / ``Tensor.pin_memory()`` (no pinned allocator without an accelerator) pin nothing;
- ``torch.set_default_device("cuda")`` sets the CPU;
- ``torch.autocast("cuda", dtype)`` is CPU autocast at that dtype (float16 when none is given, as on CUDA) with
  CUDA's op lists (tritondbg/program/cuda_autocast.py), and
  ``GradScaler("cuda")`` a CPU scaler (torch disabled both, and kernels ran in float32 where a GPU gives them half
  precision);
- a tensor the program has on "cuda" (made or moved there, what ops make of it, a Parameter of it) says so to the
  program's code and its libraries' (``is_cuda`` True, ``device`` cuda:0, ``get_device()`` 0), so their checks
  and GPU branches are the GPU run's; torch, Triton and tritondbg still see a CPU tensor (``_from_program``).

Triton's ``get_active_torch_device()`` (the tutorials' ``DEVICE``) is cuda:0 then (tritondbg/standin.py): a tensor
made on it is a "cuda" tensor. What stays as it was: ``torch.cuda.is_available()`` is still False (a program that
picks its device by asking gets the CPU already), a tensor made without a device says cpu, and what has no stand-in
(CUDA graphs; streams, events, memory figures, RNG state: tritondbg/cuda_objects.py;
``torch.Generator(device="cuda")``: a CPU generator) still fails; the program's traceback then ends with one tritondbg line
(``child._hint_on_cuda_tensors``). Function modes are per thread: every thread the program starts enters one
(a prefetcher's ``.cuda()``); the autograd engine runs a custom Function's backward with none, so the mode is
pushed around it (reentry.py). Only installed when torch has no CUDA device; the run's summary says how many requests were moved.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import types
import warnings

_state: dict = {"mode": None, "moved": 0}
_GETSET = types.GetSetDescriptorType
_NO = object()
_CPU_OF_CUDA = None  # what a CUDA tensor's ``.device`` is to torch's own code: torch.device("cpu"), this object


def _cpu(device):
    """``device`` with CUDA replaced by the CPU (the same object when it names no CUDA device)."""
    import torch

    if isinstance(device, str) and (device == "cuda" or device.startswith("cuda:")):
        ordinal(device[5:])
        return "cpu"
    if isinstance(device, torch.device) and device.type == "cuda":
        ordinal(device.index)
        return torch.device("cpu")
    if isinstance(device, int) and not isinstance(device, bool):  # device=0: CUDA device 0
        ordinal(device)
        return "cpu"
    return device


def ordinal(index) -> None:
    """Note a CUDA device other than 0 the program asked for (``cuda:1``, ``set_device(1)``): one device here,
    so it is served as the CPU too, and the run's note says so (a rank's placement is not what a GPU would do)."""
    try:
        index = int(index) if index not in (None, "") else 0
    except (TypeError, ValueError):
        return
    if index > 0:
        _state.setdefault("ordinals", set()).add(index)


def ordinals() -> list[int]:
    return sorted(_state.get("ordinals", ()))


_TAG = "_tdbg_on_cuda"  # set on the tensors the program has on "cuda" (a CPU tensor here)


def _target(device) -> str | None:
    """Where ``device`` sends a tensor, for the call the mode is handling: "cuda" (a CUDA device by name or index),
    "host" (the string "cpu", or a cpu ``torch.device`` in the program's code: the program moves it to the host),
    "same" (``_CPU_OF_CUDA``, what a CUDA tensor's ``.device`` is to torch's own code: the tensor's own device), or
    None."""
    import torch

    if isinstance(device, str):
        if device == "cuda" or device.startswith("cuda:"):
            return "cuda"
        return "host" if device == "cpu" or device.startswith("cpu:") else None
    if isinstance(device, torch.device):
        if device.type == "cpu":  # (frames: _from_program, this, the mode's handler, the caller)
            return "host" if _from_program(3) else "same" if device is _CPU_OF_CUDA else None
        return "cuda" if device.type == "cuda" else None
    if isinstance(device, int) and not isinstance(device, bool):
        return "cuda"
    return None


def _on_cuda(t) -> bool:
    # (not t.__dict__: torch.compile traces this mode, and dynamo has no __dict__; tensors only: dynamo refuses a
    # hasattr on the SymFloat of a float argument under dynamic=True, helper-140: Cut Cross-Entropy's softcapping)
    return isinstance(t, sys.modules["torch"].Tensor) and getattr(t, _TAG, False)


def _tag(value, on: bool = True) -> None:
    import torch

    if torch.compiler.is_compiling():  # dynamo traces the mode: a setattr on a traced tensor breaks fullgraph=True
        return                         # (helper-138: FBGEMM's compiled custom op returning a tuple)
    if isinstance(value, torch.Tensor):
        try:
            setattr(value, _TAG, on)
        except (AttributeError, RuntimeError):
            pass
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tag(v, on)


@functools.lru_cache(maxsize=None)
def _own_dirs() -> tuple:
    """The folders of code that sees the program's CUDA tensors as what they are (CPU tensors): torch's and
    Triton's (they would take their CUDA paths, with no CUDA build under them), tritondbg's and its bundled
    kernels' (the interpreter's own work on the launch)."""
    import importlib.util

    dirs = []
    for name in ("torch", "triton", "tritondbg", "tritondbg.kernels"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            dirs.append(os.path.dirname(spec.origin) + os.sep)
    return tuple(dirs)


def _from_program(depth: int = 2) -> bool:
    """Whether the torch call being handled was made by the program's code (its own or a library's), not by
    torch, Triton or tritondbg: the first frame out of the function modes' handlers (tritondbg's modes above this
    one call the function again from theirs)."""
    import torch

    if torch.compiler.is_compiling():
        return False
    from tritondbg.interp.initcheck import WRAPPER_CODE  # (torch.empty filled for the sanitizers)

    f = sys._getframe(depth)
    codes = _state.get("handler_codes", ())
    while f is not None and (f.f_code in codes or f.f_code is WRAPPER_CODE):
        f = f.f_back
    # triton.reinterpret(x): its TensorWrapper copies x.device for the program (helper-138: FBGEMM's "not supported
    while f is not None and f.f_code in _wrapper_codes():  # on cpu" of a "cuda" tensor's fp8 view)
        f = f.f_back
    return f is not None and not f.f_code.co_filename.startswith(_own_dirs())


def _wrapper_codes() -> tuple:
    """The code of Triton's ``TensorWrapper.__init__`` and ``reinterpret`` (once triton.runtime.jit is imported)."""
    codes = _state.get("wrapper_codes")
    if codes is None:
        jit = sys.modules.get("triton.runtime.jit")
        if jit is None or not hasattr(jit, "TensorWrapper"):
            return ()
        codes = _state["wrapper_codes"] = tuple(c for c in (jit.TensorWrapper.__init__.__code__,
                                                            getattr(getattr(jit, "reinterpret", None), "__code__",
                                                                    None)) if c is not None)
    return codes


def _any_on_cuda(args) -> bool:
    for a in args:
        if isinstance(a, (list, tuple)):
            if any(_on_cuda(x) for x in a):
                return True
        elif _on_cuda(a):
            return True
    return False


def _on_host(t) -> bool:
    """A tensor the program has on the host by its own doing (made on "cpu" or with no device, moved there), not
    one whose place is unknown (made in C++: Inductor's buffers, the autograd engine's)."""
    return isinstance(t, sys.modules["torch"].Tensor) and getattr(t, _TAG, None) is False


def host_arguments(args: dict) -> tuple[list, list]:
    """(the names of a launch's tensor arguments the program has on the host, those of its "cuda" tensors), the
    first empty unless both are there: a GPU refuses such a launch (Triton: "Pointer argument (at 1) cannot be
    accessed from Triton (cpu tensor?)"), the interpreter runs it (helper-79: ``y = torch.ones(n)`` beside ``x``
    on "cuda")."""
    import torch

    if _state["mode"] is None:
        return [], []
    tensors = {n: v for n, v in args.items() if isinstance(v, torch.Tensor)}
    cuda = [n for n, v in tensors.items() if _on_cuda(v)]
    # (an empty tensor's null pointer passes a GPU's check, as pinned memory does: pin_memory() leaves no mark)
    host = [n for n, v in tensors.items() if _on_host(v) and v.numel() > 0] if cuda else []
    return host, cuda


def host_finding(host: list, cuda: list) -> dict:
    """A launch handed host tensors beside the program's "cuda" ones: an error a GPU raises at the launch."""
    what = f"{', '.join(host)} {'is a host tensor' if len(host) == 1 else 'are host tensors'}"
    where = f"{', '.join(cuda[:3])} {'is' if len(cuda) == 1 else 'are'} on \"cuda\""
    return dict(kind="kernel_error", severity="error", raised=False, file=None, line=None, pid=None, tensor=host[0],
                offsets=[], op=None, source="", message=f"{what} (made on the CPU by the program, or moved there) while {where}: "
                "a GPU refuses this launch (Triton: \"Pointer argument ... cannot be accessed from Triton (cpu "
                "tensor?)\"); the interpreter ran it")


@functools.lru_cache(maxsize=None)
def _mode_class():
    global _CPU_OF_CUDA
    import torch
    from torch.overrides import TorchFunctionMode

    tensor_to, tensor_cuda, tensor_cpu = torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu
    tensor_pin = torch.Tensor.pin_memory
    from tritondbg.program import cpu_fallbacks

    histc = (torch.histc, torch.Tensor.histc)
    matmuls = cpu_fallbacks.matmuls(torch)  # given out_dtype: CUDA-only overloads (Liger's FLCE under autocast)
    # what a CUDA tensor says of its device, asked by the program's code (``_from_program``): a library's check
    # (``assert x.is_cuda``, fla's "Only support CUDA/NPU/XPU tensors") and its GPU branch (Liger sizes a
    # backward's grid by the SM count where ``x.device.type == "cuda"``) are the GPU run's. Asked by torch's own
    # code, its ``.device`` is ``_CPU_OF_CUDA``: a tensor made on that device object (``torch.tensor(0.0,
    # device=p.device)``) is a CUDA tensor too, one made on any other cpu device (``torch.load(map_location=
    # "cpu")``) is not.
    cuda0, _CPU_OF_CUDA = torch.device("cuda", 0), torch.device("cpu")
    get_device, data = torch.Tensor.get_device, torch.Tensor.data
    queries = {torch.Tensor.is_cuda: (True, False), torch.Tensor.is_cpu: (False, True),
               torch.Tensor.device: (cuda0, _CPU_OF_CUDA), get_device: (0, -1)}  # (to the program, to torch)

    def answer(func, args):
        """``_NO`` or the answer to a device query about a tensor, or the setting of ``.data``."""
        owner = getattr(func, "__self__", None)  # a property's getset descriptor (``x.is_cuda``: its __get__)
        if isinstance(owner, _GETSET):
            if owner in queries and func.__name__ == "__get__" and _on_cuda(args[0]):
                return queries[owner][0 if _from_program(3) else 1]
            if owner is data and func.__name__ == "__set__":  # ``param.data = t`` (Module.cuda(), .cpu(), .to())
                result = func(*args)
                _tag(args[0], _on_cuda(args[1]))
                return result
        elif func is get_device and _on_cuda(args[0]):
            return queries[get_device][0 if _from_program(3) else 1]
        return _NO

    class CudaAsCpu(TorchFunctionMode):
        """Which tensors are the program's CUDA tensors is kept (``_TAG``), so that a move between the host and
        "cuda" copies, as on a GPU: ``y = x.cuda()`` returned x itself, and a test of an in-place kernel computed
        its reference from the host tensor the kernel had just changed (helper-70, lightllm's rotary). Tagged: the
        tensors made with a ``device=`` (a CUDA one, or a ``.device`` of one: cuda:0 to the program, ``_CPU_OF_CUDA``
        to torch's own code) or under
        ``set_default_device("cuda")``, moved by ``.cuda()`` / ``.to("cuda")``, and what an op makes from a tagged
        tensor. ``.cuda()`` of a tagged tensor returns it, of another a copy; ``.cpu()`` / ``.to("cpu")`` of a
        tagged one a copy."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if not torch.compiler.is_compiling():  # (dynamo traces this function: none of it there)
                result = answer(func, args)
                if result is not _NO:
                    return result
            if func is tensor_pin:
                _tag(args[0], None)  # pinned: a GPU reads it (no host_arguments finding)
                return args[0]
            if func is tensor_cuda:
                _state["moved"] += 1
                return _to_cuda(args[0])
            if func is tensor_cpu:
                return _to_host(args[0], func(*args, **kwargs))
            target = None
            if "device" in kwargs and func is not torch.device:  # torch.device(device="cuda") stays cuda, as
                target = _target(kwargs["device"])                 # torch.device("cuda") does (helper-97)
                device = _cpu(kwargs["device"])
                if device is not kwargs["device"]:
                    _state["moved"] += 1
                    kwargs = dict(kwargs, device=device)
            pinned = bool(kwargs.get("pin_memory"))
            if pinned:
                kwargs = dict(kwargs, pin_memory=False)
            if func is tensor_to:
                if len(args) > 1:
                    if isinstance(args[1], torch.Tensor):  # .to(other): other's device (and dtype)
                        target = "cuda" if _on_cuda(args[1]) and not _on_cuda(args[0]) else "same"
                    else:
                        target = _target(args[1]) or target
                        device = _cpu(args[1])
                        if device is not args[1]:
                            _state["moved"] += 1
                            args = (args[0], device, *args[2:])
                result = func(*args, **kwargs)
                if target == "cuda":
                    return _to_cuda(args[0], result)
                if target == "host":
                    return _to_host(args[0], result)
                if result is not args[0] and _on_cuda(args[0]):
                    _tag(result)
                return result
            if kwargs.get("out_dtype") is not None and func in matmuls:
                try:
                    result = func(*args, **kwargs)
                except NotImplementedError:  # no CPU kernel: float32 copies, cast (tritondbg/program/cpu_fallbacks.py)
                    result = cpu_fallbacks.out_dtype_matmul(func, args, kwargs, torch)
            elif func in histc and args and isinstance(args[0], torch.Tensor) and not args[0].is_floating_point():
                result = cpu_fallbacks.integer_histc(func, args, kwargs, torch)
            else:
                result = func(*args, **kwargs)
            if args and result is args[0]:
                return result  # in place: the tensor stays where it was
            made = not any(isinstance(a, torch.Tensor) for a in args)  # a factory (torch.ones(n), torch.tensor)
            if target in ("cuda", "same") or _any_on_cuda(args) or (made and _state.get("default_cuda")):
                _tag(result)
            elif not pinned and (target == "host" or (made and isinstance(result, torch.Tensor) and _from_program())
                                 or any(_on_host(a) for a in args)):
                _tag(result, False)  # on the host by the program's doing (``host_arguments``)
            return result

    def _to_cuda(t, result=None):
        """``t`` moved to "cuda": itself when it is there (or the op's ``result`` of it), else a copy."""
        result = t if result is None else result
        if result is t and not _on_cuda(t):
            result = t.clone()
        _tag(result)
        return result

    def _to_host(t, result):
        """``t`` moved to the host: a copy of a tagged tensor (the op's ``result`` when it made a new one)."""
        if result is t and _on_cuda(t):
            result = t.clone()
        _tag(result, False)
        return result

    return CudaAsCpu


def install() -> bool:
    """Push the mode (idempotent); False when torch has a CUDA device (nothing to stand in for)."""
    import torch

    if _state["mode"] is not None:
        return True
    if torch.cuda.is_available():
        return False
    mode = _mode_class()()
    mode.__enter__()  # for the program's life: popped by nobody (the program's own modes stack above it)
    _state["mode"] = mode
    original = torch.set_default_device

    def set_default_device(device):
        moved = _cpu(device)
        if moved is not device:
            _state["moved"] += 1
        _state["default_cuda"] = moved is not device  # factories without a device= then make CUDA tensors
        return original(moved)

    torch.set_default_device = set_default_device
    torch.Generator = _generator_class(torch)
    # ``x.record_stream(torch.cuda.current_stream())``: the stand-in's stream (tritondbg/cuda_objects.py), which
    # torch's argument parser refuses before any mode sees the call; one stream here, nothing to record
    torch.Tensor.record_stream = lambda self, stream: None
    from tritondbg.program import cpu_fallbacks  # torch.load onto "cuda", checkpoints without the tag

    cpu_fallbacks.install(torch, _tag, _cpu, _TAG)
    for cls in (torch.nn.Parameter, getattr(torch.nn, "Buffer", None)):  # made of a CUDA tensor by _make_subclass,
        if cls is not None:                                                # which no torch function sees
            _tag_what_new_makes(cls)
    if not hasattr(torch._C, "_cuda_getCurrentRawStream"):  # what a launch asks for the stream it goes on
        # (Inductor's generated code, tritonbench's welford: ImportError on a CPU build); none here: 0
        torch._C._cuda_getCurrentRawStream = lambda device=None: 0
    guards = getattr(getattr(torch._C, "_dynamo", None), "guards", None)  # Inductor's generated code allocates
    if guards is not None:  # with it (helper-141: TritonBench's welford, "compiled without support for the device")
        guards._empty_strided_cuda = lambda size, stride, dtype: torch.empty_strided(size, stride, dtype=dtype,
                                                                                     device="cuda")
    from tritondbg.program import reentry  # a custom Function's backward, a custom op's kernel: no mode there

    reentry.add(mode, _mode_class(), before=_tag_gradients)
    reentry.cuda_kernels_on_cpu()
    _threads_enter(type(mode))
    from tritondbg.program import cuda_asks

    cuda_asks.record(torch)
    from tritondbg.program import cuda_version

    cuda_version.install(torch)  # a library's check of torch.version.cuda (None) is told in the run's note
    from tritondbg.program import cuda_autocast  # autocast("cuda") with CUDA's op lists

    cuda_autocast.install(torch, _cpu, _state)
    _own_warnings_point_at_the_caller(type(mode).__torch_function__.__code__)
    return True


def _threads_enter(cls) -> None:
    """A function mode holds in the thread that entered it only: each thread started from now on enters one of
    ``cls`` (a data prefetcher's ``batch.cuda()``, a thread pool's ``torch.ones(n, device="cuda")`` died with "Torch
    not compiled with CUDA enabled")."""
    import threading

    inner = getattr(threading.Thread, "_bootstrap_inner", None)
    if inner is None or getattr(inner, "_tdbg", False):
        return

    def _bootstrap_inner(self):
        mode = cls()
        mode.__enter__()
        try:
            return inner(self)
        finally:  # popped before the thread ends: a mode left on a dead thread's stack aborted the process at exit
            mode.__exit__(None, None, None)

    _bootstrap_inner._tdbg = True
    threading.Thread._bootstrap_inner = _bootstrap_inner


def _generator_class(torch):
    """``torch.Generator(device="cuda")`` (a test's seeded inputs; "Cannot get CUDA generator without ATen_cuda
    library" on a CPU build): a CPU generator. Every torch generator is still an instance of it."""
    base = torch._C.Generator

    class GeneratorMeta(type(base)):
        def __instancecheck__(cls, obj):
            return isinstance(obj, base)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, base)

    class Generator(base, metaclass=GeneratorMeta):
        def __new__(cls, device="cpu"):
            moved = _cpu(device)
            if moved is not device:
                _state["moved"] += 1
            return base(moved)

    return Generator


def _tag_what_new_makes(cls) -> None:
    """``cls(t)`` of a CUDA tensor ``t`` is one too (``nn.Parameter``: ``nn.Linear(..., device="cuda").weight``)."""
    new = cls.__new__

    def __new__(cls, data=None, *args, **kwargs):
        result = new(cls, data, *args, **kwargs)
        if data is not None and _on_cuda(data):
            _tag(result)
        return result

    cls.__new__ = __new__


def _tag_gradients(node, args) -> None:
    """The engine's gradients (made in C++, untagged) handed to a custom Function's backward, of a program on
    "cuda", are "cuda" tensors."""
    if _state["mode"] is not None and _state["moved"]:
        _tag(list(args))


@contextlib.contextmanager
def serving(on: bool = True):
    """Within the block, when ``on`` and torch has no CUDA device: the mode alone (no patch of torch stays after
    it). The kernel form under the interpreter (a scenario file, a reproducer's kernel module and the library code
    they run) gets a program's "cuda" tensors on the CPU as ``interpret -- CMD`` does: gemlite makes CUDA tensors
    when its module is imported, and its reproducers could not be loaded where they were captured."""
    import torch

    if not on or _state["mode"] is not None or torch.cuda.is_available():
        yield
        return
    with _mode_class()():
        yield


def _own_warnings_point_at_the_caller(code) -> None:
    """torch's warnings name the innermost Python frame, which under the mode is its ``__torch_function__``
    (``float(loss)`` on a tensor that requires grad: "cpu_device.py:66: UserWarning: Converting a tensor..."):
    such a warning names the program's line instead, printed or recorded (pytest's summary, catch_warnings).
    Python's warnings machinery builds every warning through ``warnings.WarningMessage``, looked up each time.
    Other tritondbg modes stacked above this one add their handlers (``warnings_past``)."""
    warnings_past(code)
    if _state.get("warnings_patched"):
        return
    _state["warnings_patched"] = True
    base = warnings.WarningMessage
    codes = _state["handler_codes"]

    class WarningMessage(base):
        def __init__(self, message, category, filename, lineno, file=None, line=None, source=None):
            if filename in _state["handler_files"]:
                frame = sys._getframe(1)
                while frame is not None and frame.f_code not in codes:
                    frame = frame.f_back
                while frame is not None and frame.f_back is not None and frame.f_back.f_code in codes:
                    frame = frame.f_back  # (a mode above this one called it: past every handler)
                if frame is not None and frame.f_back is not None:
                    filename, lineno, line = frame.f_back.f_code.co_filename, frame.f_back.f_lineno, None
            super().__init__(message, category, filename, lineno, file, line, source)

    warnings.WarningMessage = WarningMessage


def warnings_past(code) -> None:
    """A torch function mode's handler whose frames a warning skips to name the program's line."""
    _state.setdefault("handler_codes", set()).add(code)
    _state.setdefault("handler_files", set()).add(code.co_filename)


def serving_cuda() -> bool:
    """Whether the program's "cuda" tensors are served on the CPU in this process (``install`` ran)."""
    return _state["mode"] is not None


def moved() -> int:
    """How many CUDA requests were answered on the CPU so far."""
    return _state["moved"]


def note(summaries) -> str | None:
    """The run's line on what was moved, over the program's processes' summaries (``cuda_on_cpu`` counts)."""
    n = sum(s.get("cuda_on_cpu", 0) for s in summaries)
    if not n:
        return None
    off = sum(s.get("amp_off", 0) for s in summaries)
    others = sorted({i for s in summaries for i in s.get("cuda_ordinals", ())})
    return (f"{n} request(s) for a CUDA tensor or device were served on the CPU (no GPU here: the interpreter "
            f"runs kernels on CPU tensors)" + (f"; {off} torch.autocast('cuda') block(s) with a dtype other than "
                                               "float16 / bfloat16 ran without autocast (the CPU's takes only those)"
                                               if off else "")
            + (f"; they named {', '.join(f'cuda:{i}' for i in others)} besides cuda:0 (one device here: the "
               "tensors of every GPU are on the CPU together, and which GPU a launch would run on is not checked)"
               if others else ""))
