"""helper-91: a kernel defined inside a function (torchao's fp8 kernels) replays from its file as it is now, lifted
again (program/nested.py), with its @triton.autotune / @triton.heuristics: a regression made after capture fails
the reproducer's check, and all-configs reaches every config. The copy saved at capture only when the file is gone
or no longer defines the kernel (said in one line); a file that no longer parses fails."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = [pytest.mark.interpreter]

KERN = '''
import torch
import triton
import triton.language as tl

_kernel = None


def _build():
    configs = [triton.Config({"BLOCK": b}) for b in (32, 64, 128)]

    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def nested_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x * 2.0, mask=mask)

    return nested_scale_kernel


def scale(x):
    global _kernel
    if _kernel is None:
        _kernel = _build()
    y = torch.empty_like(x)
    n = x.numel()
    _kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y
'''

DRIVER = '''
import torch
from nestk import scale

if __name__ == "__main__":
    print(scale(torch.randn(100)).sum().item())
'''


def _captured(tmp_path, cli_env, kern=KERN):
    (tmp_path / "nestk.py").write_text(textwrap.dedent(kern))
    (tmp_path / "driver.py").write_text(textwrap.dedent(DRIVER))
    cap = run_cli(["capture", "--out", "cap", "--", sys.executable, "driver.py"], cli_env, cwd=tmp_path)
    assert cap.returncode == 0, cap.stderr[-2000:]
    [entry] = json.loads((tmp_path / "cap" / "captures.json").read_text())["captures"]
    return str(tmp_path / "cap" / entry["reproducer"].split("::")[0])


def _blocks(doc) -> list:
    """The BLOCK of each config run (``--all-configs``)."""
    return sorted(c["BLOCK"] for r in doc["results"] for c in (r.get("config") or {}).values())


def _interpret(repro, cli_env, tmp_path, *more):
    rep = run_cli(["interpret", repro, "--json", *more], cli_env, cwd=tmp_path)
    return rep, (json.loads(rep.stdout) if rep.stdout.strip().startswith("{") else None)


def test_a_nested_autotuned_kernel_replays_every_config_and_a_regression_in_its_file(tmp_path, cli_env):
    repro = _captured(tmp_path, cli_env)
    assert "@triton.autotune(" in next((tmp_path / "cap" / "src").glob("*.py")).read_text()
    rep, doc = _interpret(repro, cli_env, tmp_path, "--all-configs")
    assert rep.returncode == 0 and doc, rep.stderr[-2000:]
    assert _blocks(doc) == [32, 64, 128] and doc["passed"], rep.stdout[-3000:]
    # a regression planted in the kernel's file after capture: the reproducer replays it and fails
    path = tmp_path / "nestk.py"
    path.write_text(path.read_text().replace("mask = offs < n", "mask = offs <= n"))
    rep, doc = _interpret(repro, cli_env, tmp_path)
    found = [(f["kind"], f["file"], f["line"]) for r in doc["results"] for f in r["findings"]]
    assert rep.returncode != 0 and any(k == "out_of_bounds" for k, *_ in found), (found, rep.stderr[-2000:])
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "tl.load(" in ln)
    assert (str(path), line) in {(f, ln) for _, f, ln in found}, found  # at the file's own lines
    chk = run_cli(["check", repro, "--gates", "correctness,sanitize"], cli_env, cwd=tmp_path)
    assert chk.returncode != 0 and "0 passed" in chk.stdout, chk.stdout[-2000:]


def test_the_saved_copy_only_when_the_file_no_longer_defines_the_kernel_and_a_broken_file_fails(tmp_path, cli_env):
    repro = _captured(tmp_path, cli_env)
    path = tmp_path / "nestk.py"
    good = path.read_text()
    path.write_text(good + "\ndef (\n")
    rep, _ = _interpret(repro, cli_env, tmp_path)
    assert rep.returncode != 0 and "SyntaxError" in rep.stderr and "nestk.py" in rep.stderr, rep.stderr[-2000:]
    path.write_text(good.replace("nested_scale_kernel", "renamed_kernel"))
    rep, doc = _interpret(repro, cli_env, tmp_path)
    assert rep.returncode == 0 and doc["passed"], rep.stderr[-2000:]
    assert "no longer defines _build.<locals>.nested_scale_kernel; replaying the copy" in rep.stderr, rep.stderr
    path.unlink()
    rep, doc = _interpret(repro, cli_env, tmp_path, "--all-configs")
    assert rep.returncode == 0 and "is gone; replaying the copy" in rep.stderr, rep.stderr[-2000:]
    assert _blocks(doc) == [32, 64, 128] and doc["passed"], rep.stdout[-3000:]


ARG_CONFIGS = KERN.replace('def _build():\n    configs = [triton.Config({"BLOCK": b}) for b in (32, 64, 128)]\n',
                           'def _build(blocks=(32, 64, 128)):\n    configs = [triton.Config({"BLOCK": b}) for b in blocks]\n')


def test_an_autotuner_reading_the_enclosing_functions_argument_is_rebuilt_from_the_captured_configs(tmp_path,
                                                                                                     cli_env):
    assert ARG_CONFIGS != KERN
    repro = _captured(tmp_path, cli_env, ARG_CONFIGS)
    assert "@triton.autotune" not in next((tmp_path / "cap" / "src").glob("*.py")).read_text()  # `blocks`: not liftable
    rep, doc = _interpret(repro, cli_env, tmp_path, "--all-configs")
    assert rep.returncode == 0 and doc, rep.stderr[-2000:]
    assert "made of the 3 configs recorded at capture" in rep.stderr, rep.stderr[-2000:]
    assert _blocks(doc) == [32, 64, 128] and doc["passed"], rep.stdout[-3000:]


def test_heuristics_and_the_statements_a_decorator_needs_are_lifted(tmp_path):
    from tritondbg.program import nested

    path = tmp_path / "lib.py"
    path.write_text(textwrap.dedent('''
        import triton

        def _prune(configs, named_args, **kwargs):
            return configs[:LIMIT]

        LIMIT = 2

        def build(scale):
            cfgs = [triton.Config({"B": 16}), triton.Config({"B": 32}), triton.Config({"B": 64})]

            @triton.autotune(configs=cfgs, key=["n"], prune_configs_by={"early_config_prune": _prune})
            @triton.heuristics({"EVEN": lambda args: args["n"] % args["B"] == 0})
            @triton.jit
            def k(x_ptr, n, B: triton.language.constexpr, EVEN: triton.language.constexpr):
                pass

            @triton.heuristics({"S": lambda args: scale})
            @triton.jit
            def k2(x_ptr, S: triton.language.constexpr):
                pass
            return k, k2
    '''))
    src = nested.standalone_source(str(path), "build.<locals>.k")
    assert "@triton.autotune(" in src and "@triton.heuristics(" in src and "cfgs = [" in src, src
    assert "def _prune(" in src and "LIMIT = 2" in src, src
    ns = {}
    exec(compile(src, "lifted", "exec"), ns)  # noqa: S102 - it runs alone
    assert len(ns["k"].configs) == 3
    src2 = nested.standalone_source(str(path), "build.<locals>.k2")  # reads the argument `scale`: dropped
    assert "heuristics" not in src2.split("def k2")[0].split("def k(")[-1] and "def k2(" in src2, src2
    tree = nested.lifted_tree(str(path), "build.<locals>.k", [])
    kernel = next(n for n in tree.body if getattr(n, "name", "") == "k")
    assert kernel.lineno == next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "def k(" in ln)
