"""Test tiers (markers in pyproject): plain CPU tests, `interpreter` tests (TRITON_INTERPRET=1, CPU) and
`gpu` tests (compiled, need CUDA; skipped without it).

The interpreter is chosen here, before any kernel module is imported: TRITON_INTERPRET is read when
@triton.jit is applied, so this test session runs every in-process kernel under the interpreter.
GPU tests run `tritondbg run` in subprocesses (compiled mode needs its own process).
"""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# A suite started in the background of a non-interactive shell (`.ci/run &`) inherits SIGINT ignored, and so does
# every subprocess: tritondbg then rightly installs no Ctrl-C handler, and the tests of what Ctrl-C does fail
# (session 43's CI run). The tests are about Ctrl-C's handling, so they get it back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import tritondbg  # noqa: E402  (after the env is set)
from tritondbg import runner  # noqa: E402

# The tritondbg this process imported, first on every child's path: the subprocesses of a checkout's tests (the
# CLI, helper scripts, bench scripts) then run the checkout's code, installed or not (the GPU machine runs the
# tests from a copy of the tree, where none was installed: "No module named tritondbg" before).
_ROOT = Path(tritondbg.__file__).resolve().parents[1]
if (_ROOT / "pyproject.toml").is_file():  # a source tree, never site-packages (it would come before the stdlib)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), os.environ.get("PYTHONPATH")) if p)
runner.set_mode("interpret")

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


# a scenario file's head (one small kernel and its launch) that tests complete with make_inputs and Scenarios
TWICE = '''
import torch
import triton
import triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def twice(x_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


def launch(x):
    twice[(1,)](x, x.numel(), B=16)
    return x


'''


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the GPU machine: pytest -m gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _seed():
    import torch

    torch.manual_seed(0)


@pytest.fixture
def cli_env(tmp_path):
    """Environment for running the `tritondbg` CLI in a subprocess, writing records under tmp_path."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)  # the CLI must set it itself
    env["TRITONDBG_OUT"] = str(tmp_path / "traces")
    return env


def run_cli(args, env, cwd=None, input=None, timeout=300):
    """Run `python -m tritondbg ARGS`; returns CompletedProcess with text output."""
    return subprocess.run([sys.executable, "-m", "tritondbg", *args], env=env, cwd=cwd, input=input,
                          capture_output=True, text=True, timeout=timeout)


def run_sanitized(target: str, case: str | None = None):
    """``tritondbg interpret TARGET [--case CASE]`` in this process, sanitizers on: the run's record."""
    from tritondbg.interp import instruments

    return runner.run(target, mode="interpret", cases=case, instruments=instruments.build(target, sanitize=True))
