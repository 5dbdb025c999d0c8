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
    again = run_cli(["ir", str(DATA / "no_compile.py"), "--out", str(out), "--no-index"], cli_env, cwd=tmp_path)
    # the same failure again is the same file (each rerun of a failing CI job left one more log)
    assert again.returncode == 1 and list(out.glob("tritondbg-compile-*")) == logs, list(out.iterdir())
    assert f"(full log: {logs[0]})" in again.stderr and "neg_block" in logs[0].read_text()


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


def test_interpret_all_configs_takes_nothing_to_sweep_by_its_type_not_its_words(monkeypatch, capsys, tmp_path):
    """The sweep's "no autotuned kernel" is a ``discover.NoAutotunedKernel``: reworded, the one config still runs
    (execute.py matched the message's words); another usage error of the sweep (a --case typo) still ends the run."""
    import pytest

    from tritondbg import configs
    from tritondbg.commands.execute import execute
    from tritondbg.discover import NoAutotunedKernel
    from tritondbg.errors import UsageError
    from tritondbg.interp import sweep

    target = f"{DATA / 'crash.py'}::fine"
    monkeypatch.setattr(configs, "nothing_to_sweep", lambda scenario: None)  # as for a wrapper that imports lazily

    def reworded(*a, **kw):
        raise NoAutotunedKernel("nothing here for a sweep, in other words")

    monkeypatch.setattr(sweep, "run_all_configs", reworded)
    assert execute(target, mode="interpret", all_configs=True, out_dir=str(tmp_path)) == 0
    out = capsys.readouterr()
    assert "note: --all-configs: fine launches no autotuned kernel: its one config, run as without --all-configs" \
        in out.err and "1/1 passed" in out.out, (out.out, out.err)

    def other(*a, **kw):
        raise UsageError("--case nope: no such case")

    monkeypatch.setattr(sweep, "run_all_configs", other)
    with pytest.raises(UsageError, match="no such case"):
        execute(target, mode="interpret", all_configs=True, out_dir=str(tmp_path))
    assert "note: --all-configs" not in capsys.readouterr().err


def test_nothing_to_sweep_is_said_before_any_case_runs():
    """The one rule of the all-configs gate's skip and `interpret --all-configs`'s one-config run (configs.py)."""
    from tritondbg import loader
    from tritondbg.configs import nothing_to_sweep

    assert nothing_to_sweep(loader.load(f"{DATA / 'crash.py'}::fine")) == "add_one has no autotune configs"
    assert nothing_to_sweep(loader.load(f"{DATA / 'hang.py'}::loop")) == "spin has no autotune configs"
    assert nothing_to_sweep(loader.load(f"{DATA / 'pruned.py'}::pruned")) is None  # an autotuned kernel: a sweep


def test_a_failed_compiles_log_is_written_where_logs_in_says(tmp_path):
    """`ir --out DIR` / `check --out DIR` write the log in DIR at once (it was written to the temporary folder, then
    moved by parsing its path back out of the error line); elsewhere, or where DIR cannot take it, the temporary
    folder."""
    import os
    import tempfile

    from tritondbg.ir import capture

    with capture.logs_in(str(tmp_path / "new" / "dir")):
        there = capture._write_log("k", "compiling k\n")
    assert os.path.dirname(there) == str(tmp_path / "new" / "dir"), there
    assert open(there).read() == "compiling k\n"
    (tmp_path / "afile").write_text("")
    for folder in (None, str(tmp_path / "afile")):  # nothing asked, or a folder that cannot be made: the temp one
        with capture.logs_in(folder):
            path = capture._write_log("k", "x")
        assert os.path.dirname(path) == tempfile.gettempdir(), path
        os.remove(path)
    assert capture._log_dir is None
