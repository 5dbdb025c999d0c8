"""Compare kernel outputs with the reference; the per-dtype tolerances live here, in one place."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# (atol, rtol) per dtype of the run, applied elementwise as |out - ref| <= atol + rtol * |ref| on fp32 copies.
# fp16: 10 bits of mantissa (eps 9.8e-4) -> 1e-2 leaves room for fp32-accumulated sums of a few thousand terms.
# bf16: 7 bits (eps 7.8e-3) -> 2e-2 is ~2.5 ulp. fp8 e4m3 inputs: results are stored in bf16/fp16, same idea.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float8_e4m3fn": (3e-2, 3e-2),
    "float64": (1e-8, 1e-8),    # libdevice and numpy differ by an ulp or two; summation orders by more
    "float8_e5m2": (1e-1, 1e-1),  # 2 bits of mantissa (eps 0.25): results stored wider, as for e4m3
    "float8_e4m3fnuz": (3e-2, 3e-2), "float8_e5m2fnuz": (1e-1, 1e-1),  # AMD's: the same mantissas
    # integer cases (a histogram, an index or a quantising kernel): exact unless the case says otherwise
    "int8": (0.0, 0.0), "uint8": (0.0, 0.0), "int16": (0.0, 0.0), "int32": (0.0, 0.0), "int64": (0.0, 0.0),
}


def tolerance(dtype_name: str, atol: float | None = None, rtol: float | None = None) -> tuple[float, float]:
    d_atol, d_rtol = TOLERANCES[dtype_name]
    return (d_atol if atol is None else atol, d_rtol if rtol is None else rtol)


@dataclass
class ErrorStats:
    """How far one output is from its reference."""

    name: str
    shape: list[int]
    max_abs: float
    max_rel: float
    mismatched: int          # elements outside atol + rtol*|ref| (NaN/Inf where the reference is finite count)
    numel: int
    atol: float
    rtol: float
    nonfinite: int           # NaN/Inf in the output where the reference is finite
    worst_index: list[int]   # index of the largest violation (or of the largest abs error when all pass)
    worst_out: float
    worst_ref: float
    dtypes: str = ""         # "int32 output, float32 reference" where one is integer (or bool) and the other is not
    ref_absmax: float = 0.0  # the largest finite |reference| value: the output's scale

    @property
    def passed(self) -> bool:
        return self.mismatched == 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ErrorStats":
        d = {k: v for k, v in d.items() if k != "passed"}
        return cls(**d)


class Named(tuple):
    """A launch's tuple of outputs with the names its ``return o, lse`` gives them: mismatches and findings say
    ``lse`` where they said ``out1`` (helper-51, vLLM's decode attention)."""

    names: tuple = ()

    def __new__(cls, items, names):
        self = super().__new__(cls, items)
        self.names = tuple(names)
        return self


def return_names(fn, n: int) -> tuple | None:
    """The names of ``fn``'s ``return a, b, ...`` when every return statement of it gives the same ``n`` distinct
    plain names; else None."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    func = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if func is None:
        return None
    found, todo = set(), list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # a nested function's returns are not this one's
        if isinstance(node, ast.Return):
            v = node.value
            if not (isinstance(v, ast.Tuple) and all(isinstance(e, ast.Name) for e in v.elts)):
                return None
            found.add(tuple(e.id for e in v.elts))
        todo.extend(ast.iter_child_nodes(node))
    names = found.pop() if len(found) == 1 else None
    return names if names and len(names) == n and len(set(names)) == n else None


def _as_list(x) -> list:
    if isinstance(x, (tuple, list)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    return [x]


def _kind(x) -> str:
    return f"dict (keys {', '.join(map(repr, x))})" if isinstance(x, dict) else type(x).__name__


def pairs(out, ref, who: str = "kernel") -> list[tuple[str, Any, Any]]:
    """(name, output, reference) for each output to compare. Dicts are matched by key (a kernel returning its
    outputs in another order than the reference, or swapped, was compared by position: a right kernel failed, a
    wrong one passed), sequences by position; an item that is None on both sides (Liger's ``(loss, None)``) is
    left out. Raises ValueError, saying how, when the two do not match up."""
    if isinstance(out, dict) or isinstance(ref, dict):
        if not (isinstance(out, dict) and isinstance(ref, dict)):
            raise ValueError(f"{who} returned a {_kind(out)}, reference a {_kind(ref)}: return the same kind "
                             "(dicts are matched by key)")
        missing, extra = [k for k in ref if k not in out], [k for k in out if k not in ref]
        if missing or extra:
            raise ValueError(f"{who} outputs and reference differ in keys: "
                             + "; ".join(part for part in (
                                 missing and f"missing {', '.join(map(repr, missing))}",
                                 extra and f"not in the reference {', '.join(map(repr, extra))}") if part))
        named = [(str(k), out[k], ref[k]) for k in ref]
    else:
        outs, refs = _as_list(out), _as_list(ref)
        if len(outs) != len(refs):
            raise ValueError(f"{who} returned {len(outs)} output(s), reference {len(refs)}")
        names = ["out"] if len(outs) == 1 else [f"out{i}" for i in range(len(outs))]
        if isinstance(out, Named) and len(out.names) == len(outs):
            names = list(out.names)
        named = list(zip(names, outs, refs))
    for name, o, r in named:
        if (o is None) != (r is None):
            side = who if o is None else "reference"
            raise ValueError(f"output {name}: {side} returned None where the other side has a tensor"
                             + ("; did a helper forget `return`?" if o is None else ""))
    return [(name, o, r) for name, o, r in named if o is not None]


def _stored_in(dtype, atol: float, rtol: float) -> tuple[float, float]:
    """The tolerance for an output stored as ``dtype``: the case's, plus half a step of that type where its rounding
    is not small beside the case's rtol (an fp8 output: a quantiser, an fp8 KV cache, rounds by up to 6.25% (e4m3) /
    12.5% (e5m2), beyond fp8 cases' 3e-2 / 1e-1; a bf16 output of a float32 case). helper-131: vLLM's
    merge_attn_states writing e4m3 failed with -2.5, the nearest e4m3 value to the reference's -2.378."""
    import torch

    if not dtype.is_floating_point:
        return atol, rtol
    info = torch.finfo(dtype)
    half = info.eps / 2  # the relative rounding of a normal value
    if half <= rtol / 2:
        return atol, rtol
    return atol + info.smallest_normal * half, rtol + half  # (half a subnormal step: values near zero)


def compare(out, ref, atol: float, rtol: float, who: str = "kernel") -> list[ErrorStats]:
    """Compare (possibly nested) outputs against the reference; one ErrorStats per output tensor."""
    import torch  # heavy; only once a run happened

    stats = []
    for name, o, r in pairs(out, ref, who):
        kinds = (o.dtype.is_floating_point or o.dtype.is_complex, r.dtype.is_floating_point or r.dtype.is_complex)
        dtypes = (f"{str(o.dtype).replace('torch.', '')} output, {str(r.dtype).replace('torch.', '')} reference"
                  if kinds[0] != kinds[1] else "")
        exact = not any(kinds)  # integer (or bool) output and reference: equal or not, no tolerance
        o_atol, o_rtol = (0.0, 0.0) if exact else _stored_in(o.dtype, atol, rtol)
        wide = torch.float64 if exact else torch.float32  # an int32 near 2^31 is not rounded to a float32 step
        o = o.detach().to("cpu", wide)
        r = r.detach().to("cpu", wide)
        if o.shape != r.shape:
            raise ValueError(f"output {name}: shape {tuple(o.shape)} but reference has {tuple(r.shape)}")
        finite_ref = torch.isfinite(r)
        nonfinite = int((~torch.isfinite(o) & finite_ref).sum())
        diff = (o - r).abs()
        # where both are the same non-finite value (inf == inf), count as equal
        same = (o == r) | (torch.isnan(o) & torch.isnan(r))
        diff = torch.where(same, torch.zeros_like(diff), diff)
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
        allowed = o_atol + o_rtol * r.abs()
        violation = diff - allowed
        # a NaN violation is a mismatch: a NaN reference against a number (NaN allowance), a finite output against
        # an infinite reference (inf - inf); both passed before ("max abs err inf ... ok")
        bad = ~same & ((violation > 0) | torch.isnan(violation))
        nan = torch.isnan(violation)
        violation = torch.where(nan, torch.where(bad, float("inf"), float("-inf")).to(violation.dtype), violation)
        mismatched = int(bad.sum())
        if o.numel() == 0:
            stats.append(ErrorStats(name, list(o.shape), 0.0, 0.0, 0, 0, o_atol, o_rtol, 0, [], 0.0, 0.0))
            continue
        flat = int(torch.argmax(violation if mismatched else diff))
        idx = [int(i) for i in torch.unravel_index(torch.tensor(flat), o.shape)] if o.dim() else []
        rel = diff / r.abs().clamp_min(o_atol if o_atol > 0 else 1e-12)
        rel = torch.where(torch.isnan(rel), torch.where(same, 0.0, float("inf")).to(rel.dtype), rel)
        stats.append(ErrorStats(
            name=name, shape=list(o.shape), max_abs=float(diff.max()), max_rel=float(rel.max()),
            mismatched=mismatched, numel=o.numel(), atol=o_atol, rtol=o_rtol, nonfinite=nonfinite,
            worst_index=idx, worst_out=float(o.reshape(-1)[flat]), worst_ref=float(r.reshape(-1)[flat]),
            dtypes=dtypes if mismatched else "",
            ref_absmax=float(r.abs()[finite_ref].max()) if bool(finite_ref.any()) else 0.0,
        ))
    return stats
