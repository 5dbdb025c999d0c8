"""The Triton cache the IR and cache tests share: every bundled kernel compiled once per test session by one
helper process (tests/ir_helper.py), behind a file lock so both xdist workers use the same one."""
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HELPER = Path(__file__).resolve().parent / "ir_helper.py"


def ir_env(cache: Path, out: Path) -> dict:
    """Environment for a `tritondbg ir` / `cache` subprocess with its own Triton cache and record folder."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env.update(TRITON_CACHE_DIR=str(cache), TRITONDBG_OUT=str(out), TRITONDBG_SAVE="0")
    return env


def snapshot_dir(env: dict) -> Path:
    """The shared cache as the helper left it (the cache tests copy this, never the live one)."""
    return Path(env["TRITON_CACHE_DIR"]).parent / "cache-snapshot"


@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    """(env, compiled): the helper's results (items, stage files, stats, ptxas logs) and the env to reuse them."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "ir-shared"
    root.mkdir(exist_ok=True)
    env = ir_env(root / "cache", root / "traces")
    out = root / "compiled.json"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            p = subprocess.run([sys.executable, str(HELPER), "compile-all", str(out) + ".part"],
                               env=dict(env, TRITON_DUMP_PTXAS_LOG="1"), capture_output=True, text=True, timeout=900)
            assert p.returncode == 0, p.stderr[-4000:]
            # a snapshot before any test adds to (or races with) the shared cache: the cache tests copy it
            shutil.copytree(root / "cache", snapshot_dir(env), symlinks=True)
            os.replace(str(out) + ".part", out)
    return env, json.loads(out.read_text())
