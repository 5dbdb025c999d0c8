"""Every bad input of tests/bad_inputs.md: one line on stderr, no traceback, the exit status it documents.

In-process through ``tritondbg.cli.main`` (a subprocess costs ~5 s of torch import each): all of these fail
before any kernel runs, except ``--pid 99 --trace`` (the grid is known once the kernel launched) and pdb's
``q``. ``ir`` inputs that need the scenario compiled (compiled mode needs its own process) are in test_ir.py.
"""
import io
import json
import os
import sys
from pathlib import Path

import pytest

from tritondbg.cli import main

FAKE_KEY = "A" * 52
# the program of the program form (`-- python prog.py`): it says it ran, and with what, in the file `ran` beside it
PROG = "import json, pathlib, sys\n(pathlib.Path(__file__).parent / 'ran').write_text(json.dumps(sys.argv[1:]))\n"
PY = sys.executable
PROGRAM = ["--", "{py}", "{tmp}/prog.py"]   # the program form's `-- CMD` in ROWS


@pytest.fixture
def bad(tmp_path):
    """A folder of bad scenario files and a fake cache folder (key-named folders holding user files)."""
    files = {"syn.py": "def f(:\n    pass\n", "cases.txt": "not python\n", "empty.py": "",
             "noscen.py": "x = 1\n", "imp.py": "import nonexistent_module_xyz\nfrom tritondbg import Scenario\n",
             # an error raised inside a library (torch) by the user's helper: the helper's line, not torch's
             "libhelper.py": "import torch\ndt = getattr(torch, 'no_such_dtype')\n", "implib.py": "import libhelper\nfrom tritondbg import Scenario\n", "afile": "a file\n",
             "prog.py": PROG, "prog_words.py": "# a program, not a scenario file\n" + PROG,
             # a library's kernel file (flash-attn's rotary.py): kernels, no launch (helper-123)
             "kern.py": "import triton\nimport triton.language as tl\n\n\n@triton.autotune([], key=[])\n@triton.jit\n"
                        "def rot(x_ptr, N: tl.constexpr):\n    pass\n",
             # a jit helper first, then the kernel calling it: the reproducer offered is the kernel's (helper-144)
             "kern_helper.py": "import triton\n\n\n@triton.jit\ndef dim(x):\n    return x\n\n\n@triton.jit\n"
                               "def outer(x_ptr):\n    dim(x_ptr)\n",
             # a program whose launch is an assignment inside a with: a program, not a library (helper-125)
             "kern_prog.py": "import torch, triton\n\n\n@triton.jit\ndef rot(x_ptr):\n    pass\n\n\n"
                             "with torch.no_grad():\n    out = rot[(1,)](torch.zeros(1))\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "fake" / FAKE_KEY).mkdir(parents=True)
    (tmp_path / "fake" / FAKE_KEY / "notes.txt").write_text("mine")
    (tmp_path / "cache").mkdir()
    return tmp_path


def invoke(args, env, monkeypatch, capsys, stdin=None):
    """(exit status, stdout, stderr) of `tritondbg ARGS` run in this process."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = 0
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str):   # as the interpreter does for sys.exit("message")
            print(code, file=sys.stderr)
            code = 1
    out, err = capsys.readouterr()
    return code, out, err


def _amd_checked() -> bool:
    from triton._C.libtriton import amd

    return hasattr(amd, "get_target_triple")


# (args, extra env, exit status, what the one line says); {tmp} is the fixture's folder, {py} this Python
ROWS = [
    (["interpret", "{tmp}/cases.txt"], {}, 2, "cases.txt is not a Python file"),
    # a file named '-' was written in the current folder; the same path for both: the JUnit replaced the JSON
    (["check", "add", "--gates", "resources", "--json", "-"], {}, 2, "--json -: standard output carries"),
    (["check", "add", "--json", "{tmp}/x", "--junit", "{tmp}/x"], {}, 2, "are the same file"),
    (["interpret", "{tmp}/syn.py"], {}, 2, "syn.py:1: SyntaxError: invalid syntax"),
    (["ir", "{tmp}/syn.py"], {}, 2, "syn.py:1: SyntaxError: invalid syntax"),
    (["interpret", "{tmp}/empty.py"], {}, 2, "empty.py: not imported, its text names no Scenario"),
    (["interpret", "{tmp}/noscen.py"], {}, 2, "noscen.py: not imported, its text names no Scenario"),
    # a program given as KERNEL: refused before it runs (it ran whole, then "defines no Scenario")
    (["interpret", "{tmp}/prog.py"], {}, 2, "prog.py: not imported, its text names no Scenario (a program imported "
                                            "would run whole); a program that launches kernels runs as one: "
                                            "tritondbg interpret -- python {tmp}/prog.py (`tritondbg capture"),
    (["check", "{tmp}/prog.py"], {}, 2, "not imported, its text names no Scenario"),
    (["ir", "{tmp}/kern.py::rot", "--stage", "ptx"], {}, 2, "kern.py::rot: a file of @triton.jit kernels (rot), not a "
                                                         "Scenario: a kernel needs its launch (arguments, grid)"),
    (["interpret", "{tmp}/kern.py"], {}, 2, "`tritondbg ir CAPTURE/rot_0.py --stage ptx`"),
    (["ir", "{tmp}/kern_helper.py"], {}, 2, "(dim, outer), not a Scenario: a kernel needs its launch (arguments, "
                                            "grid) from the code that calls it: `tritondbg capture -- python PROG.py` "
                                            "over a program that calls it saves each launch as a reproducer for ir / "
                                            "interpret / check (`tritondbg ir CAPTURE/outer_0.py --stage ptx`)"),
    (["interpret", "{tmp}/kern_prog.py::rot"], {}, 2, "kern_prog.py: not imported, its text names no Scenario"),
    # helper-88: the word in a comment let it through, and it ran whole (ir: "asked Triton's driver")
    (["interpret", "{tmp}/prog_words.py"], {}, 2, "not imported, its text names no Scenario"),
    (["ir", "{tmp}/prog_words.py"], {}, 2, "`tritondbg capture -- python {tmp}/prog_words.py` saves its launches"),
    (["profile", "{tmp}/prog.py"], {}, 2, "not imported, its text names no Scenario"),
    (["interpret", "python", "{tmp}/prog.py"], {}, 2, "to run a program, put it after --: tritondbg <command> -- "
     "python ..."),
    (["interpret", "--", "--json", "{tmp}/x.json", "{py}", "{tmp}/prog.py"], {}, 127,
     "--json: command not found (tritondbg's options go before the --: `tritondbg interpret --json ... -- PROGRAM`)"),
    # helper-131: "PY is not a Python file"
    (["ir", "--", "{py}", "{tmp}/prog.py"], {}, 2, "`tritondbg ir` has no program form: run `tritondbg capture -- "
                                                   f"{PY} {{tmp}}/prog.py`, then `tritondbg ir traces/capture-<time>/"),
    # the commands with no program form but ir said "unknown kernel 'python'; ... put it after --" (it was)
    (["run", "--", "{py}", "{tmp}/prog.py"], {}, 2, "`tritondbg run` has no program form: run `tritondbg capture -- "),
    (["check", "--", "pytest", "{tmp}"], {}, 2, "`tritondbg check` has no program form: run `tritondbg interpret "
                                               "--strict -- pytest {tmp}` (exit 1 on a finding, for CI)"),
    (["list", "--", "{py}", "{tmp}/prog.py"], {}, 2, "`tritondbg list` has no program form: run `tritondbg capture"),
    # --all and a folder that holds no scenario: every bundled item erred "could not load" (tests/conftest.py)
    (["check", "--all", "{tmp}", "--gates", "resources"], {}, 2, "empty.py: not imported, its text names no Scenario"),
    (["interpret", "{tmp}/imp.py"], {}, 2, "imp.py:1: ModuleNotFoundError: No module named 'nonexistent_module_xyz'"),
    (["interpret", "{tmp}/implib.py"], {}, 2, "libhelper.py:2: AttributeError: module 'torch' has no attribute"),
    (["interpret", "{tmp}/missing.py"], {}, 2, "no such scenario file"),
    (["run", "UNKNOWN"], {}, 2, "unknown kernel 'UNKNOWN'; choose from: add, attention"),
    (["ir", "UNKNOWN"], {}, 2, "unknown kernel 'UNKNOWN'"),
    (["interpret", "add", "--watch", "x+"], {}, 2, "bad --watch 'x+': invalid syntax"),
    (["interpret", "add", "--watch", ""], {}, 2, "bad --watch ''"),
    (["interpret", "add", "--out", "{tmp}/afile"], {}, 2, "--out {tmp}/afile: is a file, not a folder"),
    (["interpret", "add", "--out", "{tmp}/afile/sub"], {}, 2, "cannot be created: {tmp}/afile is a file"),
    (["interpret", "add", "--out", "/proc/tritondbg-records"], {}, 2, "is not writable"),
    (["interpret", "add"], {"TRITONDBG_OUT": "{tmp}/afile", "TRITONDBG_SAVE": "1"}, 2,
     "TRITONDBG_OUT {tmp}/afile: is a file"),
    (["interpret", "add", "--dtype", "float64"], {}, 2, "case 'tiny' has no dtype 'float64'"),
    (["interpret", "add", "--dtype", "half4"], {}, 2, "'half4' is not a torch dtype; case 'tiny' takes:"),
    (["interpret", "add", "--case", "nope"], {}, 2, "unknown case 'nope' for add"),
    (["interpret", "gemm", "--config", "NOPE=1"], {}, 2, "unknown config key(s) NOPE"),
    (["interpret", "add", "--pid", "3"], {}, 2, "--pid 3 alone does nothing"),
    (["interpret", "add", "--pid", "-1", "--trace"], {}, 2, "bad --pid '-1'"),
    (["interpret", "add", "--pid", "99", "--trace", "--dtype", "float32"], {}, 2,
     "--pid 99: pid (99, 0, 0) is outside every launch's grid"),
    (["interpret", "add", "--pid", "1", "--watch", "x[0]", "--dtype", "float32"], {}, 2,
     "--watch 'x[0]': it failed at every traced line of pid (1, 0, 0)"),
    (["interpret", "add", "--break", "9999"], {}, 2, "--break 9999 is not a line of a @triton.jit function"),
    (["interpret", "add", "--break", "x"], {}, 2, "bad --break 'x'"),
    (["interpret", "add", "--seed", "x"], {}, 2, "Invalid value for '--seed'"),
    (["ir", "add", "--arch", "sm_999"], {}, 2, "--arch sm_999: not a target this Triton's ptxas knows; valid: "),
    (["interpret", "add", "--arch", "sm_999"], {}, 2, "--arch sm_999: not a target this Triton's ptxas knows"),
    (["ir", "add", "--arch", "gfx9999"], {}, 2, "--arch gfx9999: not an AMD target this Triton knows; valid: "),
    (["ir", "add", "--diff", "arch=sm_90", "arch=sm_999"], {}, 2, "--arch sm_999: not a target"),
    (["ir", "add", "--arch", "sm_9x"], {}, 2, "unknown --arch 'sm_9x'"),
    (["ir", "add", "--arch", ""], {}, 2, "unknown --arch ''"),
    (["check", "{tmp}/fake"], {}, 2, "{tmp}/fake is a folder with no scenario file (*.py) in it"),
    (["check", "add", "--gates", "resources", "--arch", "sm_75x"], {}, 2, "unknown --arch 'sm_75x'"),
    (["ir", "add", "--stage", "bogus"], {}, 2, "Invalid value for '--stage'"),
    (["ir", "add", "--arch", "gfx942", "--stage", "ptx"], {}, 2, "--stage ptx does not exist for gfx942"),
    (["cache", "--cache-dir", "{tmp}/fake", "clear", "--all"], {}, 2, "holds no Triton cache entry"),
    (["cache", "--cache-dir", "{tmp}/nowhere", "ls"], {}, 2, "--cache-dir {tmp}/nowhere: does not exist"),
    (["cache", "--cache-dir", "{tmp}/afile", "ls"], {}, 2, "--cache-dir {tmp}/afile: is a file"),
    (["cache", "--cache-dir", "{tmp}/fake", "clear", FAKE_KEY], {}, 2, "which Triton did not write"),
    (["cache", "--cache-dir", "{tmp}/nothere", "clear", "--all"], {}, 2, "nothere: does not exist"),
    (["cache", "--cache-dir", "{tmp}/cache", "show", "ZZZZ"], {}, 2, "no cache entry 'ZZZZ'"),
    (["cache", "--cache-dir", "{tmp}/cache", "clear"], {}, 2, "cache clear needs --kernel NAME, KEY... or --all"),
    # a path the command will write, checked before any work (the program never starts, no gate runs)
    (["profile", "--out", "/proc/nope", *PROGRAM], {}, 2, "--out /proc/nope: is not writable"),
    (["profile", "--out", "/proc/nope", "add"], {}, 2, "--out /proc/nope: is not writable"),
    (["profile", "--out", "{tmp}/afile", "add"], {}, 2, "--out {tmp}/afile: is a file, not a folder"),
    (["profile", "add"], {"TRITONDBG_OUT": "{tmp}/afile"}, 2, "TRITONDBG_OUT {tmp}/afile: is a file"),
    # it was "compiling add_kernel for cuda:90 failed: NotADirectoryError", exit 1
    (["ir", "add"], {"TRITON_CACHE_DIR": "{tmp}/afile"}, 2, "TRITON_CACHE_DIR {tmp}/afile: is a file, not a folder"),
    (["profile", "--json", "{tmp}/nodir/p.json", *PROGRAM], {}, 2,
     "--json {tmp}/nodir/p.json: no folder {tmp}/nodir"),
    (["capture", "--out", "/proc/nope", *PROGRAM], {}, 2, "--out /proc/nope: is not writable"),
    (["capture", "--out", "{tmp}/afile/sub", *PROGRAM], {}, 2, "cannot be created: {tmp}/afile is a file"),
    (["interpret", "--json", "/proc/nope/x.json", *PROGRAM], {}, 2,
     "--json /proc/nope/x.json: no folder /proc/nope"),
    (["interpret", "--json", "{tmp}", *PROGRAM], {}, 2, "--json {tmp}: is a folder, not a file"),
    (["interpret", "--capture-on-finding", "--out", "{tmp}/afile", *PROGRAM], {}, 2,
     "--out {tmp}/afile: is a file, not a folder"),
    (["check", "add", "--gates", "correctness", "--junit", "/proc/nope/x.xml"], {}, 2,
     "--junit /proc/nope/x.xml: no folder /proc/nope"),
    (["check", "add", "--gates", "correctness", "--json", "{tmp}/afile/x.json"], {}, 2,
     "--json {tmp}/afile/x.json: its folder {tmp}/afile is a file"),
    (["check", "add", "--gates", "perf", "--update-baseline", "--baseline", "{tmp}/nodir/b.json"], {}, 2,
     "--baseline {tmp}/nodir/b.json: no folder {tmp}/nodir"),
    (["ir", "add", "--out", "{tmp}/nodir/add.ptx"], {}, 2, "--out {tmp}/nodir/add.ptx: no folder {tmp}/nodir; the IR goes there"),
    # `ir --out FILE|DIR`: options.output_callback with folder=is_out_dir, the file and folder checks of every command
    (["ir", "add", "--out", "--stats"], {}, 2, "--out needs a FILE or DIR (got the option --stats)"),
    (["ir", "add", "--out", "-"], {}, 2, "--out -: standard output carries the command's own report"),
    (["ir", "add", "--out", "{tmp}/afile/sub/"], {}, 2, "--out {tmp}/afile/sub/: cannot be created: {tmp}/afile is a file"),
    # the program form: its own options before --, each value option with its value, the program after --
    (["profile", "--json", *PROGRAM], {}, 2, "--json needs its FILE before --: tritondbg profile [--out DIR] "),
    (["interpret", "--json", *PROGRAM], {}, 2, "--json needs its FILE before --: tritondbg interpret [--json "),
    (["capture", "--max-per-kernel", *PROGRAM], {}, 2, "--max-per-kernel needs its N before --"),
    (["capture", "--max-mb", "0", *PROGRAM], {}, 2, "'--max-mb': 0.0 is not in the range x>0"),  # saved nothing, exit 0
    (["interpret", "--timeout", "0", *PROGRAM], {}, 2, "'--timeout': 0.0 is not in the range x>0"),
    (["profile", "--timeout", "-3", *PROGRAM], {}, 2, "'--timeout': -3.0 is not in the range x>0"),
    (["profile", "--json", "--skip", "1", *PROGRAM], {}, 2, "--json needs a FILE (got the option --skip)"),
    (["profile", "--iters", "5", *PROGRAM], {}, 2,
     "--iters is not an option of the program form (--iters is an option of `tritondbg profile KERNEL`): "
     "tritondbg profile [--out DIR] [--skip N] [--active M] [--interpret/--compiled] [--json FILE] "
     "[--timeout SECONDS] -- CMD"),
    (["interpret", "--watch", "x", *PROGRAM], {}, 2, "--watch is not an option of the program form"),
    (["capture", "--bogus", *PROGRAM], {}, 2, "--bogus is not an option of `tritondbg capture`"),
    (["interpret", "--kernal", "k", *PROGRAM], {}, 2, "--kernal is not an option of the program form (did you mean "
                                                       "--kernel?)"),
    (["interpret", "--strct", *PROGRAM], {}, 2, "(did you mean --strict?)"),  # the nearest, not the first of two
    (["interpret", "--wacth", "x", *PROGRAM], {}, 2, "(did you mean --watch? it is an option of `tritondbg interpret "
                                                     "KERNEL`)"),
    (["profile", "add", *PROGRAM], {}, 2, "unexpected argument 'add' before --"),
    (["interpret", "add", *PROGRAM], {}, 2, "unexpected argument 'add' before --"),
    (["list", "extra"], {}, 2, "unknown kernel 'extra'; choose from: add, attention"),
    (["nope"], {}, 2, "No such command 'nope'"),
    (["interpet", "add"], {}, 2, "No such command 'interpet'. Did you mean 'interpret'?"),  # (helpers 122, 123)
]


@pytest.mark.parametrize("args, env, status, needle", ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_bad_input_is_one_line(args, env, status, needle, bad, monkeypatch, capsys):
    if "gfx9999" in args and not _amd_checked():
        pytest.skip("this Triton has no amd.get_target_triple: the compile itself reports the target")
    tmp = str(bad)
    base = {"TRITON_CACHE_DIR": f"{tmp}/cache", "TRITONDBG_OUT": f"{tmp}/traces", "TRITONDBG_SAVE": "0"}
    base.update({k: v.replace("{tmp}", tmp) for k, v in env.items()})
    monkeypatch.chdir(bad)
    code, out, err = invoke([a.replace("{tmp}", tmp).replace("{py}", PY) for a in args], base, monkeypatch, capsys)
    assert code == status, (code, err)
    assert needle.replace("{tmp}", tmp) in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert list(Path(bad / "fake" / FAKE_KEY).iterdir()), "the fake cache folder lost its file"
    assert not (bad / "traces").exists(), "a bad input left a run record"
    assert not (bad / "ran").exists(), "a bad input ran the program"
    assert not (bad / "--").exists(), "an option took -- as its path"


def test_pdb_quit_at_a_breakpoint_ends_the_run(bad, monkeypatch, capsys):
    """`q` at a --break ends the whole run: not one kernel error per case, each stopping at the breakpoint."""
    import tritondbg.kernels.add as add

    line = 1 + next(i for i, text in enumerate(Path(add.__file__).read_text().splitlines()) if "tl.load(x_ptr" in text)
    env = {"TRITON_CACHE_DIR": f"{bad}/cache", "TRITONDBG_OUT": f"{bad}/traces", "TRITONDBG_SAVE": "0"}
    code, out, err = invoke(["interpret", "add", "--break", str(line)], env, monkeypatch, capsys,
                            stdin="q\nq\nq\nq\n")   # add's tiny case has 3 dtypes: today's code stops 3 times
    assert code == 1, (code, out, err)
    assert out.count("tritondbg: line") == 1, out
    assert f"quit at breakpoint {os.path.basename(add.__file__)}:{line}" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "PASS" not in out and "passed" not in out


@pytest.mark.parametrize("args", [
    ["interpret", "--json", "{tmp}/r.json", "--kernel", "k_*", "--no-sanitize"],
    ["capture", "--interpret", "--max-per-kernel", "2", "--out", "{tmp}/cap"],
], ids=["interpret", "capture"])
def test_program_form_options_take_their_values_and_the_program_gets_the_rest(args, bad, monkeypatch, capsys):
    """Before --: the form's options, each with its value; after it: the program's, `--` and options included."""
    tmp = str(bad)
    env = {"TRITON_CACHE_DIR": f"{tmp}/cache", "TRITONDBG_OUT": f"{tmp}/traces", "TRITONDBG_SAVE": "0"}
    monkeypatch.chdir(bad)
    argv = [a.replace("{tmp}", tmp) for a in args] + ["--", PY, f"{tmp}/prog.py", "--", "--json", "x"]
    code, out, err = invoke(argv, env, monkeypatch, capsys)
    assert code == 1, (code, err)  # the program launches no kernel: nothing checked or captured is no pass
    assert json.loads((bad / "ran").read_text()) == ["--", "--json", "x"], err
    assert not (bad / "--").exists()
    if args[0] == "interpret":
        assert json.loads((bad / "r.json").read_text())["exit_status"] == 0  # the program's own
        assert "the program launched no Triton kernel: nothing was checked" in err, err
    else:  # the program launches nothing: said, and no folder left (an empty captures.json was)
        assert "tritondbg capture: no Triton launch: nothing captured" in err and not (bad / "cap").exists(), err


def test_a_kernel_name_that_is_a_file_here_without_py_says_so(tmp_path, monkeypatch):
    """`tritondbg interpret moe_race` beside moe_race.py: the unknown-kernel line names the file it likely meant."""
    from tritondbg import loader
    from tritondbg.errors import UsageError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "moe_race.py").write_text("")
    with pytest.raises(UsageError, match=r"did you mean \./moe_race\.py\?"):
        loader.check_target("moe_race")
    with pytest.raises(UsageError) as err:
        loader.check_target("other")
    assert "did you mean" not in str(err.value)
    (tmp_path / "cap").mkdir()  # a capture's folder given to interpret (check takes folders)
    (tmp_path / "cap" / "k_0.py").write_text("")
    with pytest.raises(UsageError, match=r"cap is a folder: name one of its files \(k_0\.py\), or give the folder "
                                         r"to `tritondbg check`"):
        loader.check_target("cap")
    with pytest.raises(UsageError, match=r"no such scenario file: \./cap \(\./cap is a folder: name one of its "
                                         r"files \(k_0\.py\)"):  # (helper-149: a path said only "(a folder)")
        loader.check_target("./cap")


def test_a_reader_that_closes_the_pipe_early_leaves_the_exit_status_alone(tmp_path, cli_env):
    """`tritondbg list | head -1` exited 1 (BrokenPipeError): a CI step piping a check into head failed."""
    import subprocess
    import sys

    cmd = f"{sys.executable} -m tritondbg list | head -c 10 >/dev/null; echo \"rc=${{PIPESTATUS[0]}}\""
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=tmp_path, env=cli_env, timeout=300)
    assert "rc=0" in r.stdout and "BrokenPipe" not in r.stderr, r.stdout + r.stderr
