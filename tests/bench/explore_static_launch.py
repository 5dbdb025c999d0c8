"""Issue 18, host cost: torch's C++ launcher for Triton kernels (Inductor's ``StaticCudaLauncher``) beside the C
launch entry of Triton 3.6 that the bundled kernels' cached launchers call, on the same compiled kernels.

    python tests/bench/explore_static_launch.py [--calls 20000]

The host-cost target (a steady-state call costs no more host time than torch's op) is missed on softmax and add:
Triton's C entry alone took 3.96 us a call on the H200 VM in session 8 and ``torch.empty_like`` 1.34 us, more
than torch's whole ``x + x`` (4.81 us). This asks whether torch's launcher (one ``cuLaunchKernel`` behind a
type-string argument parser) is cheaper. For each kernel (add's, softmax's, one empty kernel): the output of one
launch through each path is compared (bit-equal), then host time per call is printed for: Triton's C entry with
the Launcher's arguments, ``_StaticCudaLauncher._launch_kernel`` with the same, the whole bundled call, and
torch's op. Each line: min over 7 rounds of the mean host time per call (no sync inside a round). Needs a CUDA
GPU and a torch with ``torch._C._StaticCudaLauncher`` (2.8 and newer builds with CUDA).
"""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from host_breakdown import cuda_args, per_call  # noqa: E402


@triton.jit
def empty_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pass


def compiled_of(launcher):
    """The CompiledKernel behind a cached ``_launch.Launcher`` (its ``CompiledKernel[grid]`` runner's closure)."""
    for cell in launcher.run.__closure__ or ():
        v = cell.cell_contents
        if hasattr(v, "asm") and hasattr(v, "metadata"):
            return v
    raise RuntimeError("no CompiledKernel in the launcher's runner")


def static_launch(compiled, folder: str):
    """(launch, arg_tys): torch's launcher loaded with ``compiled``'s cubin; ``launch(grid, stream, args)``."""
    import torch
    from torch._inductor.runtime.static_triton_launcher import StaticallyLaunchedCudaKernel

    path = os.path.join(folder, f"{compiled.metadata.name}-{compiled.hash[:12]}.cubin")
    with open(path, "wb") as f:
        f.write(compiled.asm["cubin"])
    compiled._cubin_path = path  # what Inductor sets before it builds one
    k = StaticallyLaunchedCudaKernel(compiled)
    k.load_kernel(torch.cuda.current_device())
    impl, fn, warps, shared, tys = k.C_impl._launch_kernel, k.function, k.num_warps, k.shared, k.arg_tys
    extra = (None,) * (bool(k.has_global_scratch) + bool(k.has_profile_scratch))
    tys += "O" * len(extra)
    keep = runtime_args(compiled)

    def launch(grid, stream, args):
        """``args``: every kernel argument in order, as Triton's C entry takes them (constexprs included)."""
        impl(fn, grid[0], grid[1], grid[2], warps, shared, tys, (*(args[i] for i in keep), *extra), stream)
    return launch, tys


def runtime_args(compiled) -> list[int]:
    """Indices of the arguments the cubin takes (constexprs and specialised constants left out), as
    ``StaticallyLaunchedTritonKernel.arg_ty_from_signature`` counts them."""
    src = compiled.src
    names = list(src.fn.arg_names)

    def index(key):
        return names.index(key) if isinstance(key, str) else key[0] if isinstance(key, tuple) else key
    signature = {index(k): v for k, v in src.signature.items()}
    constants = {index(k) for k in getattr(src, "constants", {})}
    return [i for i in sorted(signature) if signature[i] != "constexpr" and i not in constants]


def _rows(name, launcher, launch, tensors, stream, whole, theirs):
    """The timed lines of one kernel (a function of its own: each lambda binds this kernel's values)."""
    g, head, fn, tail = launcher.grid, launcher.head, launcher.function, launcher.tail
    p = tuple(t.data_ptr() for t in tensors)
    return [(f"{name}: Triton C entry", lambda: launcher.direct(g[0], g[1], g[2], stream, fn, *head, *p, *tail)),
            (f"{name}: torch StaticCudaLauncher", lambda: launch(g, stream, (*p, *tail))),
            (f"{name}: cached Launcher(*tensors)", lambda: launcher(*tensors)),
            (f"{name}: bundled call (ours, whole)", whole),
            (f"{name}: torch's op", theirs)]


def main(argv=None) -> int:
    args = cuda_args(argv, __doc__.splitlines()[0])
    if args is None:
        return 2
    import torch

    if not hasattr(torch._C, "_StaticCudaLauncher"):
        print(f"torch {torch.__version__} has no torch._C._StaticCudaLauncher", file=sys.stderr)
        return 2
    from tritondbg.kernels import add as ADD
    from tritondbg.kernels import softmax as SM

    x = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    SM.softmax(x)
    ADD.add(x, x)
    sm = SM._SINGLE.plans[(x.shape, x.stride(), x.dtype, x.device, SM.MAX_FUSED_BLOCK_N, None)]
    ad = next(iter(ADD._LAUNCHES.plans.values()))
    y0 = torch.empty_like(x)
    empty_kernel[(1,)](x, y0, 1, BLOCK=16)
    stream = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())
    folder = tempfile.mkdtemp(prefix="static-launch-")
    print(f"Triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}; "
          f"direct entries: softmax {sm.direct is not None}, add {ad.direct is not None}")
    rows = []
    for name, launcher, tensors, whole, theirs in (
            ("softmax 512x512 fp16", sm, lambda y: (x, y), lambda: SM.softmax(x), lambda: torch.softmax(x, -1)),
            ("add 512x512 fp16", ad, lambda y: (x, x, y), lambda: ADD.add(x, x), lambda: x + x)):
        launch, tys = static_launch(compiled_of(launcher), folder)
        y1, y2 = torch.empty_like(x), torch.empty_like(x)
        launcher(*tensors(y1))
        launch(launcher.grid, stream, (*(t.data_ptr() for t in tensors(y2)), *launcher.tail))
        torch.cuda.synchronize()
        print(f"{name}: arg types {tys!r}, same bits through both launchers: {torch.equal(y1, y2)}")
        rows += _rows(name, launcher, launch, tensors(y1), stream, whole, theirs)
    rows.append(("torch.empty_like(x)", lambda: torch.empty_like(x)))
    for name, fn in rows:
        print(f"{per_call(fn, args.calls):8.2f} us  {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
