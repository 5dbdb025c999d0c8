"""Shims and reporting of `tritondbg interpret`: scalar args as tensors, libdevice, prints/asserts/errors
attributed to pid and line, --all-configs, --json findings, exit statuses, a real third-party kernel."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter

HERE = Path(__file__).resolve().parent
CASES = HERE / "interp_data" / "shim_cases.py"
ZOO = HERE / "zoo"


def mark(path: Path, name: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if f"# MARK: {name}" in ln)


def execute(target, capsys, tmp_path, **kw):
    from tritondbg.commands.execute import execute as run

    status = run(target, mode="interpret", out_dir=str(tmp_path), **kw)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_scalar_args_are_tensors_and_libdevice_runs(capsys, tmp_path):
    # eps.to(tl.float32) on a float argument and libdevice.rsqrt: both fail under the plain interpreter
    status, out, _ = execute(f"{CASES}::scalar_args", capsys, tmp_path)
    assert status == 0, out
    assert "PASS scalar_args" in out


def test_a_backends_own_libdevice_runs(capsys, tmp_path, cli_env):
    """``tl.extra.cuda.libdevice.asin`` and ``from triton.language.extra.cuda import libdevice`` (Triton's tutorial
    07): only the generic stub module was replaced; the bare interpreter and tritondbg failed alike ("Did you forget
    to add @triton.jit ?")."""
    status, out, _ = execute(f"{CASES}::backend_libdevice", capsys, tmp_path)
    assert status == 0 and "PASS backend_libdevice" in out and "FAIL" not in out, out


def test_and_or_on_blocks_are_element_wise_as_in_compiled_code(capsys, tmp_path):
    """``lo < x and x <= hi`` on blocks (helper-63: xformers' rope_padded with dynamic scaling): compiled Triton
    combines them element-wise; the interpreter asked Python for each block's truth, took every block for true,
    and so computed ``x <= hi``: 40 of 101 outputs wrong, no finding. In the kernel and in a jit helper."""
    status, out, _ = execute(f"{HERE / 'interp_data' / 'boolops.py'}::s", capsys, tmp_path, case="inline,helper")
    assert status == 0 and out.count("PASS s") == 2 and "FAIL" not in out, out


def test_cuda_num_threads_and_num_warps_are_the_launchs(capsys, tmp_path):
    """``tl.extra.cuda.num_threads()`` (triton_kernels' swiglu): "Did you forget to add @triton.jit ?" under
    every interpreter. num_warps=2 and 8: 64 / 256 threads."""
    status, out, _ = execute(f"{HERE / 'interp_data' / 'num_threads.py'}::s", capsys, tmp_path, case="two,eight")
    assert status == 0 and out.count("PASS s") == 2, out


def test_loop_induction_variables_are_tensors_as_in_compiled_code(capsys, tmp_path, cli_env):
    """``for i in range(n): i.to(tl.int64)`` (flash-linear-attention's chunk kernels) and ``tl.range``: compiled
    code's induction variables are tensors, the plain interpreter's Python ints ('int' object has no attribute
    'to'); ``tl.static_range`` keeps ints (it sizes a tl.arange here)."""
    status, out, _ = execute(f"{CASES}::loop_vars", capsys, tmp_path)
    assert status == 0 and "PASS loop_vars" in out, out
    plain = subprocess.run([sys.executable, "-c", f"""
import runpy, torch
mod = runpy.run_path({str(CASES)!r})
mod["_loop_launch"](torch.arange(10, dtype=torch.float32))
"""], env={**cli_env, "TRITON_INTERPRET": "1"}, capture_output=True, text=True, timeout=300)
    # Triton 3.6's plain interpreter stops one line earlier, on the loop bound (numpy >= 2.4 and int(tensor))
    assert plain.returncode != 0 and ("'int' object has no attribute 'to'" in plain.stderr
                                      or "only 0-dimensional arrays" in plain.stderr), plain.stderr[-2000:]


def test_scalar_comparison_masks_and_builtin_aliases_run_as_compiled(capsys, tmp_path, cli_env):
    """``mask & (i < T)`` with a scalar right side (fla's HGRN): the interpreter tags a comparison with its operands'
    type, the splat makes int32 data, and Triton 3.9's load refuses the mask ("mask has unsupported dtype"); a
    builtin bound to a module-level name (``maximum = tl.maximum``; fla's ``gather = tl.gather``) is left unpatched
    and fails ("Did you forget to add @triton.jit"). tritondbg runs both as compiled code does."""
    status, out, _ = execute(f"{CASES}::masks", capsys, tmp_path)
    assert status == 0 and "PASS masks" in out, out
    plain = subprocess.run([sys.executable, "-c", f"""
import runpy, torch
mod = runpy.run_path({str(CASES)!r})
mod["_masks_launch"](torch.randn(72))
"""], env={**cli_env, "TRITON_INTERPRET": "1"}, capture_output=True, text=True, timeout=300)
    assert plain.returncode != 0 and ("mask has unsupported dtype" in plain.stderr
                                      or "Did you forget to add @triton.jit" in plain.stderr), plain.stderr[-2000:]


def test_tensors_reached_through_a_pointer_table_are_not_out_of_bounds(capsys, tmp_path):
    """A kernel handed tables of data pointers (grouped GEMM, MoE) reaches tensors that are not its arguments: the
    memory guard masked those lanes and the sanitizer reported them (and the output came out wrong). A tensor whose
    address an argument holds is reachable through such pointers now (a neighbour no argument names is not:
    test_interp_guard.py); a store that runs past them into memory no tensor holds is still an out_of_bounds
    finding, at its line."""
    status, out, _ = execute(f"{CASES}::pointer_table", capsys, tmp_path)
    assert status == 0 and "PASS pointer_table" in out and "out_of_bounds" not in out, out
    status, out, _ = execute(f"{CASES}::pointer_table_spill", capsys, tmp_path)
    assert status == 1 and f"out_of_bounds tests/interp_data/shim_cases.py:{mark(CASES, 'table_store')}" in out, out


def test_a_read_past_a_table_tensor_into_the_next_one_is_out_of_bounds(capsys, tmp_path):
    """Group 0's load runs 3 elements past its tensor into group 1's, both reached through the pointer table
    (views of one buffer): every lane is inside some handed tensor, but not the one the pointer was cast from,
    which the table entry names; the finding names it by its entry (``ptrs[0]``; "table tensor @0x55..."
    before) and counts the lanes past its end."""
    status, out, _ = execute(f"{CASES}::pointer_table_overread", capsys, tmp_path)
    assert status == 1 and f"out_of_bounds tests/interp_data/shim_cases.py:{mark(CASES, 'table_load')}" in out, out
    assert "outside ptrs[0]" in out and "3 lane(s)" in out and "1..3 element(s) past the end" in out, out


def test_programmatic_dependent_launch_waits_run_as_no_ops(capsys, tmp_path, cli_env):
    """``tl.extra.cuda.gdc_wait()`` and an imported ``gdc_launch_dependents()`` in a kernel launched with
    ``launch_pdl=True`` (Triton's tutorial 11): the plain interpreter fails on them ("Did you forget to add
    @triton.jit ?"); under tritondbg they are no-ops (launches run one after another) and the kernel passes."""
    status, out, _ = execute(f"{CASES}::pdl", capsys, tmp_path)
    assert status == 0 and "PASS pdl" in out, out
    plain = subprocess.run([sys.executable, "-c", "import os, sys; sys.path.insert(0, os.path.dirname(sys.argv[1])); "
                            "import torch, shim_cases as s; s._pdl_launch(torch.arange(10.0))", str(CASES)],
                           capture_output=True, text=True, timeout=300, env=dict(cli_env, TRITON_INTERPRET="1"))
    assert plain.returncode != 0 and "Did you forget to add @triton.jit" in plain.stderr, plain.stderr[-2000:]


def test_libdevice_refuses_the_dtypes_the_gpu_compiler_refuses(capsys, tmp_path, cli_env):
    """libdevice.asin of fp16 values: the sm_90 compiler refuses it (CUDA's libdevice has fp32 and fp64 only), so
    the interpreter must not compute it: a kernel error at the call's line naming the dtypes; cast to fp32 first
    and it passes."""
    status, out, _ = execute(f"{CASES}::asin_fp16", capsys, tmp_path)
    line = mark(CASES, "asin_fp16")
    assert status == 1 and f"shim_cases.py:{line}" in out and "libdevice.asin: input arg type does not match" in out, out
    assert "got (fp16)" in out, out
    status, out, _ = execute(f"{CASES}::asin_upcast", capsys, tmp_path)
    assert status == 0 and "PASS asin_upcast" in out, out
    compiled = run_cli(["ir", f"{CASES}::asin_fp16", "--arch", "sm_90", "--stage", "ttir"], cli_env)
    # the compiler's own refusal, at the same line (Triton 3.6 and 3.9: a bare "KeyError: (triton.language.float16)"
    # on the dtypes, which ir now says as the interpreter does: helper-45)
    assert compiled.returncode != 0 and f"shim_cases.py:{line}: " in compiled.stderr, compiled.stderr
    said = compiled.stderr.split(f"shim_cases.py:{line}: ")[1]
    assert said.startswith("libdevice.asin: input arg type does not match. Expect one of (fp32), (fp64), got "
                           "(fp16)"), compiled.stderr


def test_prints_are_attributed_to_pid_and_line(capsys, tmp_path):
    status, out, _ = execute(f"{CASES}::prints", capsys, tmp_path)
    assert status == 0, out
    dp, sp = mark(CASES, "device_print"), mark(CASES, "static_print")
    assert f"shim_cases.py:{dp} pid (1, 0, 0)] first: [4 5 6 7]" in out     # n=10, BLOCK=4: 3 programs
    assert f"shim_cases.py:{dp} pid (2, 0, 0)] first: [ 8  9 10 11]" in out
    assert out.count(f"shim_cases.py:{sp} static_print] BLOCK = 4") == 1   # once, as at compile time
    rec = json.loads(next(Path(tmp_path).glob("*/tritondbg/record.json")).read_text())
    prints = rec["results"][0]["extra"]["prints"]
    assert [p["pid"] for p in prints if p["kind"] == "device_print"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]


def test_prints_go_to_stderr_with_json(capsys, tmp_path):
    status, out, err = execute(f"{CASES}::prints", capsys, tmp_path, as_json=True)
    assert status == 0
    assert json.loads(out)["passed"] is True                              # stdout is the record alone
    assert "first: [0 1 2 3]" in err


def test_device_assert_is_a_finding_with_pid_and_line(capsys, tmp_path):
    status, out, _ = execute(f"{CASES}::device_assert", capsys, tmp_path, as_json=True)
    assert status == 1
    res = json.loads(out)["results"][0]
    (f,) = res["findings"]
    assert (f["kind"], f["line"], f["pid"]) == ("device_assert", mark(CASES, "device_assert"), [1, 0, 0])
    assert "offs out of range (2 of 4 lanes" in f["message"]               # offs 4..7: lanes 6 and 7 fail
    assert f"shim_cases.py:{mark(CASES, 'device_assert')}: pid (1, 0, 0): device_assert failed" in res["message"]


def test_kernel_exception_is_one_line_with_file_line_and_pid(capsys, tmp_path):
    status, out, err = execute(f"{CASES}::kernel_error", capsys, tmp_path)
    assert status == 1
    line = mark(CASES, "kernel_error")
    assert f"shim_cases.py:{line}: pid (0, 0, 0): ValueError: Cannot make_shape_compatible" in out
    assert "Traceback" not in out + err and "InterpreterError" not in out + err


def test_json_carries_every_finding_and_exit_1(cli_env):
    p = run_cli(["interpret", f"{ZOO / 'off_by_one_store.py'}::buggy", "--json"], cli_env)
    assert p.returncode == 1, p.stderr
    (f,) = json.loads(p.stdout)["results"][0]["findings"]
    line = next(i for i, ln in enumerate((ZOO / "off_by_one_store.py").read_text().splitlines(), 1) if "# BUG" in ln)
    assert {k: f[k] for k in ("kind", "line", "pid", "tensor", "offsets", "op", "severity")} == dict(
        kind="out_of_bounds", line=line, pid=[2, 0, 0], tensor="y_ptr", offsets=[300], op="store", severity="error")
    assert Path(f["file"]).name == "off_by_one_store.py"


def test_no_sanitize_is_no_pass_where_the_guard_kept_lanes_out(capsys, tmp_path):
    # the plain interpreter's verdict is a PASS (its out-of-bounds lanes read 0 or whatever lies there); without
    # sanitizers the guard's count of the lanes it kept out fails the run at their line
    status, out, _ = execute(f"{ZOO / 'missing_mask.py'}::buggy", capsys, tmp_path, sanitize=False)
    assert status == 1 and "FAIL" in out and "the memory guard kept them out" in out, out
    status, out, _ = execute(f"{ZOO / 'missing_mask.py'}::buggy", capsys, tmp_path)
    assert status == 1 and "out_of_bounds" in out


def test_all_configs_reports_the_configs_that_disagree(capsys, tmp_path):
    status, out, _ = execute(f"{ZOO / 'config_bug.py'}::buggy", capsys, tmp_path, all_configs=True)
    assert status == 1
    assert "1 of 3 config runs disagree:" in out
    assert "rowsum_buggy BLOCK=128" in out.split("disagree:")[1]
    status, out, _ = execute(f"{ZOO / 'config_bug.py'}::twin", capsys, tmp_path, all_configs=True)
    assert status == 0 and "all 3 config runs agree with the reference" in out


def test_all_configs_usage_errors(capsys, tmp_path):
    from tritondbg.errors import UsageError

    with pytest.raises(UsageError, match="leave out --config"):
        execute(f"{ZOO / 'config_bug.py'}::buggy", capsys, tmp_path, all_configs=True, config="BLOCK=64")
    # no autotuned kernel: one config, run once as without --all-configs, saying so (it was a usage error, exit 2,
    # where `ir --all-configs` took the same scenario)
    status, out, err = execute(f"{ZOO / 'race.py'}::buggy", capsys, tmp_path, all_configs=True)
    assert status == 1 and "race" in out, out
    assert "note: --all-configs: buggy launches no autotuned kernel" in err and "its one config" in err, err


def test_all_configs_sweeps_autotuned_kernels_the_scenario_does_not_list(capsys, tmp_path):
    """A scenario whose launch calls autotuned kernels it does not list in ``kernels=`` (fla's wrappers launch their
    own): `interpret --all-configs` sweeps them (it stopped: "has no autotuned kernel")."""
    data = Path(__file__).resolve().parent / "check_data" / "unlisted.py"
    status, out, _ = execute(f"{data}::unlisted", capsys, tmp_path, all_configs=True)
    assert status == 1 and "1 of 4 config runs disagree" in out and "copy_tuned BLOCK=128" in out, out


# ---- a third-party kernel from PyPI: Liger-Kernel's rms_norm forward --------------------------------------

LIGER = HERE / "interp_data" / "liger_rms_norm.py"


def test_liger_rms_norm_runs_under_tritondbg(capsys, tmp_path):
    pytest.importorskip("liger_kernel.ops.rms_norm")
    status, out, _ = execute(str(LIGER), capsys, tmp_path, case="all")
    assert status == 0, out
    assert out.count("PASS rms_norm") == 3


def test_liger_rms_norm_fails_under_plain_triton_interpret():
    pytest.importorskip("liger_kernel.ops.rms_norm")
    code = ("import os\nos.environ['TRITON_INTERPRET'] = '1'\nimport torch\n"
            "from liger_kernel.ops.rms_norm import rms_norm_forward\n"
            "rms_norm_forward(torch.randn(3, 64), torch.ones(64), 1e-6, 0.0, 'llama', False)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    assert "'float' object has no attribute 'to'" in p.stderr


def test_an_int32_multiply_that_wraps_on_purpose_is_not_an_error(capsys, tmp_path):
    """Asserts are checked with debug on; Triton's integer-overflow checks (which go through device_assert too)
    stay off, as on the GPU without TRITON_DEBUG: a hash that wraps failed as "int32 overflow detected"."""
    status, out, err = execute(f"{CASES}::int_wrap", capsys, tmp_path)
    assert status == 0, out + err
    assert "overflow" not in out + err


def test_a_dot_the_gpu_compiler_refuses_for_its_size_is_a_kernel_error(capsys, tmp_path):
    """A helper's report: tl.dot of fp16 blocks with K = 8 ran and passed under the interpreter (its builder waives
    the bounds: (1, 1, 1)), while the sm_90 compiler refuses it ("K >= 16"). K = 16 runs."""
    status, out, _ = execute(f"{CASES}::small_dot", capsys, tmp_path, case="k8")
    assert status == 1 and f"shim_cases.py:{mark(CASES, 'small_dot')}" in out and "K >= 16" in out, out
    status, out, _ = execute(f"{CASES}::small_dot", capsys, tmp_path, case="k16")
    assert status == 0 and "PASS small_dot" in out, out


def test_a_reduce_or_scan_with_the_kernels_own_combine_runs_on_blocks(capsys, tmp_path, monkeypatch):
    """tl.reduce / tl.associative_scan with a combine function of the kernel's (every reduction torch.compile
    writes): the interpreter called it once per element (a 37 x 256 max took 19 s); now once per tree level
    for a reduce and once per position for a scan, with the same values (argmax ties, NaN, the running max)."""
    from tritondbg.interp import reductions

    calls = []
    real = reductions._call
    monkeypatch.setattr(reductions, "_call", lambda *a: calls.append(1) or real(*a))
    status, out, _ = execute(f"{CASES}::custom_reduce", capsys, tmp_path)
    assert status == 0 and "PASS custom_reduce" in out, out
    # two reduces over 64 columns: 6 levels each; the scan: 63 steps (per element: 2 x 8 x 63 + 8 x 63)
    assert len(calls) == 6 + 6 + 63, len(calls)
    # a combine with a Python `if` on its values cannot take blocks: the interpreter's own path, the right max
    status, out, _ = execute(f"{CASES}::if_reduce", capsys, tmp_path)
    assert status == 0 and "PASS if_reduce" in out, out


def test_device_function_calls_patch_the_language_once_per_module_and_launch(capsys, tmp_path, monkeypatch):
    """tl.sum, tl.sigmoid and a helper of another module called in each of 10 programs: the interpreter patched
    the language again at every such call (inspect.getmembers of tl each time, ~10 ms: half of a small launch's
    time). Now once per module and launch (the kernel's, triton.language.standard's, the helper's, whose own
    libdevice name still runs); the launch's end restores tl as it was."""
    import triton.language as tl
    from triton.runtime import interpreter as I

    calls = []
    real = I._patch_builtin

    def counting(pkg, *a, **kw):
        if pkg is tl:
            calls.append(pkg)
        return real(pkg, *a, **kw)

    monkeypatch.setattr(I, "_patch_builtin", counting)
    before = tl.sum
    status, out, _ = execute(f"{CASES}::device_calls", capsys, tmp_path)
    assert status == 0 and "PASS device_calls" in out, out
    assert 1 <= len(calls) <= 3, len(calls)  # 10 programs x 3 device calls patched it 30 times
    assert tl.sum is before


def test_a_sweep_whose_configs_end_in_errors_does_not_say_they_disagree():
    """helper-54: every config of kernl's linear layer ended in the same kernel error, and the sweep said "10 of 10
    config runs disagree"."""
    from types import SimpleNamespace

    from rich.console import Console

    from tritondbg.render.console import print_sweep

    def fail(status):
        return {"kernel": "k", "config": "B=16", "case": "tiny", "dtype": "float32", "status": status, "message": "m"}

    for fails, said in (([fail("error"), dict(fail("error"), message="n")], "2 of 3 config runs failed: 2 ended in "
                                                                             "an error"),
                        # helper-155: every config failing with one finding is the kernel's, not a config's
                        ([fail("fail")] * 3, "3 of 3 config runs fail, all the same way (whatever the config: the "
                                             "kernel itself): m"),
                        ([fail("fail")] * 2, "2 of 3 config runs fail, all the same way: m"),
                        ([fail("fail"), fail("error")], "2 of 3 config runs failed: 1 disagree, 1 ended in an error"),
                        ([fail("fail")], "1 of 3 config runs disagree")):
        con = Console(record=True, width=300)
        print_sweep(con, SimpleNamespace(extra={"sweep": {"runs": 3, "failures": fails, "not_applicable": []}},
                                         results=[]))
        assert said in con.export_text(), con.export_text()
    # helper-77 (FlagGems' softmax backward): every config disagreed only through the sanitizers' undefined lanes,
    # each run's block said it matched with 0 there, the summary did not
    zero = [SimpleNamespace(passed=False, extra={"undefined_as_zero": {"out": {"passed": True}}, "sweep": {}})] * 2
    other = SimpleNamespace(passed=False, extra={"undefined_as_zero": {"out": {"passed": False}}, "sweep": {}})
    con = Console(record=True, width=300)
    print_sweep(con, SimpleNamespace(extra={"sweep": {"runs": 3, "failures": [fail("fail")] * 3,
                                                      "not_applicable": []}}, results=[*zero, other]))
    assert "2 of the runs below match the reference once the undefined lanes read 0" in con.export_text(), \
        con.export_text()


def test_outputs_nan_from_the_sanitizers_poison_say_so(capsys, tmp_path):
    """helper-64: "2944/2944 mismatched ... got nan" read as a kernel broken everywhere, when the NaN were the
    sanitizers' own, in lanes a finding names (an out-of-bounds read, a masked load without other=)."""
    status, out, _ = execute(f"{ZOO / 'undefined_lanes.py'}::buggy", capsys, tmp_path, dtype="float32")
    assert status == 1 and "NaN/Inf where the reference is finite (the sanitizers' NaN: lanes the finding(s) below" \
        in out, out


def test_a_grid_given_as_a_list_runs_as_compiled(capsys, tmp_path):
    status, out, _ = execute(f"{HERE / 'interp_data' / 'list_grid.py'}::s", capsys, tmp_path, case="fn,list")
    assert status == 0 and out.count("PASS s") == 2, out
