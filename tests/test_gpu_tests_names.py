"""The GPU tests (tests/gpu, run only on the GPU machine) still name what exists: every ``from tritondbg... import``
in them and in the code strings they run, and every ``module.attribute`` read off such an import. CI has no GPU,
so a rename in the kernels would otherwise surface only at the next device run (session 29 found
tests/gpu/test_streams_gpu.py broken since session 20, by a plan of another type; this catches the plainer kind)."""
import ast
import importlib
import re
import types
from pathlib import Path

GPU_TESTS = Path(__file__).resolve().parent / "gpu"


def _chunks(src: str):
    yield src
    for m in re.finditer(r"'''(.*?)'''", src, re.S):  # the code each test runs in a subprocess
        yield m.group(1)


def _missing(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a docstring between triple quotes, not code
        return []
    names, bad = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tritondbg"):
            parent = importlib.import_module(node.module)
            for a in node.names:
                if hasattr(parent, a.name):
                    names[a.asname or a.name] = getattr(parent, a.name)
                    continue
                try:
                    names[a.asname or a.name] = importlib.import_module(f"{node.module}.{a.name}")
                except ImportError:
                    bad.append(f"{node.module}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            obj = names.get(node.value.id)
            if isinstance(obj, types.ModuleType) and not hasattr(obj, node.attr):
                bad.append(f"{node.value.id}.{node.attr}")
    return bad


def test_gpu_tests_name_only_what_exists():
    files = sorted(GPU_TESTS.glob("*.py"))
    assert len(files) > 10
    bad = {f.name: sorted(set(m for c in _chunks(f.read_text()) for m in _missing(c))) for f in files}
    assert not {k: v for k, v in bad.items() if v}


def test_a_renamed_name_is_caught():
    code = "from tritondbg.kernels import _attention_decode as D\nD._no_such_helper(1)\nD._load_bucket(1, 2)\n"
    assert _missing(code) == ["D._no_such_helper"]
    assert _missing("from tritondbg.kernels import no_such_module\n") == ["tritondbg.kernels.no_such_module"]
