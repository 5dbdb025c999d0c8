"""An Autotuner subclass that benchmarks in its own ``run`` (FlagGems' ``LibTuner``), under ``ir`` and ``interpret``.

FlagGems' ``LibTuner(triton.runtime.Autotuner)`` overrides ``run`` and benchmarks there without calling
``Autotuner.run``, where tritondbg pinned configs: ``tritondbg ir`` on ``flag_gems.ops.mm`` / ``bmm`` / ``addmm``
failed ("the launch asked Triton's driver for 'get_device_interface', which needs a GPU"), and under the
interpreter every config was timed on the CPU instead of the first one running once. Its cache is a database,
not a dict: reading Triton's ``{fn}.autotune.json`` through it failed too. Vendored reduced tuner below.
"""
import json
import textwrap

from conftest import run_cli
from ir_shared import ir_env

KERNELS = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl
    from triton.runtime.autotuner import Autotuner

    LAUNCHES = []


    class DbCache:
        """A tuning cache that is not a dict (FlagGems keeps its decisions in a database)."""

        def __getitem__(self, key):
            raise TypeError("keys are tuples of argument values")

        def __contains__(self, key):
            return False

        def keys(self):
            return [0]


    class TimedTuner(Autotuner):
        """FlagGems' LibTuner, reduced: benchmarks in its own run and never calls Autotuner.run."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.cache = DbCache()

        def run(self, *args, **kwargs):
            self.nargs = dict(zip(self.arg_names, args))
            if len(self.configs) > 1:
                LAUNCHES.append("benchmark")
                timings = {c: self._bench(*args, config=c, **kwargs) for c in self.prune_configs(kwargs)}
                config = min(timings, key=lambda c: timings[c][0])
            else:
                config = self.configs[0]
            self.best_config = config
            LAUNCHES.append(dict(config.kwargs))
            ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
            self.nargs = None
            return ret


    @(lambda fn: TimedTuner(fn, fn.arg_names, [triton.Config({"BLOCK": 128}, num_warps=4),
                                              triton.Config({"BLOCK": 256}, num_warps=8)], ["n"], None, None))
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
        ran, LAUNCHES[:] = list(LAUNCHES), []
        assert len(ran) == 1 and ran[0] != "benchmark", f"the tuner ran {ran}"   # one pinned config, no timing
        return out
''')

CASES = textwrap.dedent('''
    import torch
    from tritondbg import Case, Scenario
    from tuned_kernels import scale, scale_kernel


    def make_inputs(case, dtype, device, generator):
        return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


    tuned = Scenario(name="tuned", description="x * 2, tuned in a subclass's run", make_inputs=make_inputs,
                     launch=scale, reference=lambda x: 2 * x.float(), kernels=[scale_kernel],
                     cases=[Case("tiny", params=dict(n=1000), dtypes=("bfloat16",))])
''')


def _setup(tmp_path):
    (tmp_path / "tuned_kernels.py").write_text(KERNELS)
    (tmp_path / "tuned_cases.py").write_text(CASES)
    return ir_env(tmp_path / "cache", tmp_path / "traces")


def test_ir_pins_an_autotuner_subclass_with_its_own_run(tmp_path):
    env = _setup(tmp_path)
    p = run_cli(["ir", str(tmp_path / "tuned_cases.py"), "--arch", "sm_90", "--all-configs", "--json"], env)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    assert [(r["kernel"], r["config"]["BLOCK"], r["num_warps"]) for r in rows] == \
        [("scale_kernel", 128, 4), ("scale_kernel", 256, 8)], rows


def test_interpret_runs_the_first_config_of_an_autotuner_subclass_once(tmp_path):
    env = _setup(tmp_path)
    p = run_cli(["interpret", str(tmp_path / "tuned_cases.py")], env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "config scale_kernel: BLOCK=128,num_warps=4" in p.stdout and "(default)" in p.stdout, p.stdout


def test_program_mode_pins_a_subclass_defined_after_it_attached(tmp_path):
    """helper-50: under `interpret -- CMD` the pinning starts with the program, before FlagGems defines its LibTuner:
    only the subclasses that existed then had their run replaced, so LibTuner benchmarked its configs on the CPU
    (NaN timings) and the summary named no config for mm / addmm."""
    env = _setup(tmp_path)
    (tmp_path / "prog.py").write_text("import torch\nfrom tuned_kernels import scale\nprint(scale(torch.randn(1000)).shape)\n")
    import os
    import sys

    path = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    p = run_cli(["interpret", "--", sys.executable, str(tmp_path / "prog.py")], dict(env, PYTHONPATH=path),
                cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]  # (the wrapper asserts no benchmark ran)
    assert "scale_kernel BLOCK=128,num_warps=4" in p.stderr, p.stderr[-3000:]
