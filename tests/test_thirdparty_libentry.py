"""`tritondbg ir` on a kernel behind a library cache of compiled kernels (FlagGems' ``libentry`` pattern).

FlagGems wraps every kernel in ``LibEntry``: the first call of a signature goes through ``JITFunction.run`` and
keeps the ``CompiledKernel`` it returns in a dict; later calls launch it directly, ``kernel[grid](*args)``.
Under ``tritondbg ir`` that direct launch asked the stub driver for ``launcher_cls`` ("needs a GPU") when the
wrapper called the op twice, and on the second capture of one process (``--all-configs``, ``--diff``), whose
compile the cache served from the first. The cache's pattern is vendored below (no FlagGems needed).
"""
import json
import textwrap

from conftest import run_cli
from ir_shared import ir_env

KERNELS = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    class MemoEntry:
        """FlagGems' libentry, reduced: compiled kernels kept per signature, later calls launched directly."""

        def __init__(self, fn):
            self.fn = fn
            self.kernel_cache = (dict(),)

        def __getitem__(self, grid):
            return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

        def run(self, *args, grid, **kwargs):
            key = tuple((a.dtype, a.data_ptr() % 16 == 0) if hasattr(a, "data_ptr") else a for a in args)
            cache = self.kernel_cache[0]
            if key not in cache:
                kernel = self.fn.run(*args, grid=grid, warmup=False, **kwargs)
                cache[key] = (kernel, dict(self.fn.best_config.kwargs))
                return kernel
            kernel, constexprs = cache[key]
            g = grid(constexprs) if callable(grid) else grid
            kernel[tuple(g) + (1, 1)](*args)
            return kernel


    @MemoEntry
    @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=8)],
                     key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + offs, (x * 2.0).to(out_ptr.dtype.element_ty), mask=mask)


    def scale(x):
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out
''')

CASES = textwrap.dedent('''
    import torch
    from tritondbg import Case, Scenario
    from memo_kernels import scale, scale_kernel


    def make_inputs(case, dtype, device, generator):
        return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


    def twice(x):
        return scale(scale(x))   # the second call: the cached kernel, launched directly


    memo = Scenario(name="memo", description="x * 4 through a libentry-style cache", make_inputs=make_inputs,
                    launch=twice, reference=lambda x: 4 * x.float(), kernels=[scale_kernel.fn],
                    cases=[Case("tiny", params=dict(n=1000), dtypes=("bfloat16",))])
    once = Scenario(name="once", description="x * 2, one call", make_inputs=make_inputs, launch=scale,
                    reference=lambda x: 2 * x.float(), kernels=[scale_kernel.fn],
                    cases=[Case("tiny", params=dict(n=1000), dtypes=("bfloat16",))])
''')


def _setup(tmp_path):
    (tmp_path / "memo_kernels.py").write_text(KERNELS)
    (tmp_path / "memo_cases.py").write_text(CASES)
    return ir_env(tmp_path / "cache", tmp_path / "traces")


def test_all_configs_and_a_second_call_through_a_library_cache(tmp_path):
    env = _setup(tmp_path)
    p = run_cli(["ir", str(tmp_path / "memo_cases.py") + "::memo", "--arch", "sm_90", "--all-configs", "--json"], env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "needs a GPU" not in p.stderr
    rows = json.loads(p.stdout)
    assert [(r["kernel"], r["config"]["BLOCK"], r["num_warps"]) for r in rows] == \
        [("scale_kernel", 128, 4), ("scale_kernel", 256, 8)], rows


def test_diff_two_targets_through_a_library_cache(tmp_path):
    """One call per capture: the second capture (sm_90) found sm_80's kernel in the library's cache."""
    env = _setup(tmp_path)
    p = run_cli(["ir", str(tmp_path / "memo_cases.py") + "::once", "--stage", "ttgir",
                 "--diff", "arch=sm_80", "arch=sm_90"], env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "scale_kernel [sm_80, ttgir]" in p.stderr and "scale_kernel [sm_90, ttgir]" in p.stderr, p.stderr
    assert "cuda:90" in p.stdout, p.stdout[-2000:]
