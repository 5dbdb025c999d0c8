"""An interrupt while `tritondbg capture` writes a reproducer leaves no partial one (a stranger's Ctrl-C during
`capture --max-per-kernel 50` left a 0-byte gemm_split_k_kernel_18.py beside its data/*.pt and data/*.json, listed
in no captures.json; `tritondbg interpret` on it then said "its text names no Scenario"). Each file is written under
a temporary name and moved into place, NAME.py last; cut short, what the unfinished reproducer wrote is removed.

The interrupt is made deterministic: the program itself makes capture.py's writing of its third reproducer raise
KeyboardInterrupt (or get SIGTERM) at a chosen point, as a Ctrl-C landing there would."""
from __future__ import annotations

import json
import sys

import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROGRAM = '''
import os, signal, sys
import torch, triton, triton.language as tl

import tritondbg.program.capture as C

WHERE = sys.argv[1]
calls = []


def cut_short():
    if WHERE == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs at the next bytecode, here
        for _ in range(1000):
            pass
    raise KeyboardInterrupt


class Template(str):
    def format(self, **kw):  # the text of NAME.py, made after its data files
        calls.append(kw["name"])
        if WHERE in ("py", "sigterm") and len(calls) == 3:
            cut_short()
        return str.format(self, **kw)


C.SCENARIO_TEMPLATE = Template(C.SCENARIO_TEMPLATE)
save_fast, dumps = C._save_fast, []


def partial_data(obj, path):  # the .pt half written when the interrupt lands
    dumps.append(path)
    if WHERE == "data" and len(dumps) == 3:
        with open(path, "wb") as f:
            f.write(b"PK partial")
        raise KeyboardInterrupt
    save_fast(obj, path)


C._save_fast = partial_data


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


for n in (5, 6, 7, 8, 9):  # five distinct launches: the third one's reproducer is cut short
    x = torch.ones(16, device="cuda")
    scale[(1,)](x, n, BLOCK=16)
print("all launches ran")
'''


@pytest.mark.parametrize("where", ["py", "data", "sigterm"])
def test_an_interrupt_while_writing_a_reproducer_leaves_no_partial_one(tmp_path, cli_env, where):
    (tmp_path / "prog.py").write_text(PROGRAM)
    cap = tmp_path / "cap"
    p = run_cli(["capture", "--max-per-kernel", "50", "--out", str(cap), "--", sys.executable, "prog.py", where],
                cli_env, cwd=tmp_path, timeout=120)
    said = p.stdout[-3000:] + p.stderr[-3000:]
    assert p.returncode == (143 if where == "sigterm" else 130), said
    assert "all launches ran" not in p.stdout, said
    assert "the 2 reproducer(s) written before are kept" in p.stderr, said
    listed = sorted(c["reproducer"].split("::")[0] for c in json.loads((cap / "captures.json").read_text())["captures"])
    assert listed == ["scale_0.py", "scale_1.py"], listed
    # every reproducer there is whole and listed; no data file without its reproducer; no temporary file left
    assert sorted(f.name for f in cap.glob("*.py")) == listed, sorted(f.name for f in cap.iterdir())
    for name in listed:
        text = (cap / name).read_text()
        assert "load_scenario(__file__" in text, (name, text)
    stems = {f.name.split(".")[0] for f in (cap / "data").iterdir()}
    assert stems == {"scale_0", "scale_1"}, sorted(f.name for f in (cap / "data").iterdir())
    leftovers = [str(f.relative_to(cap)) for f in cap.rglob("*") if f.name.endswith(".tmp")]
    assert not leftovers, leftovers
    written = [*cap.glob("*.py"), *(cap / "data").iterdir(), *(cap / "src").iterdir()]
    assert all(f.stat().st_size > 0 for f in written), [(str(f), f.stat().st_size) for f in written]
