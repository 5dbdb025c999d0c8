"""A running sum kept in bf16 / fp16 across a loop: ``acc += x`` with ``acc`` a 16-bit float (helpers 144, 148,
149, 150: a bf16 accumulator over a K or head loop, 0 findings; only the program's own comparison showed it).

Each add rounds the running sum to the storage type (bf16: 8 bits of mantissa, fp16: 11), so the error grows with
the trip count, and no finding said so: the values are finite, every lane is defined, nothing races. The kernel's
source is read once (``candidates``) for loop-carried names a loop adds to (``acc += x``, ``acc = acc + x``, a name
assigned before the loop); the adds of each program (``note``, from shadow.py's binary-op wrapper,
16-bit float results only) are counted at those lines per program, and at the launch's end (``entries``) a line
that ran twice or more in one program is a warning at the add, naming the name, its type, the loop and the program
that ran it most."""
from __future__ import annotations

import ast
import inspect

_found: dict = {}  # id(python function) -> {(file, line): (name, loop line)}


def candidates(fn) -> dict:
    """(file, line) of each add to a loop-carried name in ``fn``'s own body -> (the name, the loop's line)."""
    if id(fn) in _found:
        return _found[id(fn)]
    from tritondbg.missing_return import _assigned, _definition

    found: dict = {}
    try:
        fdef, file = _definition(fn) or (ast.FunctionDef(body=[]), "")
        assigned: dict[str, int] = {}
        for node in ast.walk(fdef):
            for name in _assigned(node):
                assigned[name] = min(assigned.get(name, node.lineno), node.lineno)
        for loop in (n for n in ast.walk(fdef) if isinstance(n, (ast.For, ast.While))):
            for node in (n for stmt in loop.body for n in ast.walk(stmt)):
                name = _added_to(node)
                if name is not None and assigned.get(name, loop.lineno) < loop.lineno:
                    found[(file, node.lineno)] = (name, loop.lineno)
    except Exception:  # noqa: BLE001 - a static read that fails finds nothing
        found = {}
    _found[id(fn)] = found
    return found


def _added_to(node) -> str | None:
    """The name of ``name += x`` / ``name -= x`` / ``name = name + x`` (or ``x + name``), else None."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, (ast.Add, ast.Sub)):
        name = node.targets[0].id
        sides = (node.value.left, node.value.right) if isinstance(node.value.op, ast.Add) else (node.value.left,)
        if any(isinstance(s, ast.Name) and s.id == name for s in sides):
            return name
    return None


def launch_begin(san, launch) -> None:
    fn = getattr(launch, "fn", None)
    fn = fn if inspect.isfunction(fn) else getattr(fn, "fn", None)
    san.accum_lines = candidates(fn) if inspect.isfunction(fn) else {}
    san.accum_counts = {}


def note(san, out) -> None:
    """An add or subtract of the running launch with a 16-bit float result: counted at its line, per program, if
    that line adds to a loop-carried name. The most trips of any program count (helper-158: a causal attention's
    pid 0 runs its key loop once, so a bf16 ``acc_o`` over it was no finding)."""
    from tritondbg.interp.lowp import type_name
    from tritondbg.interp.shadow_values import _site_frame

    if not san.accum_lines:
        return
    kind = type_name(getattr(out, "dtype", None))
    if kind not in ("bf16", "fp16"):
        return
    frame = _site_frame()
    key = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
    if key in san.accum_lines:
        got = san.accum_counts.setdefault(key, {"kind": kind, "program": -1, "count": 0, "most": 0, "pid": None})
        program = len(san.pids)
        if got["program"] != program:
            got["program"], got["count"] = program, 0
        got["count"] += 1
        if got["count"] > got["most"]:
            got["most"], got["pid"] = got["count"], tuple(san.pids[-1]) if san.pids else (0, 0, 0)


def entries(san, launch) -> None:
    """A warning at each add that ran twice or more in one program on a 16-bit float, named with the program
    that ran it most."""
    for (file, line), got in getattr(san, "accum_counts", {}).items():
        if got["most"] < 2:
            continue
        name, loop = san.accum_lines[(file, line)]
        saved, san.pid = san.pid, got["pid"]
        e = san._entry("accumulator", (file, line, launch.kernel), None, "add", name=name, dtype=got["kind"],
                       loop=loop, count=got["most"])
        san.pid = saved
        e["severity"] = "warning"


def message(e: dict) -> str:
    dtype = {"bf16": "bfloat16", "fp16": "float16"}[e["dtype"]]
    bits = {"bf16": 8, "fp16": 11}[e["dtype"]]
    return (f"{e['name']} is a running sum kept in {dtype} across the loop at line {e['loop']} (this add ran "
            f"{e['count']} times in pid {tuple(e['pid'])}): each add rounds it to {dtype}'s {bits}-bit mantissa, so "
            f"its error grows with the trip count (the GPU rounds the same way). Accumulate in tl.float32 "
            f"(tl.zeros(..., dtype=tl.float32)) and cast once, at the store")
