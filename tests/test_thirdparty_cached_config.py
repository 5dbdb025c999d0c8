"""A caller that keeps the config its autotuner picked and launches the jit function past the autotuner from then
on (vLLM's ``launch_autotuned`` for its mamba kernels: ``best_config`` kept per key, then
``kernel.fn[grid](**kwargs, **config.all_kwargs())``), under ``interpret --all-configs`` and ``ir --all-configs``.

helper-51: the cache outlives one run in the process, so every config of a sweep ran the cached one: `interpret`
said "this case does not launch it ... 0/0 passed" (exit 1) and `ir --all-configs` compiled the first config nine
times. A pin now reaches such a launch too: the pinned config is put in place of the cached one.
"""
import json
import textwrap

from conftest import run_cli
from ir_shared import ir_env

KERNELS = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    import os

    KEPT = {}      # (kernel, n, dtype) -> the config the autotuner picked, as a serving library keeps it


    @triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64}, num_warps=2),
                              triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
    @triton.jit
    def triple_kernel(x_ptr, out_ptr, blk_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3, mask=mask)
        if tl.program_id(0) == 0:
            tl.store(blk_ptr, BLOCK)  # the BLOCK the launch really ran with


    def launch_kept(kernel, grid, **kwargs):
        key = (kernel, kwargs["n"], kwargs["x_ptr"].dtype)
        config = KEPT.get(key)
        if config is None:
            kernel[grid](**kwargs)
            KEPT[key] = kernel.best_config
            return
        kernel.fn[grid](**kwargs, **config.all_kwargs())


    def triple(x):
        out, blk = torch.empty_like(x), torch.zeros(1, dtype=torch.int32)
        n = x.numel()
        for _ in range(2):  # the second launch goes past the autotuner, in any process
            launch_kept(triple_kernel, lambda meta: (triton.cdiv(n, meta["BLOCK"]),), x_ptr=x, out_ptr=out,
                        blk_ptr=blk, n=n)
            with open(os.environ["KEPT_LOG"], "a") as f:
                f.write(f"{int(blk)}\\n")
        return out
''')

CASES = textwrap.dedent('''
    import torch
    from tritondbg import Case, Scenario
    from kept_kernels import triple, triple_kernel


    kept = Scenario(name="kept", description="x * 3 through a kept config", kernels=[triple_kernel],
                    make_inputs=lambda case, dtype, device, generator: dict(x=torch.randn(200, generator=generator)),
                    launch=triple, reference=lambda x: 3 * x, cases=[Case("tiny", dtypes=("float32",))])
''')


def _setup(tmp_path):
    (tmp_path / "kept_kernels.py").write_text(KERNELS)
    (tmp_path / "kept_cases.py").write_text(CASES)
    return ir_env(tmp_path / "cache", tmp_path / "traces")


def test_an_all_configs_sweep_reaches_launches_past_the_autotuner(tmp_path):
    env = dict(_setup(tmp_path), KEPT_LOG=str(tmp_path / "blocks.txt"))
    p = run_cli(["interpret", str(tmp_path / "kept_cases.py"), "--all-configs", "--json"], env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    rec = json.loads(p.stdout[p.stdout.index("{"):])
    assert [r["config"]["triple_kernel"]["BLOCK"] for r in rec["results"]] == [32, 64, 128], rec["results"]
    assert all("launched past its autotuner" in r["config_source"]["triple_kernel"] for r in rec["results"])
    assert rec["extra"]["sweep"]["not_applicable"] == [], rec["extra"]["sweep"]
    # what the kernel saw: the default (32) in the runs that find the configs, then 2 launches of each pinned one
    blocks = (tmp_path / "blocks.txt").read_text().split()
    assert blocks[-6:] == ["32", "32", "64", "64", "128", "128"] and set(blocks[:-6]) == {"32"}, blocks


def test_ir_all_configs_compiles_each_config_for_a_launch_past_the_autotuner(tmp_path):
    env = dict(_setup(tmp_path), KEPT_LOG=str(tmp_path / "blocks.txt"))
    p = run_cli(["ir", str(tmp_path / "kept_cases.py"), "--arch", "sm_90", "--all-configs", "--json"], env)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    got = sorted({(r["config"]["BLOCK"], r["num_warps"]) for r in rows})
    assert got == [(32, 1), (64, 2), (128, 4)], rows
