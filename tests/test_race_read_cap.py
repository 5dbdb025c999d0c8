"""A check that did not run is never a pass: the read race check keeps a launch's first 4M loaded elements
(race_reads._MAX_READ_ELEMENTS); a launch that loaded more had its later loads compared with no store, and the run
said nothing of it. The run's summary says so now, in program and scenario runs, and only where it happened."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

from tritondbg.interp.race_reads import _MAX_READ_ELEMENTS

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def copy(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    o = torch.empty_like(x)
    copy[(triton.cdiv(x.numel(), 1 << 16),)](x, o, x.numel(), BLOCK=1 << 16)
    return o


SCENARIO = Scenario(name="big_copy", launch=launch, reference=lambda x: x,
                    make_inputs=lambda case, dtype, device, generator: dict(x=torch.randn(NUMEL).to(device)),
                    cases=[Case("big", dtypes=("float32",))], kernels=[copy])

if __name__ == "__main__":
    x = torch.randn(int(sys.argv[1]), device="cuda")
    print("ok", bool((launch(x) == x).all()))
''')

SAID = f"1 launch(es) of copy loaded more than {_MAX_READ_ELEMENTS:,} elements: the read race check"


def test_a_launch_past_the_read_record_bound_is_said_to_be_checked_in_part(tmp_path, cli_env):
    over = _MAX_READ_ELEMENTS + 4096
    (tmp_path / "prog.py").write_text(PROG.replace("NUMEL", str(over)))
    p = run_cli(["interpret", "--json", "f.json", "--", sys.executable, "prog.py", str(over)], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "ok True" in p.stdout, p.stderr[-3000:]
    assert f"note: {SAID}" in p.stderr and f"covered their first {_MAX_READ_ELEMENTS:,} only" in p.stderr, p.stderr
    assert json.loads((tmp_path / "f.json").read_text())["read_race_capped"] == {"copy": 1}
    p = run_cli(["interpret", "prog.py", "--json"], cli_env, cwd=tmp_path)
    assert json.loads(p.stdout)["extra"]["read_race_capped"] == {"copy": 1}, p.stdout[-2000:]
    under = _MAX_READ_ELEMENTS - 4096
    p = run_cli(["interpret", "--", sys.executable, "prog.py", str(under)], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "ok True" in p.stdout and "read race check" not in p.stderr, p.stderr[-3000:]
