"""A library's own autotuner that is no ``triton.runtime.Autotuner`` (AutoGPTQ's ``CustomizedTritonAutoTuner``,
GPTQ-for-LLaMa's and exllama's copies of old Triton's): a ``triton.KernelInterface`` with the jit function in
``.fn`` and ``triton.Config`` s in ``.configs``, benchmarking with ``triton.testing.do_bench`` in its own ``run``.

helper-57 (AutoGPTQ 0.7.1): ``interpret`` named no config (the CPU stand-in's do_bench answered NaN, so ``min``
kept the first by luck), ``--config`` / ``--all-configs`` / check's all-configs gate said "no autotuned kernel",
``ir`` failed ("asked Triton's driver for 'get_device_interface', which needs a GPU") and program mode reported
no pinned config. The tuner below is written for this test in the same shape (key indices, reset indices, an
early pruner that yields new Configs, rounding of the key to a power of two)."""
import json
import os
import sys
import textwrap

from conftest import run_cli
from ir_shared import ir_env

KERNELS = textwrap.dedent('''
    import math

    import torch
    import triton
    import triton.language as tl

    LAUNCHES = []


    class OwnTuner(triton.KernelInterface):
        """An autotuner of a library's own: benchmarks each config of a new key in its own run."""

        def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, prune=None, round_key=False):
            self.fn, self.arg_names, self.configs = fn, arg_names, configs
            self.key_idx = [arg_names.index(k) for k in key]
            self.reset_idx = [arg_names.index(k) for k in reset_to_zero or ()]
            self.early_config_prune, self.round_key = prune, round_key
            self.cache = {}

        def prune_configs(self, kwargs):
            if self.early_config_prune is None:
                return self.configs
            return self.early_config_prune(self.configs, self.nargs)   # (a generator, as AutoGPTQ's pruner)

        def run(self, *args, **kwargs):
            self.nargs = dict(zip(self.arg_names, args))
            key = tuple(args[i] for i in self.key_idx)
            if self.round_key:
                key = tuple(2 ** int(math.log2(k) + 0.5) for k in key)
            if key not in self.cache:
                timings = {}
                for config in self.prune_configs(kwargs):
                    LAUNCHES.append("benchmark")
                    call = lambda: self.fn.run(*args, **kwargs, **config.all_kwargs())
                    timings[config] = triton.testing.do_bench(call, rep=5)
                self.cache[key] = min(timings, key=timings.get)
                for i in self.reset_idx:
                    args[i].zero_()
            config = self.best_config = self.cache[key]
            LAUNCHES.append(dict(config.kwargs))
            return self.fn.run(*args, **kwargs, **config.all_kwargs())


    def small_blocks(configs, nargs):
        for c in configs:
            if c.kwargs["BLOCK"] <= max(128, triton.next_power_of_2(nargs["n"])):
                yield triton.Config(dict(c.kwargs), num_warps=c.num_warps)


    def own_autotune(configs, key, **kw):
        return lambda fn: OwnTuner(fn, fn.arg_names, configs, key, **kw)


    @own_autotune([triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=8),
                   triton.Config({"BLOCK": 4096}, num_warps=8)],
                  key=["n"], reset_to_zero=["out_ptr"], prune=small_blocks, round_key=True)
    @triton.jit
    def acc_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        acc = tl.load(out_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, acc + 2.0 * x, mask=mask)


    def accumulate(x):
        out = torch.full(x.shape, 7.0, dtype=torch.float32, device=x.device)  # the tuner zeroes it first
        n = x.numel()
        acc_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        ran, LAUNCHES[:] = list(LAUNCHES), []
        assert "benchmark" not in ran, f"the tuner ran {ran}"   # a pinned config, no timing on the CPU
        return out
''')

CASES = textwrap.dedent('''
    import torch
    from tritondbg import Case, Scenario
    from own_tuned import accumulate, acc_kernel


    def make_inputs(case, dtype, device, generator):
        return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


    own = Scenario(name="own", description="2 * x into a zeroed output, tuned by a library's own autotuner",
                   make_inputs=make_inputs, launch=accumulate, reference=lambda x: 2 * x.float(),
                   kernels=[acc_kernel], cases=[Case("tiny", params=dict(n=1000), dtypes=("float32",))])
''')


def _setup(tmp_path):
    (tmp_path / "own_tuned.py").write_text(KERNELS)
    (tmp_path / "own_cases.py").write_text(CASES)
    env = ir_env(tmp_path / "cache", tmp_path / "traces")
    return dict(env, PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]))


def test_interpret_names_the_config_of_a_lookalike_autotuner_and_config_pins_one(tmp_path):
    env = _setup(tmp_path)
    p = run_cli(["interpret", str(tmp_path / "own_cases.py")], env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]   # (the wrapper asserts no benchmark ran)
    assert "config acc_kernel: BLOCK=128,num_warps=4" in p.stdout and "(default)" in p.stdout, p.stdout
    p = run_cli(["interpret", str(tmp_path / "own_cases.py"), "--config", "BLOCK=256"], env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "config acc_kernel: BLOCK=256,num_warps=8" in p.stdout and "(--config)" in p.stdout, p.stdout


def test_all_configs_runs_each_config_its_own_pruning_keeps(tmp_path):
    env = _setup(tmp_path)
    p = run_cli(["interpret", str(tmp_path / "own_cases.py"), "--all-configs"], env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    out = p.stdout + p.stderr
    assert "BLOCK=128,num_warps=4" in out and "BLOCK=256,num_warps=8" in out, out
    assert "BLOCK=4096" in out and "pruned" in out, out   # its own early pruner drops it for n = 1000
    report = tmp_path / "check.json"
    p = run_cli(["check", "--device", "cpu", "--gates", "all-configs", "--json", str(report),
                 str(tmp_path / "own_cases.py")], env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "2 configs correct" in p.stdout, p.stdout[-3000:]


def test_ir_compiles_the_pinned_config_of_a_lookalike_autotuner_without_a_gpu(tmp_path):
    env = _setup(tmp_path)
    p = run_cli(["ir", str(tmp_path / "own_cases.py"), "--arch", "sm_90", "--all-configs", "--json"], env)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    assert [(r["kernel"], r["config"]["BLOCK"], r["num_warps"]) for r in rows][:2] == \
        [("acc_kernel", 128, 4), ("acc_kernel", 256, 8)], rows
    p = run_cli(["ir", str(tmp_path / "own_cases.py"), "--arch", "sm_90", "--config", "BLOCK=256", "--stage", "ttir"],
                env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "tt.func" in p.stdout and "config BLOCK=256,num_warps=8,num_stages=3  (--config)" in p.stderr, p.stderr


def test_program_mode_names_the_config_of_a_lookalike_autotuner(tmp_path):
    env = _setup(tmp_path)
    (tmp_path / "prog.py").write_text("import torch\nfrom own_tuned import accumulate\n"
                                      "x = torch.randn(1000)\nassert torch.equal(accumulate(x), 2 * x)\nprint('OK')\n")
    p = run_cli(["interpret", "--", sys.executable, str(tmp_path / "prog.py")], env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]  # (the wrapper asserts no benchmark ran)
    assert "acc_kernel BLOCK=128,num_warps=4" in p.stderr, p.stderr[-3000:]
    cap = tmp_path / "cap"
    p = run_cli(["capture", "--interpret", "--out", str(cap), "--", sys.executable, str(tmp_path / "prog.py")], env,
                cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    p = run_cli(["interpret", str(cap / "acc_kernel_0.py"), "--config", "BLOCK=256"], env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "config acc_kernel: BLOCK=256,num_warps=8" in p.stdout, p.stdout[-2000:]
