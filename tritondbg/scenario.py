"""Scenarios: a kernel's runnable cases (shapes x dtypes x config), for bundled and users' kernels.

A scenario file is a plain Python module that defines one or more ``Scenario`` objects at module level.
It is imported by the runner *after* the runner has chosen interpreted or compiled execution, so the file
may import torch and triton and define ``@triton.jit`` kernels at top level.

This module itself imports neither torch nor triton: the CLI imports it to resolve names cheaply.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

# dtype names a case may list; the runner maps them to torch dtypes.
DTYPES = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float64", "float8_e5m2",
          "int8", "uint8", "int16", "int32", "int64",  # integer: a quantising or a histogram kernel's case
          "float8_e4m3fnuz", "float8_e5m2fnuz")  # AMD's fp8 (helper-157: aiter's fp8 GEMM was labelled float32)


PERF_TIMINGS = ("do_bench", "graph")

# triton.language dtype names -> the names above (``Case(dtypes=[tl.bfloat16])``)
_TL_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
             "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz",
             "fp8e5b16": "float8_e5m2fnuz"}


def dtype_name(dtype):
    """A case's dtype as its name in ``DTYPES``: ``torch.float32`` (a stranger's first try: refused as unknown) and
    ``tl.float32`` give "float32"; a string is kept as it is. Anything else comes back unchanged (and is refused)."""
    if isinstance(dtype, str):
        return dtype
    text = str(dtype)
    if text.startswith("torch."):
        return text[len("torch."):]
    name = getattr(dtype, "name", None)  # a triton.language dtype: fp32, bf16, int32
    if isinstance(name, str) and type(dtype).__module__.startswith("triton."):
        return _TL_NAMES.get(name, name)
    return dtype


@dataclass(frozen=True)
class Case:
    """One shape setting of a scenario, run once per dtype it lists.

    ``dtypes``: names from ``DTYPES`` (torch and ``triton.language`` dtypes are taken as their names).
    ``params`` go to the scenario's ``make_inputs`` (and ``flops``/``bytes``); ``config`` is the autotune
    config (a partial ``{name: value}`` dict) used when the kernel cannot be autotuned (interpreter);
    ``atol``/``rtol`` override the per-dtype defaults of ``tritondbg.compare.TOLERANCES``.
    ``interpret=False`` keeps a case off the CPU interpreter (a realistic GPU shape would take hours there).
    ``launch``/``reference`` override the scenario's for this case (e.g. attention's decode variant).
    ``perf_floor`` overrides the perf gate's minimum torch_time / our_time for this case (default: the gate's
    0.5); say why in ``description`` (a known slow layout kept to show its cost, a GPU-only correctness case
    at a launch-bound size). The recorded-baseline margin applies either way.
    ``perf_timing``: how the perf gate times this case and its torch baseline: ``"do_bench"`` (default: each
    call as a user's Python makes it, L2 flushed) or ``"graph"`` (``do_bench_cudagraph``: GPU time only, for
    launch-bound shapes, where do_bench measures the machine's Python rather than the kernel; no L2 flush).
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    dtypes: Sequence[str] = ("float32",)
    config: Mapping[str, Any] | None = None
    atol: float | None = None
    rtol: float | None = None
    interpret: bool = True
    launch: Callable[..., Any] | None = None
    reference: Callable[..., Any] | None = None
    description: str = ""
    perf_floor: float | None = None
    perf_timing: str = "do_bench"

    def __post_init__(self):
        if self.perf_timing not in PERF_TIMINGS:
            raise ValueError(f"case {self.name!r}: perf_timing {self.perf_timing!r}; choose from {', '.join(PERF_TIMINGS)}")
        # dtypes="float32" (or torch.float16): one dtype, not seven characters
        if isinstance(self.dtypes, str) or not hasattr(self.dtypes, "__iter__"):
            object.__setattr__(self, "dtypes", (self.dtypes,))
        if any(not isinstance(d, str) for d in self.dtypes):  # torch / tl dtypes: their names, as everywhere else
            object.__setattr__(self, "dtypes", tuple(dtype_name(d) for d in self.dtypes))
        if not self.dtypes:  # no run at all: every gate said "0 case x dtype runs match", a pass
            raise ValueError(f"case {self.name!r}: no dtypes; give at least one, e.g. dtypes=('float32',)")
        for name in ("atol", "rtol", "perf_floor"):  # atol="0.1" crashed the gate; inf passed anything
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"case {self.name!r}: {name}={value!r}; give a finite number >= 0 (or None for the "
                                 "default)")
        bad = [d for d in self.dtypes if d not in DTYPES]
        if bad:
            raise ValueError(f"case {self.name!r}: unknown dtype(s) {bad}; choose from {', '.join(DTYPES)}")


@dataclass
class Scenario:
    """A kernel under test: how to build inputs, launch it, and compute the torch reference.

    - ``make_inputs(case, dtype, device, generator) -> dict``: keyword arguments for launch and reference.
    - ``launch(**inputs) -> Tensor | tuple[Tensor, ...]``: the Triton launch wrapper.
    - ``reference(**inputs) -> Tensor | tuple``: plain torch; compared in fp32 against the launch's outputs.
    - ``flops(case, dtype) / bytes(case, dtype) -> float``: work and minimal DRAM traffic of one launch
      (optional; ``dtype`` is the torch dtype of the run).
    - ``kernels``: the ``@triton.jit`` / ``@triton.autotune`` objects the launch uses (for list, ir, configs).
    - ``baseline(**inputs)``: optional, torch's own fast way to do the same work at the run's dtype (e.g.
      ``torch.matmul`` in bf16, not the fp32 reference); ``profile`` times it for the speed ratio and never
      compares its output. Without it, ``profile`` times ``reference`` and says so.
    """

    name: str
    make_inputs: Callable[..., dict]
    launch: Callable[..., Any]
    reference: Callable[..., Any]
    cases: Sequence[Case]
    kernels: Sequence[Any] = ()
    flops: Callable[[Case, Any], float] | None = None
    bytes: Callable[[Case, Any], float] | None = None
    description: str = ""
    baseline: Callable[..., Any] | None = None
    deterministic: bool = True   # claims bitwise-equal outputs for equal inputs (the determinism gate checks it)
    limits: Mapping[str, Any] | None = None  # resources gate: max_spills (0), max_shared, max_regs overrides
    source: str = ""  # filled by the loader: the file the scenario came from
    # the reference is what the launch wrote when it was captured (a reproducer): a NaN/Inf there is what the
    # program got, not what it expects, so the nan_inf sanitizer does not take it as expected
    reference_is_capture: bool = False
    # why there is no reference at all (a reproducer of a launch that did not finish in the program): the launch
    # runs, nothing is compared, and the case is an error that says so
    nothing_to_compare: str = ""
    # outputs, expected -> a sentence on why they differ, added to a failed comparison's message (a reproducer:
    # elements that still hold their bytes from before the launch, which the program's launch wrote)
    explain_mismatch: Callable[[Any, Any], str] | None = None
    # outputs, expected -> {output name: why it cannot be compared}: a reproducer replaying another config than
    # the captured one, whose grid writes another set of an output's elements (partial results laid out per
    # program, which the program's host code combines). A mismatch only there is a warning, not a failure
    not_comparable: Callable[[Any, Any], dict] | None = None
    # () -> findings the last launch found itself, added to its result (a reproducer: the band of uninitialized
    # memory its launch left unwritten, as in the program it was captured from)
    launch_findings: Callable[[], list] | None = None
    # kernel name -> the config a GPU's autotuner picked for these cases (a compiled capture's): the resources
    # gate fails its spills, as it does the perf baseline's recorded picks
    picked: Mapping[str, Mapping[str, Any]] | None = None

    def case(self, name: str) -> Case:
        for c in self.cases:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def case_names(self) -> list[str]:
        return [c.name for c in self.cases]

    def launch_for(self, case: Case) -> Callable[..., Any]:
        return case.launch or self.launch

    def reference_for(self, case: Case) -> Callable[..., Any]:
        return case.reference or self.reference
