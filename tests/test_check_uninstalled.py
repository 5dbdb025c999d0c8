"""`tritondbg check` from a source tree that was never installed (``python -m tritondbg check`` in a clone, the
GPU machine's copy of the tree): no pytest11 entry point then, and the gates must still run. Before, every gate
came back "did not run: pytest exit status 4" (pytest refused the --tritondbg-* options of a plugin it never
loaded): an error, not a false pass, but nothing checked."""
import json
import os
import subprocess
import sys

import pytest

from conftest import run_cli

pytestmark = [pytest.mark.interpreter]

# Hides the installed tritondbg distribution (its metadata and so its pytest11 entry point) from this process and,
# through PYTHONPATH, from the gate workers it starts: as where tritondbg was never installed.
HIDE = '''
import importlib.metadata as _md

_real = _md.distributions


def _distributions(**kw):
    return [d for d in _real(**kw) if (d.metadata["Name"] or "").lower() != "tritondbg"]


_md.distributions = _distributions
'''


def test_gates_run_where_tritondbg_is_not_installed(tmp_path, cli_env):
    site = tmp_path / "hide"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HIDE)
    env = dict(cli_env, PYTHONPATH=os.pathsep.join(p for p in (str(site), cli_env.get("PYTHONPATH")) if p))
    probe = "import importlib.metadata as m; print(sorted(e.value for e in m.entry_points(group='pytest11')))"
    seen = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert "tritondbg.pytest_plugin" not in seen.stdout and "xdist" in seen.stdout, (seen.stdout, seen.stderr)
    out = tmp_path / "r.json"
    p = run_cli(["check", "add", "--gates", "correctness,sanitize", "--json", str(out)], env, timeout=600)
    gates = {g["gate"]: g for g in json.loads(out.read_text())["extra"]["gates"]}
    assert {k: v["status"] for k, v in gates.items()} == {"correctness": "pass", "sanitize": "pass"}, \
        {k: v.get("reason") for k, v in gates.items()}
    assert p.returncode == 0, p.stderr[-2000:]
