"""Real kernels this project did not write (tests/third_party/: Liger-Kernel ops, Triton tutorials 01-06,
flash-linear-attention), unmodified, under the interpreter; the CPU stand-in their host code asks for a GPU;
and the autotuner's own rules (prune_configs_by, tl.static_assert, PYTEST_VERSION) in --all-configs."""
import os
import sys
from pathlib import Path

import pytest

from tritondbg import loader, runner

pytestmark = pytest.mark.interpreter

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "third_party"
FILES = sorted(p for p in CORPUS.glob("*.py") if not p.name.startswith("_") and p.name != "compare_plain.py")
NEEDS = {"liger_": "liger_kernel", "fla_": "fla"}


def _needs(path: Path):
    for prefix, module in NEEDS.items():
        if path.name.startswith(prefix):
            pytest.importorskip(module)


def _params():
    out = []
    for path in FILES:
        for prefix, module in NEEDS.items():
            if path.name.startswith(prefix):
                try:
                    __import__(module)
                except ImportError:
                    out.append(pytest.param(path, None, None, id=path.stem,
                                            marks=pytest.mark.skip(reason=f"needs {module}")))
                    break
        else:
            scenario = loader.load(str(path))
            out += [pytest.param(path, c.name, dt, id=f"{path.stem}-{c.name}-{dt}")
                    for c in scenario.cases if c.interpret for dt in c.dtypes]
    return out


@pytest.mark.parametrize("path, case, dtype", _params())
def test_corpus_case_passes_with_sanitizers(path, case, dtype):
    from tritondbg.interp import instruments

    _needs(path)
    scenario = loader.load(str(path))
    result = runner.run_case(scenario, scenario.case(case), dtype, device="cpu", seed=0,
                             instruments=instruments.build(str(path)))
    detail = "; ".join(f"{f['kind']}: {f['message']}" for f in result.findings)
    assert result.status == "pass", f"{result.message} {detail}"
    assert result.errors and all(e.numel > 0 for e in result.errors)


def test_corpus_files_say_where_the_kernel_comes_from_and_its_license():
    assert len([p for p in FILES if p.name.startswith("liger_")]) >= 8
    assert len([p for p in FILES if p.name.startswith("fla_")]) >= 2
    assert {p.name[:11] for p in FILES if p.name.startswith("tutorial_")} >= {
        "tutorial_01", "tutorial_02", "tutorial_03", "tutorial_05", "tutorial_06"}
    for path in FILES:
        head = path.read_text()[:1500]
        assert "Source:" in head or "python/tutorials/" in head, path.name
        assert "license" in head.lower(), path.name
        if path.name.startswith(("liger_", "fla_")):   # imported from the installed package, not copied
            assert "@triton.jit" not in path.read_text(), path.name


# ---- the CPU stand-in ----------------------------------------------------------------------------------------

def test_standin_answers_host_code_as_the_chosen_gpu():
    import torch
    import triton
    from triton.runtime import driver

    from tritondbg import standin

    assert standin.current() is not None          # installed by runner.set_mode("interpret") in conftest
    assert driver.active.get_active_torch_device() == torch.device("cpu")
    assert driver.active.get_current_target().arch == 90
    props = driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] == 132 and props["max_shared_mem"] == 232448 and props["warpSize"] == 32
    assert torch.cuda.get_device_capability() == (9, 0)
    assert "H100" in torch.cuda.get_device_properties(0).name
    assert torch.cuda.is_bf16_supported()  # as the GPU says (a program picks bf16 by it); torch's own: False here
    try:
        standin.install("sm_75")
        assert not torch.cuda.is_bf16_supported()
        standin.install("sm_80")
        assert driver.active.get_current_target().arch == 80
        assert torch.cuda.get_device_capability() == (8, 0)
        assert driver.active.utils.get_device_properties(0)["multiprocessor_count"] == 108
        standin.install("gfx942")
        assert driver.active.get_current_target().backend == "hip"
        assert driver.active.utils.get_device_properties(0)["warpSize"] == 64
    finally:
        standin.install("sm_90")
    assert triton.runtime.driver.active.get_current_target().arch == 90


def test_a_driver_utils_name_the_stand_in_lacks_says_whether_the_gpus_driver_has_it():
    """helper-138: FBGEMM's TMA path called driver.active.utils.fill_1d_tma_descriptor and read "'types.SimpleNamespace'
    object has no attribute ..." with the stand-in's frame; now an AttributeError (so hasattr answers False) that
    says whether this Triton's own CUDA driver has the name, without tritondbg's frame."""
    from triton.runtime import driver

    from tritondbg.program import tracebacks

    utils = driver.active.utils
    assert not hasattr(utils, "fill_1d_tma_descriptor")
    with pytest.raises(AttributeError) as gone:
        utils.fill_1d_tma_descriptor(0, 64, 32, 4, 0)
    assert "'fill_1d_tma_descriptor'" in str(gone.value) and "driver has none either" in str(gone.value)
    assert type(gone.value).__name__ == "AttributeError" and not tracebacks._raised_by_us(gone.value)
    with pytest.raises(AttributeError, match="this Triton's CUDA driver has it, the CPU stand-in"):
        utils.load_binary


def test_standin_warmup_returns_a_launchable_kernel_with_resource_figures():
    import torch

    _needs(CORPUS / "tutorial_02_fused_softmax.py")
    module = sys.modules[loader.load(str(CORPUS / "tutorial_02_fused_softmax.py")).launch.__module__]
    x = torch.randn(5, 33)
    y = torch.empty_like(x)
    kernel = module.softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), 5, 33, BLOCK_SIZE=64, num_stages=2,
                                          num_warps=4, grid=(1,))
    kernel._init_handles()
    assert kernel.n_regs > 0 and kernel.n_spills == 0 and kernel.metadata.shared > 0
    kernel[(2, 1, 1)](y, x, x.stride(0), y.stride(0), 5, 33, 64, 2)   # 2 persistent programs for 5 rows
    torch.testing.assert_close(y, torch.softmax(x, -1))


def test_standin_uninstall_puts_everything_back(monkeypatch):
    import torch
    from triton.runtime import driver
    from triton.runtime.interpreter import InterpretedFunction

    from tritondbg import standin

    import triton.testing

    before = (driver._active, torch.cuda.get_device_capability, InterpretedFunction.run, triton.testing.do_bench)
    assert hasattr(torch.cpu, "set_stream")  # torch's own, or the stand-in's where torch.cpu has none
    standin.uninstall()
    try:
        assert standin.current() is None
        assert driver._active is not before[0]
        assert torch.cuda.get_device_capability is not before[1]
        assert InterpretedFunction.run is not before[2]
        assert triton.testing.do_bench is not before[3] and triton.testing.do_bench.__module__ == "triton.testing"
        assert getattr(torch.cpu, "set_stream", None) is not standin._set_cpu_stream
        with pytest.raises(Exception):
            torch.cuda.get_device_capability()       # a CPU build of torch: no CUDA
    finally:
        standin.install("sm_90")


def test_interpret_arch_option(cli_env):
    from conftest import run_cli

    p = run_cli(["interpret", str(CORPUS / "tutorial_06_fused_attention.py"), "--arch", "sm_80", "--json"],
                cli_env)
    assert p.returncode == 0, p.stderr[-2000:]
    import json

    rec = json.loads(p.stdout)
    assert rec["extra"]["stand_in_arch"] == "sm_80"
    bad = run_cli(["interpret", str(CORPUS / "tutorial_01_vector_add.py"), "--arch", "sm_zz"], cli_env)
    assert bad.returncode == 2 and "unknown --arch" in bad.stderr and "Traceback" not in bad.stderr


# ---- the autotuner's own rules ---------------------------------------------------------------------------------

def test_scenarios_import_without_pytest_version():
    """Tutorial 06 keeps 1 of its configs when PYTEST_VERSION is set; the loader imports it as a plain run does."""
    assert "PYTEST_VERSION" in os.environ          # we are inside pytest
    from tritondbg.configs import autotuners

    tuner = autotuners(loader.load(str(CORPUS / "tutorial_06_fused_attention.py")).kernels)["_attn_fwd"]
    assert len(tuner.configs) == 21                # 36 listed, 15 dropped by keep() on sm_90
    assert os.environ.get("PYTEST_VERSION")        # and it is put back


def test_all_configs_runs_only_what_the_autotuner_would_try():
    from tritondbg.interp.sweep import run_all_configs

    rec = run_all_configs(str(HERE / "interp_data" / "prune_cases.py"))
    ran = [r.extra["sweep"]["config"]["BLOCK"] for r in rec.results]
    assert ran == [32] and rec.passed
    skipped = {s["config"].split(",")[0]: s["reason"] for s in rec.extra["sweep"]["not_applicable"]}
    assert set(skipped) == {"BLOCK=16", "BLOCK=64", "BLOCK=128", "BLOCK=512"}
    assert all("prune_configs_by" in skipped[k] for k in ("BLOCK=64", "BLOCK=128", "BLOCK=512"))
    assert "tl.static_assert" in skipped["BLOCK=16"] and "BLOCK below 32" in skipped["BLOCK=16"]
    assert rec.extra["sweep"]["failures"] == []


def test_all_configs_on_tutorial_06_lists_static_assert_configs_as_not_applicable():
    from tritondbg.interp.sweep import run_all_configs

    rec = run_all_configs(str(CORPUS / "tutorial_06_fused_attention.py"), cases="tiny")
    sweep = rec.extra["sweep"]
    assert rec.passed and sweep["failures"] == []
    assert sweep["runs"] == 6                        # BLOCK_N=32: 2 BLOCK_M x 3 stages
    reasons = [s["reason"] for s in sweep["not_applicable"]]
    assert sum("prune_configs_by" in r for r in reasons) == 3      # causal: BLOCK_M < BLOCK_N pruned
    assert sum("BLOCK_N <= HEAD_DIM" in r for r in reasons) == 12
    # printed: at most 5 configs per kernel and reason, then a count (xformers' 408 pruned ones, one line each)
    from rich.console import Console

    from tritondbg.render.console import print_sweep

    con = Console(record=True, width=400)
    print_sweep(con, rec)
    text = con.export_text()
    assert "15 config(s) not run" in text and text.count("BLOCK_N <= HEAD_DIM") == 6, text
    assert "... and 7 more of _attn_fwd: tl.static_assert fails" in text, text


def _copy_kernel():
    """A masked copy, made when the test runs (under the interpreter the tests set up)."""
    import triton
    import triton.language as tl

    @triton.jit
    def copy(x, y, n, B: tl.constexpr):
        o = tl.arange(0, B)
        tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)

    return copy


def test_an_fp8_type_the_target_refuses_is_refused_under_the_interpreter_too():
    """helper-45: tutorial 09 in fp8 passed `interpret --arch sm_80` while `ir --arch sm_80` said "type fp8e4nv
    not supported in this architecture" (the interpreter never lowers the kernel's signature)."""
    import torch

    from tritondbg import standin

    copy = _copy_kernel()
    x = torch.zeros(8, dtype=torch.float8_e4m3fn)
    y = torch.empty_like(x)
    try:
        standin.install("sm_80")
        with pytest.raises(ValueError, match=r"type fp8e4nv not supported in this architecture \(sm_80\)"):
            copy[(1,)](x, y, 8, B=8)
        copy[(1,)](x.view(torch.uint8).view(torch.float8_e5m2), y.view(torch.float8_e5m2), 8, B=8)  # e5m2: fine
    finally:
        standin.install()  # the default target, as no --arch (sm_90)
    copy[(1,)](x, y, 8, B=8)  # sm_90 has it


def test_a_launch_option_the_target_refuses_is_refused_under_the_interpreter_too():
    """helper-45: tutorial 11's `launch_pdl=True` passed `interpret --arch gfx942` while `ir --arch gfx942` said
    "Keyword argument launch_pdl was specified but unrecognised"; a typo (`num_warp=4`) ran under any target, as
    the interpreter ignores launch options. Without --arch an AMD-only option (waves_per_eu) still runs."""
    import torch

    from tritondbg import standin

    copy = _copy_kernel()
    x = torch.arange(8, dtype=torch.float32)
    y = torch.empty_like(x)
    try:
        standin.install("gfx942")
        with pytest.raises(KeyError, match=r"launch_pdl was specified but unrecognised \(by the gfx942 compiler"):
            copy[(1,)](x, y, 8, B=8, launch_pdl=True)
        copy[(1,)](x, y, 8, B=8, waves_per_eu=2, num_warps=4)
        standin.install("sm_80")
        with pytest.raises(ValueError, match=r"num_ctas > 1 .*sm_80 compiler's refusal"):
            copy[(1,)](x, y, 8, B=8, num_ctas=2)
        with pytest.raises(KeyError, match="waves_per_eu"):
            copy[(1,)](x, y, 8, B=8, waves_per_eu=2)
    finally:
        standin.install()
    copy[(1,)](x, y, 8, B=8, waves_per_eu=2, launch_pdl=True)  # no --arch: either vendor's option runs
    with pytest.raises(KeyError, match=r"num_warp was specified but unrecognised \(no Triton backend"):
        copy[(1,)](x, y, 8, B=8, num_warp=4)
    assert torch.equal(y, x)


def test_a_kernel_module_that_makes_cuda_tensors_runs_in_kernel_form_without_a_gpu(tmp_path):
    """helper-48: gemlite makes `torch.tensor(..., device="cuda:0")` when its module is imported, so its scenario
    file and every reproducer of its kernels failed to load on a machine without a GPU ("Torch not compiled with
    CUDA enabled"), where `interpret -- CMD` ran the same program. The kernel form serves such requests on the
    CPU too, while importing and while a case runs, and its summary says how many."""
    import textwrap

    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: nothing to serve on the CPU")
    (tmp_path / "cudalib.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        LUT = torch.tensor([0.0, 1.0, 2.0, 3.0], device="cuda:0")  # at import, as gemlite's gemv_kernels.py

        @triton.jit
        def lut_kernel(i_ptr, lut_ptr, o_ptr, n, B: tl.constexpr):
            offs = tl.arange(0, B)
            m = offs < n
            tl.store(o_ptr + offs, tl.load(lut_ptr + tl.load(i_ptr + offs, mask=m, other=0)), mask=m)

        def lookup(idx):
            out = torch.empty(idx.shape, device="cuda")  # at call time too
            lut_kernel[(1,)](idx, LUT, out, idx.numel(), B=16)
            return out
    '''))
    (tmp_path / "cases.py").write_text(textwrap.dedent('''
        import torch
        from tritondbg import Case, Scenario
        from cudalib import lookup, lut_kernel

        lut = Scenario("lut", lambda case, dtype, device, generator: dict(idx=torch.arange(10, dtype=torch.int32) % 4),
                       lookup, lambda idx: (idx % 4).float(), [Case("tiny", dtypes=("float32",))], kernels=[lut_kernel])
    '''))
    rec = runner.run(str(tmp_path / "cases.py"), mode="interpret")
    assert rec.passed, [(r.status, r.message) for r in rec.results]
    assert rec.extra.get("cuda_on_cpu") == 2, rec.extra  # LUT at import, then `out` in the launch
    assert not torch.empty(1).is_cuda and torch.empty(1, device="cpu").device.type == "cpu"  # nothing stays pushed
    with pytest.raises((AssertionError, RuntimeError)):
        torch.empty(1, device="cuda")  # after the run: torch's own error again


def test_configs_a_pruner_makes_are_swept_and_a_kernel_the_case_skips_is_not_blamed():
    """helper-48 (gemlite): a pruner that returns configs of its own had every listed config reported "pruned"
    (duplicates too) while its own ran, the resources gate failed "none of its configs can run", and a kernel the
    case never launches was "run" once and blamed for the launched kernel's findings."""
    from tritondbg.check.gates import GateContext, run_gate
    from tritondbg.interp.sweep import run_all_configs

    target = str(HERE / "interp_data" / "pruner_own.py")
    rec = run_all_configs(target)
    sweep = rec.extra["sweep"]
    ran = [(r.extra["sweep"]["kernel"], r.extra["sweep"]["config"]) for r in rec.results]
    # its two listed configs become one of its own (BLOCK clamped to 64 for n = 40, EXTRA added): run once
    assert ran == [("own_kernel", {"BLOCK": 64, "EXTRA": 1, "num_warps": 4, "num_stages": 3})], ran
    assert rec.passed and sweep["failures"] == [], sweep
    reasons = {(s["kernel"], s["reason"]) for s in sweep["not_applicable"]}
    assert ("other_kernel", "this case does not launch it") in reasons, reasons
    assert any(k == "own_kernel" and "returns 1 config(s) of its own" in r for k, r in reasons), reasons
    assert not any("pruned by" in r for _, r in reasons), reasons
    from rich.console import Console

    from tritondbg.render.console import print_sweep

    con = Console(record=True, width=400)
    print_sweep(con, rec)  # the header counts configs, not lines: own_kernel's 2 listed ones and other_kernel's 2
    assert "4 config(s) not run" in con.export_text(), con.export_text()
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    # own_kernel's configs compiled and judged (no "none of its configs can run"); other_kernel, which the scenario
    # lists and no case launches, fails the gate as unchecked (session 48, helper-84)
    assert out.status == "FAIL" and out.reason.startswith("other_kernel never compiled"), out.reason
    assert "none of its configs can run" not in out.reason and out.details["never_launched"] == ["other_kernel"]


def test_a_reproducer_whose_module_asks_the_gpu_at_import_loads_under_ir(tmp_path):
    """helper-48: gemlite's kernel module asks `torch.cuda.get_device_capability()` and makes CUDA tensors at
    import. Its reproducers replayed under `interpret` (the stand-in answers) but `ir` and `check` on them said
    "cannot load kernel ...: Torch not compiled with CUDA enabled": the reproducer imports its kernel lazily,
    outside the answers `ir` gives while it imports a scenario."""
    import subprocess
    import textwrap

    (tmp_path / "asklib.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        MAJOR = torch.cuda.get_device_capability()[0]
        ONES = torch.ones(4, device="cuda:0")

        @triton.jit
        def twice(x_ptr, y_ptr, n, B: tl.constexpr):
            o = tl.arange(0, B)
            tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)
    '''))
    (tmp_path / "prog.py").write_text(textwrap.dedent('''
        import torch
        from asklib import twice
        x = torch.randn(10, device="cuda")
        y = torch.empty_like(x)
        twice[(1,)](x, y, 10, B=16)
        print("ok", bool(torch.allclose(y, 2 * x)))
    '''))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def tdbg(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=300)

    cap = tdbg("capture", "--out", "cap", "--", "python", "prog.py")
    assert cap.returncode == 0 and "ok True" in cap.stdout, cap.stdout + cap.stderr[-2000:]
    ir = tdbg("ir", "cap/twice_0.py", "--stage", "ttir")
    assert ir.returncode == 0 and "tt.func" in ir.stdout, ir.stdout[-1000:] + ir.stderr[-2000:]
    rep = tdbg("interpret", "cap/twice_0.py")
    assert rep.returncode == 0, rep.stdout[-1000:] + rep.stderr[-2000:]


def test_a_perf_model_that_asks_nvidia_smi_prunes_under_the_interpreter(tmp_path):
    """helper-47: xformers' tiled matmul prunes with Triton's classic matmul perf model, which reads the SM clock
    from `triton.testing.nvsmi(["clocks.max.sm"])`; without nvidia-smi it fell back to pynvml ("No module named
    'pynvml'") under interpret, ir and check, even with --config. The stand-in answers it as the target."""
    import textwrap

    (tmp_path / "perfmodel.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from triton.testing import nvsmi
        from tritondbg import Case, Scenario

        SEEN = {}

        def estimate(**kw):
            SEEN["mhz"] = nvsmi(["clocks.max.sm"])[0]
            return kw["BLOCK"]

        @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64)], key=["n"],
                         prune_configs_by={"perf_model": estimate, "top_k": 2})
        @triton.jit
        def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)

        def launch(x):
            y = torch.empty_like(x)
            k[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, y, x.numel())
            return y

        s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(100)), launch, lambda x: 2 * x,
                     [Case("tiny", dtypes=("float32",))], kernels=[k])
    '''))
    rec = runner.run(str(tmp_path / "perfmodel.py"), mode="interpret")
    assert rec.passed, [(r.status, r.message) for r in rec.results]
    assert rec.results[0].config["k"]["BLOCK"] == 16, rec.results[0].config  # top_k 2 of the model's, first
    mod = next(m for n, m in sys.modules.items() if n.startswith("tritondbg_user_perfmodel"))
    assert mod.SEEN["mhz"] == 1980, mod.SEEN  # sm_90's stand-in: 1980 MHz


def test_a_missing_submodule_of_an_installed_package_is_not_an_install_hint(tmp_path):
    """helper-47: a typo'd submodule (`from unsloth.kernels.swigl import ...`) said "(pip install unsloth)" while
    unsloth was installed: on a CPU box that sent the user to install a large GPU package."""
    from tritondbg.errors import UsageError

    (tmp_path / "typo.py").write_text("from tritondbg import Scenario\nimport json.nosuchsub\n")
    with pytest.raises(UsageError, match=r"No module named 'json.nosuchsub' \(json is installed and has no nosuchsub\)"):
        loader.load(str(tmp_path / "typo.py"))
    (tmp_path / "missing.py").write_text("from tritondbg import Scenario\nimport nosuchpkg_tdbg.sub\n")
    with pytest.raises(UsageError, match=r"\(pip install nosuchpkg[_-]tdbg\)"):
        loader.load(str(tmp_path / "missing.py"))


def test_config_reaches_an_autotuned_kernel_the_scenario_cannot_list(tmp_path):
    """helper-48: torchao defines its blockwise fp8 gemm inside a function, so a scenario cannot list it;
    `--config BLOCK_SIZE_M=64` said "this scenario has no autotuned kernel" while the run printed its config.
    The first case is run to find the autotuned kernels it launches, as all-configs does."""
    import textwrap

    from tritondbg.errors import UsageError

    (tmp_path / "nested.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        def _build():
            @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32)], key=["n"])
            @triton.jit
            def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)
            return twice

        _k = _build()

        def launch(x):
            y = torch.empty_like(x)
            _k[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, y, x.numel())
            return y

        s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(100)), launch, lambda x: 2 * x,
                     [Case("tiny", dtypes=("float32",))])
    '''))
    rec = runner.run(str(tmp_path / "nested.py"), mode="interpret", config="BLOCK=32")
    assert rec.passed and rec.results[0].config["twice"]["BLOCK"] == 32, rec.results[0].config
    assert rec.results[0].config_source["twice"] == "--config", rec.results[0].config_source
    with pytest.raises(UsageError, match="unknown config key"):
        runner.run(str(tmp_path / "nested.py"), mode="interpret", config="BLOK=32")


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_an_all_configs_sweep_cut_short_names_the_config_that_was_running(monkeypatch, signal_name):
    """helper-48: Ctrl-C early in `interpret --all-configs` printed "0/0 passed ... interrupted": the config that
    was running was in no list. It is an error result naming the config, and the signal (helper-75: a SIGTERM
    read "did not finish (KeyboardInterrupt)")."""
    import signal

    from tritondbg import runner as runner_mod, stops
    from tritondbg.interp.sweep import run_all_configs

    real, calls = runner_mod.run_case, []

    def interrupted_at_the_first_config(*args, **kwargs):
        calls.append(kwargs.get("pinned"))
        if kwargs.get("pinned"):  # (the runs before it find the kernels and configs: not pinned)
            if signal_name == "SIGTERM":
                stops.handler(signal.SIGTERM, None)  # what the run's SIGTERM handler does
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_mod, "run_case", interrupted_at_the_first_config)
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            run_all_configs(str(HERE / "interp_data" / "prune_cases.py"))
    finally:
        stops.clear()
    results = info.value.record.results
    assert [r.status for r in results] == ["error"], [(r.status, r.message) for r in results]
    assert f"did not finish (interrupted by {signal_name})" in results[-1].message, results[-1].message
    assert results[-1].extra["interrupted"]
