"""Shims that let real kernels run under TRITON_INTERPRET=1 the way they run on a GPU.

Installed by the runner once interpreter mode is on; each is idempotent and reversible (``uninstall``).
All of them wrap names that exist in Triton 3.6 and 3.9 (``InterpreterBuilder.create_dot/create_print/
create_assert/set_grid_dim/binary_op``, ``FunctionRewriter.ast_transformer``, module functions ``_convert_float``,
``_implicit_cvt``, ``_patch_lang``, ``_patch_lang_tensor``); a name that is missing in some version leaves that one
shim out. Two live in their
own modules: bf16/fp8 arithmetic computed in fp32 and rounded back (lowp.py) and the memory guard that
keeps every load/store/atomic lane inside the launch's tensors (guard.py); straight-line inline PTX is
computed in inline_asm.py; a tensor descriptor TMA cannot take is refused with its numbers (descriptors.py);
``tl.dot`` / ``tl.dot_scaled`` compute what the tensor cores do (dots.py: bf16 upcast, TF32 truncation, block-scaled
dots on interpreters without them); ``dtype.value`` and tensor-like (``data_ptr()`` + ``dtype``) launch arguments,
which compiled Triton takes, are in compat.py.
"""
from __future__ import annotations

import sys
from typing import Any

from tritondbg.errors import KernelError
from tritondbg.interp import assume, compat, dots

_saved: dict[str, object] = {}

# device_print / static_print output: where it goes (None: stdout) and what was printed (for the record)
_prints: dict[str, Any] = {"stream": None, "records": [], "limit": 1000, "epoch": 0, "static_seen": set()}


class DeviceAssertError(KernelError, AssertionError):
    """A ``tl.device_assert`` that failed in some lanes of a program."""

    def __init__(self, message: str, *, file: str, line: int, pid, lanes: int, total: int, first):
        self.file, self.line, self.pid = file, line, pid
        self.lanes, self.total, self.first = lanes, total, first
        self.assert_message = message
        where = f"{file}:{line}" if line else "?"
        super().__init__(f"device_assert failed at {where} in pid {tuple(pid)}: {message} "
                         f"({lanes} of {total} lanes; first at lane {first})")


def set_print_stream(stream) -> None:
    """Send kernel prints to ``stream`` (None: stdout at print time; "stderr": stderr at print time, so that a
    later run in the same process does not print into a stream since closed: CI, a kernel's tl.device_print in
    one test after another test's in-process `interpret --json` had set pytest's capture of its stderr)."""
    _prints["stream"] = stream


def take_prints() -> list[dict]:
    """The prints recorded since the last call (file, line, pid, text)."""
    out, _prints["records"] = _prints["records"], []
    return out


def _emit(record: dict) -> None:
    stream = _prints["stream"]
    stream = sys.stderr if stream == "stderr" else stream or sys.stdout
    print(record["text"], file=stream, flush=True)
    if len(_prints["records"]) < _prints["limit"]:
        _prints["records"].append(record)


def _decode(handle):
    """A TensorHandle's values for printing: bf16 (uint16 storage) and fp8 (uint8) shown as floats."""
    import numpy as np
    import triton.language as tl

    data, ty = handle.data, getattr(handle.dtype, "scalar", handle.dtype)
    if ty == tl.bfloat16:
        return (data.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if getattr(ty, "primitive_bitwidth", 0) == 8 and ty.is_floating():
        from triton.runtime import interpreter as I

        return I._convert_float(data, ty, tl.float32, None).view(np.float32)
    return data


def _bf16_round():
    """fp32 -> bf16 casts: the interpreter truncates (up to 1 ulp low); the GPU rounds to nearest even.
    Round the same way here, so CPU results match the GPU bit for bit on stores of bf16 outputs. A NaN keeps
    the top 6 bits of its payload (quiet bit set), so the sanitizers' poison marks survive the cast."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    from tritondbg.interp import lowp

    original = I._convert_float

    def convert(data, input_dtype, output_dtype, rounding_mode):
        if input_dtype == tl.float32 and output_dtype == tl.bfloat16 and rounding_mode is None:
            return lowp.encode_bf16(np.asarray(data).view(np.float32) if data.dtype != np.float32 else data)
        return original(data, input_dtype, output_dtype, rounding_mode)

    I._convert_float = convert
    return lambda: setattr(I, "_convert_float", original)


def _float_args():
    """Scalar float arguments become fp32 scalar tensors, as on the GPU (the interpreter leaves them Python
    floats, so ``eps.to(tl.float32)`` raises AttributeError; Liger-Kernel's rms_norm does exactly that)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    original = I._implicit_cvt

    def implicit_cvt(arg):
        if isinstance(arg, float):
            return tl.tensor(I.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    I._implicit_cvt = implicit_cvt
    return lambda: setattr(I, "_implicit_cvt", original)


def _tensor_index():
    """``range(tensor)`` in a kernel: Triton 3.6 converts with ``int(handle.data)``, which numpy >= 2.4
    refuses for a 1-element 1-D array; convert its single element instead (3.9 already does)."""
    import numpy as np
    from triton.runtime import interpreter as I

    original = I._patch_lang_tensor

    from tritondbg.interp.shadow_values import check_int

    def index(self):
        check_int(self.handle)  # (a bound computed from undefined lanes: told, and the program stops)
        return int(np.asarray(self.handle.data).reshape(-1)[0])

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", index)

    I._patch_lang_tensor = patch_lang_tensor
    return lambda: setattr(I, "_patch_lang_tensor", original)


def _is_range(node) -> bool:
    """``range(...)``, ``tl.range(...)`` (any ``X.range``) in kernel source, not ``tl.static_range``."""
    import ast

    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "range") or (isinstance(func, ast.Attribute)
                                                                    and func.attr == "range")


def _loop_vars():
    """The induction variable of a ``range`` / ``tl.range`` loop: a tensor in compiled code (``i.to(tl.int64)``,
    flash-linear-attention's chunk kernels do it), a Python int in the interpreter (AttributeError: 'int' object has
    no attribute 'to'). The interpreter already rewrites each kernel's assignments into tensors; this adds
    ``i = to_tensor(i)`` at the top of such a loop's body, placed on the for line (stepping sees no new line).
    ``tl.static_range`` loops keep their ints, as compiled code does (constexpr)."""
    import ast

    from triton.runtime import interpreter as I

    rewriter = I.FunctionRewriter
    original = rewriter.ast_transformer

    from tritondbg.interp import boolops

    class LoopVarTransformer(type(original)):
        visit_BoolOp = boolops.visit_BoolOp  # and / or on tensors element-wise, as compiled (boolops.py)

        def visit_For(self, node):
            node = self.generic_visit(node)
            if isinstance(node.target, ast.Name) and _is_range(node.iter):
                name = node.target.id
                wrap = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Call(
                    func=ast.Attribute(value=ast.Name(id="interpreter_semantic", ctx=ast.Load()), attr="to_tensor",
                                       ctx=ast.Load()),
                    args=[ast.Name(id=name, ctx=ast.Load()), ast.Constant(value=False)], keywords=[]))
                for part in ast.walk(wrap):  # all on the for line: no line event of its own (stepping)
                    part.lineno = part.end_lineno = node.lineno
                    part.col_offset, part.end_col_offset = node.col_offset, node.col_offset + 3
                node.body.insert(0, wrap)
            return node

    def swap(transformer):
        rewriter.ast_transformer = transformer
        I.InterpretedFunction.rewritten_fn.clear()  # kernels rewritten before: rewrite them again

    swap(LoopVarTransformer())
    undo_name = boolops.install()

    def undo():
        swap(original)
        undo_name()
    return undo


class _GlobalsAttrs:
    """A module's globals dict seen as attributes, so ``_LangPatchScope.set_attr`` can patch (and restore) a name."""

    def __init__(self, globals_: dict):
        object.__setattr__(self, "_globals", globals_)

    def __getattr__(self, name):
        try:
            return self._globals[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._globals[name] = value

    def __delattr__(self, name):
        del self._globals[name]


def _builtin_aliases(fn, scope) -> None:
    """Names in a kernel's module bound to a triton.language builtin itself (``gather = tl.gather``, ``from
    triton.language import gather``: flash-linear-attention's ``fla.ops.utils.op``): the interpreter patches the
    modules' attributes, so such a name still calls the compiler's builtin, which fails ("Did you forget to add
    @triton.jit ?"). Each is bound, for the launch, to what the interpreter put in its module's place."""
    import triton.language as tl

    changes = list(getattr(scope, "_changes", ()))
    patched = {id(original): (obj, name) for obj, name, original in changes if tl.core.is_builtin(original)}
    _rebind_globals(fn, scope, {key: getattr(*hit) for key, hit in patched.items()})


def _rebind_globals(fn, scope, replacements: dict) -> None:
    """For the launch: each name of ``fn``'s module bound to an object whose id is a key of ``replacements``
    is bound to its replacement instead (the scope restores it)."""
    view = None
    for name, value in list(fn.__globals__.items()):
        new = replacements.get(id(value))
        if new is None or new is value:
            continue
        view = view or _GlobalsAttrs(fn.__globals__)
        scope.set_attr(view, name, new)


def _gdc_noop(*args, **kwargs):
    """Programmatic dependent launch under the interpreter (``gdc_wait`` / ``gdc_launch_dependents``): nothing to
    wait for or signal, since launches run one after another."""
    return None


def _globaltimer(*args, **kwargs):
    """``tl.extra.cuda.globaltimer()`` under the interpreter: its own PTX, through the inline-asm shim."""
    import triton.language as tl

    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


def _smid(*args, **kwargs):
    """``tl.extra.cuda.smid()`` under the interpreter (0: one program at a time)."""
    import triton.language as tl

    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)


def _launch_num_warps() -> int:
    """The running launch's ``num_warps`` (4, Triton's default, unless the launch or its config gave one): read
    from the interpreter's ``run(*args, grid, warmup, **kwargs)`` frame below the kernel."""
    f = sys._getframe(1)
    while f is not None:
        loc = f.f_locals
        if f.f_code.co_name == "run" and "warmup" in loc and isinstance(loc.get("kwargs"), dict):
            return int(loc["kwargs"].get("num_warps") or 4)
        f = f.f_back
    return 4


def _num_warps(*args, **kwargs):
    """``tl.extra.cuda.num_warps()``: the launch's num_warps, a constexpr as compiled (helper-62: triton_kernels'
    swiglu sized its blocks with ``num_threads()``: "Did you forget to add @triton.jit ?")."""
    import triton.language as tl

    return tl.constexpr(_launch_num_warps())


def _num_threads(*args, **kwargs):
    """``tl.extra.cuda.num_threads()``: num_warps x 32."""
    import triton.language as tl

    return tl.constexpr(_launch_num_warps() * 32)


_CUDA_EXTRAS = {"gdc": {"gdc_wait": _gdc_noop, "gdc_launch_dependents": _gdc_noop},
                "utils": {"globaltimer": _globaltimer, "smid": _smid, "num_warps": _num_warps,
                          "num_threads": _num_threads}}


def _cuda_extras(fn, scope) -> None:
    """``tl.extra.cuda``'s functions that call the compiler's semantic, which the interpreter has not ("Did you
    forget to add @triton.jit ?"): programmatic dependent launch's ``gdc_wait()`` / ``gdc_launch_dependents()``
    (Triton's tutorial 11) are no-ops, launches running one after another; ``globaltimer()`` and ``smid()`` read
    their special registers through the inline-asm shim. For the launch, in their module, its package and the
    kernel's own names."""
    try:
        import importlib

        import triton.language.extra.cuda as cuda
    except ImportError:  # a Triton without them: nothing to stand in for
        return
    originals = {}
    for module_name, stand_ins in _CUDA_EXTRAS.items():
        try:
            mod = importlib.import_module(f"triton.language.extra.cuda.{module_name}")
        except ImportError:
            continue
        for name, stand_in in stand_ins.items():
            original = getattr(mod, name, None)
            if original is None:
                continue
            originals[id(original)] = stand_in
            for where in (mod, cuda):
                if getattr(where, name, None) is original:
                    scope.set_attr(where, name, stand_in)
    _rebind_globals(fn, scope, originals)


def _lang_extras():
    """Per launch (``_patch_lang``): libdevice stubs -> numpy, builtins bound to names of the kernel's own module
    (``_builtin_aliases``), ``tl.extra.cuda``'s functions (``_cuda_extras``), and ``tl.static_print`` printed once
    per line and launch (on the GPU it prints once, at compile time) with the kernel line."""
    import triton.language as tl
    from triton.runtime import interpreter as I

    from tritondbg.interp import frames, libdevice

    original = I._patch_lang

    def static_print(*args, **kwargs):
        file, line, _ = frames.site(sys._getframe(1))
        key = (_prints["epoch"], file, line)
        if key in _prints["static_seen"]:
            return
        _prints["static_seen"].add(key)
        text = " ".join(str(getattr(a, "value", a)) for a in args)
        _emit({"kind": "static_print", "file": file, "line": line, "pid": None,
               "text": f"[{frames.short_path(file)}:{line} static_print] {text}"})

    patched: dict = {"globals": None}  # the running launch's patched modules (ids of their globals)

    def patch_lang(fn):
        # A device function call (tl.sum, tl.sigmoid, the kernel's own helpers) patches the language again, in
        # every program: ~10 ms of inspect.getmembers each, half an interpreter launch's time on small kernels.
        # What it patches is global (the tl modules, the function's module) and stays patched until the launch
        # restores it, so one patch per module and launch does it.
        key = id(getattr(fn, "__globals__", None))
        nested = isinstance(sys._getframe(1).f_locals.get("self"), I.InterpretedFunction)
        if nested and patched["globals"] is not None and key in patched["globals"]:
            return I._LangPatchScope()
        scope = original(fn)
        try:
            libdevice.patch(scope, fn)
            _builtin_aliases(fn, scope)
            _cuda_extras(fn, scope)
            for mod in (tl, tl.core):
                if hasattr(mod, "static_print"):
                    scope.set_attr(mod, "static_print", static_print)
            if not nested:  # a launch (GridExecutor): what device functions patch lasts until its restore
                patched["globals"] = {key}
                restore = scope.restore

                def restore_and_forget():
                    patched["globals"] = None
                    restore()
                scope.restore = restore_and_forget
            elif patched["globals"] is not None:
                patched["globals"].add(key)
        except Exception:  # a Triton whose scope differs: keep the plain interpreter behaviour
            pass
        return scope

    I._patch_lang = patch_lang
    return lambda: setattr(I, "_patch_lang", original)


def _print_assert():
    """tl.device_print and tl.device_assert attributed to the kernel line and the program id."""
    import numpy as np
    from triton.runtime import interpreter as I

    from tritondbg.interp import frames

    B = I.InterpreterBuilder
    orig_print, orig_assert, orig_dim = B.create_print, B.create_assert, B.set_grid_dim

    def create_print(self, prefix, hex, values, *args, **kwargs):
        file, line, _ = frames.site(sys._getframe(1))
        pid = tuple(int(i) for i in self.grid_idx)
        parts = []
        for v in values:
            data = _decode(v)
            if hex:
                width = data.dtype.itemsize * 2
                parts.append(np.array2string(np.asarray(data).view(f"u{data.dtype.itemsize}"),
                                             formatter={"all": lambda x: f"0x{int(x):0{width}x}"}))
            else:
                parts.append(np.array2string(np.asarray(data).reshape(-1) if data.size == 1 else data,
                                             threshold=1 << 30, max_line_width=1 << 30))
        text = f"[{frames.short_path(file)}:{line} pid {pid}] {prefix.strip()} {' '.join(parts)}".rstrip()
        _emit({"kind": "device_print", "file": file, "line": line, "pid": list(pid), "text": text})

    def create_assert(self, condition, message, *args, **kwargs):
        ok = np.asarray(condition.data if hasattr(condition, "data") else condition).astype(bool)
        if ok.all():
            return
        file, line, _ = frames.site(sys._getframe(1))
        flat = ok.reshape(-1)
        first = int(np.argmin(flat))
        first_idx = tuple(int(i) for i in np.unravel_index(first, ok.shape)) if ok.ndim > 1 else first
        raise DeviceAssertError(str(message), file=file, line=line, pid=tuple(int(i) for i in self.grid_idx),
                                lanes=int((~flat).sum()), total=int(flat.size), first=first_idx)

    def set_grid_dim(self, *dims):
        orig_dim(self, *dims)
        _prints["epoch"] += 1  # a new launch: static_print prints again
        _prints["static_seen"].clear()

    B.create_print, B.create_assert, B.set_grid_dim = create_print, create_assert, set_grid_dim

    # tl.device_assert is a no-op unless the options say debug (TRITON_DEBUG=1 on the GPU); the interpreter's
    # options are frozen with debug=False, so asserts never fired. A debugger checks them: debug is switched
    # on for the assert alone (switching it on globally would also add Triton's integer-overflow checks).
    # Patched on the class: Triton 3.6 makes a new TritonSemantic for every patched builtin of every launch
    # (3.9 shares one); only semantics over the interpreter's builder are affected.
    import dataclasses

    sem_cls = type(I.interpreter_semantic)
    orig_sem_assert = sem_cls.__dict__["device_assert"]

    def device_assert(self, cond, msg, mask=None):
        if not isinstance(self.builder, B):
            return orig_sem_assert(self, cond, msg, mask)
        saved = self.builder.options
        self.builder.options = dataclasses.replace(saved, debug=True)
        try:
            return orig_sem_assert(self, cond, msg, mask)
        finally:
            self.builder.options = saved

    sem_cls.device_assert = device_assert
    # ... and Triton's integer-overflow checks go through device_assert too: with debug on for every assert, an
    # int32 multiply that wraps on purpose (a hash; an index times a stride over a masked lane) failed the kernel,
    # which the GPU (no TRITON_DEBUG) runs. They stay off, as the comment above means.
    had_overflow = "binary_op_sanitize_overflow_impl" in sem_cls.__dict__
    orig_overflow = getattr(sem_cls, "binary_op_sanitize_overflow_impl", None)

    def binary_op_sanitize_overflow_impl(self, lhs, rhs, binary_op):
        if isinstance(self.builder, B):
            return None
        return orig_overflow(self, lhs, rhs, binary_op)

    if orig_overflow is not None:
        sem_cls.binary_op_sanitize_overflow_impl = binary_op_sanitize_overflow_impl

    def undo():
        B.create_print, B.create_assert, B.set_grid_dim = orig_print, orig_assert, orig_dim
        sem_cls.device_assert = orig_sem_assert
        if orig_overflow is not None:
            if had_overflow:
                sem_cls.binary_op_sanitize_overflow_impl = orig_overflow
            else:
                del sem_cls.binary_op_sanitize_overflow_impl

    return undo


def _comparisons_int1():
    """A comparison's result is int1 in compiled code; the interpreter tags it with its operands' type (the bool data
    under an int32 label), and a splat of a scalar comparison then makes int32 data: ``mask & (i < T)`` with a scalar
    right side (flash-linear-attention's HGRN) became an int32 mask, which Triton 3.9's load refuses ("mask has
    unsupported dtype"; 3.6 took it). The result of every comparison is tagged int1, as on the GPU."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    comparisons = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)
    builder = I.InterpreterBuilder
    original = builder.binary_op

    def binary_op(self, lhs, rhs, op):
        out = original(self, lhs, rhs, op)
        if op in comparisons and out.data.dtype == np.bool_:
            out.dtype = tl.int1
        return out

    builder.binary_op = binary_op
    return lambda: setattr(builder, "binary_op", original)


def _lowp_arith():
    """bf16/fp8 elementwise ops, reductions, scans, casts and atomics in fp32, rounded back (lowp.py)."""
    from tritondbg.interp import lowp

    return lowp.install()


def _memory_guard():
    """No lane of a load/store/atomic touches memory outside the launch's tensors (guard.py)."""
    from tritondbg.interp import guard

    return guard.install()


def _wrap_triton():
    """``torch.library.wrap_triton`` before torch 2.13 refused the interpreter's kernels ("wrap_triton only works on
    functions annotated with triton.jit"): a ``triton_op`` library (torchao) could not launch under the interpreter.
    Torch 2.13 hands them back as they are; so does this, for older torch. Returns the undo."""
    import torch.library
    import torch._library.triton as lib
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpretedFunction

    original = lib.wrap_triton

    def wrap_triton(triton_kernel):
        inner = triton_kernel.fn if isinstance(triton_kernel, Autotuner) else triton_kernel
        if isinstance(inner, InterpretedFunction):
            return triton_kernel   # launched eagerly, as torch 2.13 does
        return original(triton_kernel)

    wrap_triton.__wrapped__ = original
    same = getattr(torch.library, "wrap_triton", None) is original
    lib.wrap_triton = wrap_triton
    if same:
        torch.library.wrap_triton = wrap_triton

    def undo():
        lib.wrap_triton = original
        if same:
            torch.library.wrap_triton = original
    return undo


def _descriptors():
    """Device-side tensor descriptors checked with their numbers in the message (interp/descriptors.py)."""
    from . import descriptors

    return descriptors.install()


def _reductions():
    """tl.reduce / tl.associative_scan with the kernel's own combine function, on blocks (interp/reductions.py)."""
    from . import reductions

    return reductions.install()


def _globals_check():
    """A jit function that reads a global the GPU compiler refuses (not a tl.constexpr) fails under the interpreter
    too, at that line (interp/globals_check.py)."""
    from . import globals_check

    return globals_check.install()


def _inline_asm():
    """Straight-line PTX of ``tl.inline_asm_elementwise`` computed with numpy (interp/inline_asm.py, ptx.py)."""
    from . import inline_asm

    return inline_asm.install()


# the guard last: it wraps the memory ops outermost, so no other shim's memory access (lowp's bf16 atomics)
# gets around it
_SHIMS = {"inline_asm": _inline_asm, "descriptors": _descriptors, "bf16_dot": dots.bf16_dot, "tf32_dot": dots.tf32_dot,
          "min_dot_size": dots.min_dot_size, "reductions": _reductions,
          "dot_scaled": dots.dot_scaled,
          "bf16_round": _bf16_round,
          "comparisons_int1": _comparisons_int1, "lowp_arith": _lowp_arith, "float_args": _float_args,
          "tensor_index": _tensor_index, "loop_vars": _loop_vars, "lang_extras": _lang_extras,
          "print_assert": _print_assert, "assume": assume.install, "wrap_triton": _wrap_triton,
          "dtype_value": compat.dtype_value,
          "tensor_like_args": compat.tensor_like_args, "list_grids": compat.list_grids, "globals_check": _globals_check,
          "memory_guard": _memory_guard, "quiet_all_nan": compat.quiet_all_nan,
          "nan_number_ops": compat.nan_number_ops, "constexpr_operands": compat.constexpr_operands}


def install() -> None:
    """Install every shim (no-op for those already installed; one that does not fit this Triton is skipped)."""
    for name, make in _SHIMS.items():
        if name not in _saved:
            try:
                _saved[name] = make()
            except (AttributeError, ImportError, KeyError):  # what it wraps is not in this Triton / torch
                continue


def installed() -> list[str]:
    return list(_saved)


def uninstall() -> None:
    for name in reversed(list(_saved)):
        _saved.pop(name)()
