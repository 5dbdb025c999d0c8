"""The stepper through the CLI: --trace (console and the JSON step log), --watch, --break with pdb on stdin."""
import json
from pathlib import Path

import pytest

from conftest import DATA, run_cli

pytestmark = pytest.mark.interpreter

AXPY = str(DATA / "user_kernels" / "my_cases.py") + "::axpy"
KERNEL_FILE = DATA / "user_kernels" / "my_kernels.py"
LOOP = str(Path(__file__).parent / "zoo" / "config_bug.py") + "::twin"


def line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def record_path(env) -> Path:
    """The run record the CLI saved under TRITONDBG_OUT."""
    (path,) = Path(env["TRITONDBG_OUT"]).glob("*/tritondbg/record.json")
    return path


def record_of(env) -> dict:
    return json.loads(record_path(env).read_text())


def test_trace_prints_each_line_and_writes_the_step_log(cli_env):
    # axpy's tiny case: n=1000, BLOCK=128, so pid 7 is the tail program (offsets 896..1023, 104 live)
    p = run_cli(["interpret", AXPY, "--dtype", "float32", "--pid", "7", "--trace"], cli_env)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "trace axpy_kernel (1st launch) pid (7, 0, 0)" in out
    assert "offs = int32[128]  min 896 max 1023" in out
    assert "mask = int1[128]  104 of 128 true" in out
    assert "masked lanes: 24 undefined" in out  # the loads without other=: poisoned, not counted in min/max
    rec = record_of(cli_env)
    res = rec["results"][0]
    log_path = Path(res["extra"]["step_log"])
    assert log_path.parent == record_path(cli_env).parent  # beside the run record
    log = json.loads(log_path.read_text())
    assert log["pid"] == [7, 0, 0]
    lines = [s["line"] for s in log["steps"] if s["event"] == "line"]
    assert lines == [line_of(KERNEL_FILE, "offs = tl.program_id"), line_of(KERNEL_FILE, "mask = offs < n"),
                     line_of(KERNEL_FILE, "x = tl.load"), line_of(KERNEL_FILE, "y = tl.load"),
                     line_of(KERNEL_FILE, "tl.store(out_ptr")]
    offs = next(s for s in log["steps"] if "offs" in s["values"])["values"]["offs"]
    assert (offs["min"], offs["max"], offs["values"][:2]) == (896, 1023, [896, 897])


def test_trace_shows_each_loop_iteration(cli_env):
    # rowsum twin: N=192, BLOCK=64 pinned -> the loop body runs 3 times in every program
    p = run_cli(["interpret", LOOP, "--pid", "2", "--trace", "--watch", "tl.sum(acc, 0)"], cli_env)
    assert p.returncode == 0, p.stdout + p.stderr
    body = line_of(Path(LOOP.split("::")[0]), "acc += tl.load(x_ptr + row * N + start + cols, mask")
    log = json.loads(Path(record_of(cli_env)["results"][0]["extra"]["step_log"]).read_text())
    hits = [s["hit"] for s in log["steps"] if s["event"] == "line" and s["line"] == body]
    assert hits == [1, 2, 3]
    assert f"{body:>4} (iter 3)" in p.stdout
    sums = [s["watch"]["tl.sum(acc, 0)"] for s in log["steps"] if s["event"] == "line" and s["line"] == body]
    assert all(w["kind"] == "scalar" for w in sums)
    assert len({w["value"] for w in sums}) == 3  # the running row sum changes every iteration
    start = [s["values"]["start"]["value"] for s in log["steps"] if "start" in s.get("values", {})]
    assert start == [0, 64, 128]
    # lines before `acc` exists: the watch is "undefined" in the log and not printed (it printed a NameError)
    first = next(s for s in log["steps"] if s["event"] == "line")
    assert first["watch"]["tl.sum(acc, 0)"] == {"kind": "undefined"} and "NameError" not in p.stdout
    assert "never defined" not in p.stdout  # acc exists later


def test_a_watch_whose_name_never_exists_says_so_once(cli_env):
    """A --watch on a name the kernel never has (a typo) printed nothing at all; one note names it, and like a
    --pid outside the grid it is bad usage (exit 2: it exited 0), while the other watch still showed its values."""
    p = run_cli(["interpret", LOOP, "--pid", "2", "--watch", "acc_typo + 1", "--watch", "tl.sum(acc, 0)"], cli_env)
    assert p.returncode == 2, p.stdout + p.stderr
    notes = [ln for ln in p.stdout.splitlines() if "never defined" in ln]
    assert len(notes) == 1 and "'acc_typo + 1'" in notes[0] and "tl.sum(acc, 0)" not in notes[0], p.stdout
    errors = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "--watch 'acc_typo + 1': a name in it was never defined" in errors[0], p.stderr
    assert "tl.sum(acc, 0) = " in p.stdout or "tl.sum(acc, 0):" in p.stdout, p.stdout[-2000:]


def test_a_watch_that_fails_at_every_line_is_one_usage_line(cli_env):
    """`--watch "1/0"` printed its ZeroDivisionError at every traced line and exited 0; indexing a block
    (`acc[0]`, as in numpy) did the same with no hint. Now: exit 2, one line with the error (and the hint)."""
    p = run_cli(["interpret", LOOP, "--pid", "2", "--watch", "acc[0]"], cli_env)
    assert p.returncode == 2, p.stdout + p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "--watch 'acc[0]': it failed at every traced line of pid (2, 0, 0)" in errors[0]
    assert "takes no indexing" in errors[0], errors


def test_break_opens_pdb_with_block_helpers(cli_env):
    line = line_of(KERNEL_FILE, "y = tl.load")
    commands = "pid\nshow offs\nsummary mask\nptr x_ptr + offs\nn\nshow y\nc\n"
    p = run_cli(["interpret", AXPY, "--dtype", "float32", "--pid", "7", "--break", str(line)], cli_env,
                input=commands)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert f"my_kernels.py({line})axpy_kernel()" in out
    assert "pid (7, 0, 0), grid (8, 1, 1)" in out
    assert "[ 896  897  898" in out and "1023]" in out            # `show offs`: the block as an array
    assert "mask: int1[128]  104 of 128 true" in out
    assert "x_ptr + offs: x_ptr[896] .." in out                 # pointer lanes named by tensor and index
    assert f"my_kernels.py({line + 1})axpy_kernel()" in out     # `n` stopped at the next kernel line
    assert "y: fp32[128]" in out and "PASS axpy" in out


def test_break_quit_stops_the_kernel(cli_env):
    line = line_of(KERNEL_FILE, "x = tl.load")
    p = run_cli(["interpret", AXPY, "--dtype", "float32", "--break", str(line)], cli_env, input="q\n")
    assert p.returncode == 1
    assert f"stopped in the debugger at line {line}" in p.stdout


@pytest.mark.parametrize("kwargs, needle", [
    (dict(breaks=("3",)), "--break 3 is not a line of a @triton.jit function of this scenario"),
    (dict(breaks=("x",)), "bad --break 'x'"),
    (dict(pid="a,b"), "bad --pid 'a,b'"),
    (dict(pid="99", trace=True), "--pid 99: pid (99, 0, 0) is outside every launch's grid (axpy_kernel grid (8, 1, 1))"),
])
def test_bad_stepper_usage_is_a_usage_error(kwargs, needle, tmp_path, capsys):
    # in-process (the CLI turns UsageError into one line and exit 2: test_cli.py checks that path)
    from tritondbg.commands.execute import execute
    from tritondbg.errors import UsageError

    with pytest.raises(UsageError) as err:
        execute(AXPY, mode="interpret", dtype="float32", out_dir=str(tmp_path), **kwargs)
    assert needle in str(err.value)


def test_a_dtype_value_in_the_step_log_reads_as_its_name():
    """`X_row_dtype = X_row.dtype` showed as "<dtype>" in `--trace` (a stranger's find)."""
    import triton.language as tl

    from tritondbg.interp import values

    assert values.text(values.summarize(tl.bfloat16)) == "bf16"
    assert values.text(values.summarize(tl.pointer_type(tl.float16))) == "pointer<fp16>"
    assert values.text(values.summarize(object())) == "<object>"  # anything else: its type, as before


def test_a_breakpoint_on_a_line_with_no_statement_says_so(tmp_path, capsys):
    """helper-47: `--break rms_layernorm.py:57` on a blank line inside the kernel said only "breakpoint(s) never
    reached": it is never reached whatever the program does, and the note says why."""
    import textwrap

    from tritondbg.commands.execute import execute

    (tmp_path / "k_nobreak.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def twice_nobreak(x_ptr, y_ptr, n, B: tl.constexpr):
            o = tl.arange(0, B)
            x = tl.load(x_ptr + o, mask=o < n)

            # a comment
            tl.store(y_ptr + o, x * 2, mask=o < n)

        def launch(x):
            y = torch.empty_like(x)
            twice_nobreak[(1,)](x, y, x.numel(), B=16)
            return y

        s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(10)), launch, lambda x: 2 * x,
                     [Case("tiny", dtypes=("float32",))], kernels=[twice_nobreak])
    '''))
    execute(str(tmp_path / "k_nobreak.py"), mode="interpret", out_dir=str(tmp_path), breaks=("k_nobreak.py:9", "10"))
    out = capsys.readouterr().out
    assert "breakpoint(s) never reached by pid (0, 0, 0): k_nobreak.py:9 (that line of k_nobreak.py holds no statement" in out, out
    assert "10 (that line of k_nobreak.py holds no statement" in out, out


def test_trace_tells_lanes_the_sanitizer_masked_off_as_out_of_bounds(cli_env):
    """helper-136: --trace said "masked lanes: N undefined" for the lanes of an unmasked load past the end, which
    the sanitizer masked off (an out_of_bounds finding), as if a mask without other= had left them."""
    p = run_cli(["interpret", str(Path(__file__).parent / "zoo" / "missing_mask.py") + "::buggy", "--pid", "3",
                 "--trace"], cli_env)
    assert p.returncode == 1 and "out_of_bounds" in p.stdout + p.stderr, p.stdout + p.stderr
    x = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith("x = fp32[256]"))
    assert "masked lanes: 24 out of bounds" in x and "undefined" not in x, x
