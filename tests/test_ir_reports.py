"""`tritondbg ir` reporting what went wrong (helper-131): --json on a failed compile, an error in the scenario's own
code, Ctrl-C during --all-configs, several cases, the program form it does not have, shared-memory limits."""
import json
import os
import sys
from pathlib import Path

from conftest import TWICE, run_cli

from tritondbg.ir.item import IRItem


def _item(tmp_path: Path, target: dict, shared: int) -> IRItem:
    meta = tmp_path / "k.json"
    meta.write_text(json.dumps({"target": target, "shared": shared, "num_warps": 4, "num_stages": 2}))
    return IRItem(scenario="s", case="tiny", dtype="float32", arch=str(target["arch"]), arch_source="--arch",
                  kernel="k", kernel_file="k.py", config={}, config_source="", grid=[1, 1, 1], specialization=[],
                  entry=str(tmp_path), files={}, metadata_file=str(meta), name="k")


def test_shared_memory_limit_of_rdna_volta_and_turing(tmp_path):
    """helper-131: gfx1100 / gfx1200 (64 KiB of LDS per workgroup, as Triton's AMD backend counts), sm_70 (96 KiB)
    and sm_75 (64 KiB) had no limit, so a kernel over it was never flagged."""
    from tritondbg.ir.stats import compute

    for target, limit in [({"backend": "hip", "arch": "gfx1100", "warp_size": 32}, 65536),
                          ({"backend": "hip", "arch": "gfx1200", "warp_size": 32}, 65536),
                          ({"backend": "hip", "arch": "gfx950", "warp_size": 64}, 163840)]:
        out = compute(_item(tmp_path, target, 70000), mix=False)
        assert out["shared_limit"] == limit and out["shared_fits"] is (70000 <= limit), (target, out)
    from tritondbg.ir.stats import shared_limit

    assert shared_limit(70) == 98304 and shared_limit(75) == 65536 and shared_limit(90) == 232448


def test_ir_has_no_program_form_and_says_what_to_run(tmp_path):
    """helper-131: `ir -- python prog.py` said "/usr/bin/python is not a Python file"."""
    env = {**os.environ, "TRITONDBG_OUT": str(tmp_path / "out")}
    p = run_cli(["ir", "--arch", "sm_80", "--", sys.executable, "prog.py", "--steps", "1"], env, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p
    assert p.stderr.splitlines() == [
        f"error: `tritondbg ir` has no program form: run `tritondbg capture -- {sys.executable} prog.py --steps 1`, "
        "then `tritondbg ir traces/capture-<time>/KERNEL_0.py` (a reproducer it wrote)"], p.stderr
    p = run_cli(["ir", "--", "missing.py"], env, cwd=tmp_path)   # one scenario file after --: the KERNEL argument
    assert p.returncode == 2 and p.stderr.strip() == "error: no such scenario file: missing.py", p.stderr


TYPO = TWICE + '''def make_inputs(case, dtype, device, generator):
    n = case.params["t"]
    return dict(x=torch.randn(n, generator=generator).to(device=device, dtype=dtype))


typo = Scenario(name="typo", description="a typo in make_inputs", make_inputs=make_inputs, launch=launch,
                reference=lambda x: 2 * x, kernels=[twice], cases=[Case("tiny", params=dict(n=8), dtypes=("float32",))])
'''


def test_an_error_in_make_inputs_is_said_as_check_says_it(tmp_path):
    """helper-131: a typo in make_inputs read "error: KeyError: 't' (set TRITONDBG_DEBUG=1 for the traceback)" under
    `ir`, like a bug of the tool; `check` named the callable and the line. Both say it through runner.build_inputs."""
    from tritondbg import runner

    path = tmp_path / "typo_param.py"
    path.write_text(TYPO)
    said = (f"make_inputs `make_inputs` ({path}:19) raised KeyError: 't' at {path}:20")
    record = runner.run(f"{path}::typo", mode="interpret")   # what check's correctness gate reports
    assert [r.message for r in record.results] == [said], [r.message for r in record.results]
    env = {**os.environ, "TRITONDBG_OUT": str(tmp_path / "out"), "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TRITON_INTERPRET", None)
    p = run_cli(["ir", str(path), "--arch", "sm_80"], env, cwd=tmp_path)
    assert p.returncode == 1 and p.stdout == "", p
    assert p.stderr.splitlines() == [f"error: tiny/float32: {said}"], p.stderr


TUNED = '''
import torch
import triton
import triton.language as tl
from tritondbg import Case, Scenario


@triton.autotune(configs=[triton.Config({"B": 16}), triton.Config({"B": 32}), triton.Config({"B": 64})], key=["n"])
@triton.jit
def twice(x_ptr, y_ptr, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


def launch(x):
    y = torch.empty_like(x)
    twice[lambda m: (triton.cdiv(x.numel(), m["B"]),)](x, y, x.numel())
    return y


mk = lambda case, dtype, device, generator: dict(x=torch.randn(case.params["n"], generator=generator).to(device))
tuned = Scenario(name="tuned", description="three configs", make_inputs=mk, launch=launch, reference=lambda x: 2 * x,
                 kernels=[twice], cases=[Case("tiny", params=dict(n=100), dtypes=("float32",)),
                                         Case("odd", params=dict(n=77), dtypes=("float32",)),
                                         Case("big", params=dict(n=4096), dtypes=("float32",), interpret=False)])
'''

# `tritondbg ir ARGS` with a Ctrl-C (KeyboardInterrupt) raised by the Nth capture of the launch wrapper: 1 is the
# decided launch, 2 the --all-configs probe of the configs, 3.. one per config
CTRL_C_AT = '''
import sys
import tritondbg.ir.capture as cap

real, calls = cap.capture, [0]


def capture(*args, **kwargs):
    calls[0] += 1
    if calls[0] == int(sys.argv[1]):
        raise KeyboardInterrupt
    return real(*args, **kwargs)


cap.capture = capture
from tritondbg.cli import main
main(sys.argv[2:])
'''


def _ir_env(tmp_path: Path) -> dict:
    env = {**os.environ, "TRITONDBG_OUT": str(tmp_path / "out"), "TRITON_CACHE_DIR": str(tmp_path / "cache"),
           "TRITONDBG_SAVE": "0", "TMPDIR": str(tmp_path)}   # (a failed compile's log goes to TMPDIR)
    env.pop("TRITON_INTERPRET", None)
    return env


def _ctrl_c_at(n: int, args: list[str], tmp_path: Path):
    import subprocess

    (tmp_path / "ctrl_c.py").write_text(CTRL_C_AT)
    return subprocess.run([sys.executable, str(tmp_path / "ctrl_c.py"), str(n), "ir", *args], env=_ir_env(tmp_path),
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_ctrl_c_during_all_configs_prints_the_configs_that_finished(tmp_path):
    """helper-131: a Ctrl-C during `ir --all-configs --stats` exited 130 with nothing on stdout though 3 of 9
    configs had compiled. Now the finished ones are printed (table / JSON), the others marked interrupted, exit 130
    kept, and nothing goes into the request index (the next call compiles the rest)."""
    (tmp_path / "tuned.py").write_text(TUNED)
    p = _ctrl_c_at(4, ["tuned.py", "--arch", "sm_80", "--all-configs", "--json"], tmp_path)
    assert p.returncode == 130, p.stderr[-3000:]
    rows = json.loads(p.stdout)
    assert [(r["config"]["B"], r["status"]) for r in rows] == [(16, "ok"), (32, "interrupted"), (64, "interrupted")]
    assert rows[0]["n_regs"] and rows[1]["config_source"] == "--all-configs: config 2 of 3 (interrupted: not compiled)"
    assert "interrupted (SIGINT): 1 compile(s) finished and shown, 2 not compiled" in p.stderr, p.stderr[-2000:]
    p = _ctrl_c_at(4, ["tuned.py", "--arch", "sm_80", "--all-configs", "--stats"], tmp_path)   # the table
    assert p.returncode == 130 and "registers / thread" in p.stdout, p.stderr[-3000:]
    assert ("note: twice [B=32,num_warps=4,num_stages=3]: --all-configs: config 2 of 3 (interrupted: not compiled)"
            in p.stderr), p.stderr
    # with several cases (5 captures each): the first case's configs, the second's first, the third not reached
    p = _ctrl_c_at(9, ["tuned.py", "--arch", "sm_80", "--all-configs", "--case", "all", "--json"], tmp_path)
    assert p.returncode == 130, p.stderr[-3000:]
    got = [(r["case"], r["kernel"], r["status"]) for r in json.loads(p.stdout)]
    assert got == [("tiny", "twice", "ok")] * 3 + [("odd", "twice", "ok"), ("odd", "twice", "interrupted"),
                                                   ("odd", "twice", "interrupted"), ("big", None, "interrupted")], got
    # before anything compiled: still a JSON document, the request marked interrupted
    p = _ctrl_c_at(1, ["tuned.py", "--arch", "sm_80", "--json"], tmp_path)
    assert p.returncode == 130 and p.stderr.splitlines()[-1] == "interrupted (SIGINT): 0 compile(s) finished and " \
        "shown, 1 not compiled (marked interrupted)", p.stderr[-2000:]
    assert [(r["case"], r["status"]) for r in json.loads(p.stdout)] == [("tiny", "interrupted")]


BAD = '''
import torch
import triton
import triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def bad_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.arange(0, BLOCK // 2)          # shape mismatch
    tl.store(out_ptr + offs, x + y, mask=offs < n)


def launch(x):
    out = torch.empty_like(x)
    bad_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


mk = lambda case, dtype, device, generator: dict(x=torch.randn(1000, generator=generator).to(device=device))
bad = Scenario(name="bad_type", description="x", make_inputs=mk, launch=launch, reference=lambda x: x.float() * 2,
               kernels=[bad_kernel], cases=[Case("tiny", dtypes=("float32",))])
'''


def test_json_of_a_failed_compile_is_a_json_document_with_the_error(tmp_path):
    """helper-131: `ir cases.py --json` on a kernel that does not compile printed nothing on stdout (exit 1): a CI
    script parsing it got a decode error. Now one row saying what was asked, status error and the error line, as
    `interpret --json` reports a case that failed; the exit status stays 1. --out FILE gets the same document."""
    (tmp_path / "cases_type.py").write_text(BAD)
    env = _ir_env(tmp_path)
    p = run_cli(["ir", "cases_type.py", "--arch", "sm_80", "--json"], env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-2000:]
    (row,) = json.loads(p.stdout)
    assert row["status"] == "error" and row["arch"] == "sm_80" and row["scenario"] == "cases_type.py", row
    assert row["message"].startswith("compiling bad_kernel for sm_80 failed: ") and "cases_type.py:13:" in \
        row["message"], row
    assert p.stderr.splitlines()[-1] == f"error: {row['message']}", p.stderr
    p = run_cli(["ir", "cases_type.py", "--arch", "sm_80", "--json", "--out", "rows.json"], env, cwd=tmp_path)
    assert p.returncode == 1 and p.stdout == "", p.stderr[-2000:]
    assert json.loads((tmp_path / "rows.json").read_text())[0]["status"] == "error"


def test_several_cases_are_compiled_each_in_turn(tmp_path):
    """helper-131: the README says --case lists and globs work as in profile and check, but `ir --case tiny,odd`
    was refused ("compiles one case at a time") and the unknown-case error offered `all`, then refused it."""
    (tmp_path / "tuned.py").write_text(TUNED)
    env = _ir_env(tmp_path)
    p = run_cli(["ir", "tuned.py", "--arch", "sm_80", "--case", "all", "--json"], env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert [(r["case"], r["dtype"], r["status"]) for r in json.loads(p.stdout)] == [
        ("tiny", "float32", "ok"), ("odd", "float32", "ok"), ("big", "float32", "ok")]
    p = run_cli(["ir", "tuned.py", "--arch", "sm_80", "--case", "o*,tiny", "--stage", "ttir"], env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    heads = [ln for ln in p.stdout.splitlines() if ln.startswith("// ==== twice")]
    assert [h.split("case=")[1].split(",")[0] for h in heads] == ["odd", "tiny"], heads
    p = run_cli(["ir", "tuned.py", "--arch", "sm_80", "--case", "nope"], env, cwd=tmp_path)
    assert p.returncode == 2 and "unknown case 'nope' for tuned; choose from: tiny, odd, big, all" in p.stderr
    p = run_cli(["ir", "tuned.py", "--arch", "sm_80", "--case", "all", "--diff", "arch=sm_80", "arch=sm_90"], env,
                cwd=tmp_path)
    assert p.returncode == 2 and "--diff compares one case and dtype per side" in p.stderr, p.stderr[-2000:]


HOST_PICKS = '''
import torch, triton, triton.language as tl

@triton.jit
def scale(x_ptr, y_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if FP8:  # what the host chose for an sm_90 (fp8e4nv does not compile for sm_80)
        x = x.to(tl.float8e4nv).to(tl.float32)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)

x = torch.randn(100, device="cuda")
y = torch.empty_like(x)
scale[(1,)](x, y, 100, FP8=torch.cuda.get_device_capability()[0] >= 9, BLOCK=128)
'''


def test_a_reproducer_compiled_for_another_gpu_than_it_was_captured_for_names_the_recapture(tmp_path):
    """helper-135: lmdeploy's host code chose USE_PDL=True for the sm_90 it was captured on; `ir REPRO --arch sm_80`
    failed in ptxas with nothing saying the constexprs were the capture's GPU's. The error now says so, and how to
    capture for the other one."""
    (tmp_path / "prog.py").write_text(HOST_PICKS)
    env = _ir_env(tmp_path)
    p = run_cli(["capture", "--out", str(tmp_path / "cap"), "--", sys.executable, "prog.py"], env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    repro = str(tmp_path / "cap" / "scale_0.py")
    p = run_cli(["ir", repro, "--arch", "sm_80", "--stage", "ttgir"], env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-2000:]
    assert p.stderr.rstrip().endswith(
        "; this reproducer was captured for sm_90, with the constexprs and configs the program's host code chose for "
        "that GPU: for sm_80, capture again with `tritondbg capture --arch sm_80 -- CMD`"), p.stderr[-2000:]
    assert run_cli(["ir", repro, "--arch", "sm_90", "--stage", "ttgir"], env, cwd=tmp_path).returncode == 0
