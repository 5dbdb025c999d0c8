"""`ir --out DIR` takes a folder as `interpret --out DIR` does, and keeps a failed compile's log there; `interpret
--all-configs` runs a scenario without an autotuned kernel once, saying so, as `ir --all-configs` does (helper-87)."""
import json

from conftest import REPO, run_cli

DATA = REPO / "tests" / "check_data"


def test_ir_out_takes_an_existing_folder_and_writes_inside_it(cli_env, tmp_path):
    out = tmp_path / "ir"
    out.mkdir()
    p = run_cli(["ir", "add", "--out", str(out)], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    ptx = out / "add_kernel-tiny-float32.ptx"
    assert ptx.is_file() and ".entry add_kernel" in ptx.read_text(), list(out.iterdir())
    assert f"wrote {ptx}" in p.stderr and p.stdout == ""
    p = run_cli(["ir", "add", "--all-configs", "--stage", "ttir", "--out", str(out)], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert len(list(out.glob("add_kernel-tiny-float32-BLOCK=*.ttir"))) == 3, sorted(f.name for f in out.iterdir())
    p = run_cli(["ir", "add", "--json", "--out", str(tmp_path / "new") + "/"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads((tmp_path / "new" / "add-stats.json").read_text())[0]["kernel"] == "add_kernel"
    p = run_cli(["ir", "add", "--out", str(tmp_path / "one.ptx")], cli_env, cwd=tmp_path)  # a file, as before
    assert p.returncode == 0 and (tmp_path / "one.ptx").is_file(), p.stderr[-2000:]


def test_ir_out_dir_keeps_a_failed_compiles_log(cli_env, tmp_path):
    out = tmp_path / "ir"
    out.mkdir()
    p = run_cli(["ir", str(DATA / "no_compile.py"), "--out", str(out)], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-2000:]
    logs = list(out.glob("tritondbg-compile-neg_block-*.log"))
    assert len(logs) == 1 and f"(full log: {logs[0]})" in p.stderr, (p.stderr, list(out.iterdir()))


def test_interpret_all_configs_runs_a_kernel_without_autotune_configs_once(cli_env, tmp_path):
    """It exited 2 ("launches no autotuned kernel") where `ir --all-configs` took the same scenario."""
    target = f"{DATA / 'crash.py'}::fine"
    p = run_cli(["interpret", target, "--all-configs"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    notes = [ln for ln in p.stderr.splitlines() if ln.startswith("note: --all-configs")]
    assert notes == ["note: --all-configs: fine launches no autotuned kernel (add_one has no autotune configs): its "
                     "one config, run as without --all-configs"], p.stderr
    assert "PASS fine case=tiny dtype=float32" in p.stdout and "1/1 passed" in p.stdout, p.stdout
    p = run_cli(["ir", target, "--all-configs", "--stats"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "launches no autotuned kernel" in p.stderr, p.stderr[-2000:]


_LAZY = '''
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


def launch(x):
    from h87_plain import double  # imported when the launch runs: what it holds is not known before

    y = torch.empty_like(x)
    double[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(100, generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() * 2


lazy = Scenario("lazy", make_inputs, launch, reference, [Case("tiny")])
'''

_PLAIN = '''
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''


def test_interpret_all_configs_finds_no_autotuned_kernel_by_running_and_still_runs_it(cli_env, tmp_path):
    """A wrapper that imports its kernel when it runs: the sweep runs the case to look, finds no autotuned kernel,
    and the one config runs (it exited 2)."""
    (tmp_path / "lazy_cases.py").write_text(_LAZY)
    (tmp_path / "h87_plain.py").write_text(_PLAIN)
    p = run_cli(["interpret", str(tmp_path / "lazy_cases.py"), "--all-configs"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "note: --all-configs: lazy launches no autotuned kernel: its one config, run as without --all-configs" \
        in p.stderr, p.stderr
    assert "1/1 passed" in p.stdout, p.stdout
