"""Issue 18's sweep shapes as scenarios, so the perf gate guards them on a GPU against a recorded baseline:

    tritondbg check tests/bench/sweep_scenarios.py --gates perf --device cuda \
        --baseline tests/bench/baseline_sweep_h200.json

Five scenarios (``layernorm_sweep``, ``softmax_sweep``, ``gemm_sweep``, ``attention_sweep``, ``fp8_gemm_sweep``):
the bundled kernels' own scenarios (inputs, launch, reference, torch baseline) with the sweep's shapes as GPU-only
cases (tests/bench/sweep_h200.py lists them: row lengths 128..32768 at ~32M, ~1M and ~256K elements, gemm over LLM
(M, N, K) and the squares, prefill and decode attention, fp8 8192^3 and decode). The
baseline file is written from a sweep run's JSON (``python tests/bench/sweep_h200.py --render RUN.json ...
--baseline-out tests/bench/baseline_sweep_h200.json``): same do_bench median, so a kernel that gets slower on
any sweep shape fails the gate. Launch-bound rows (``small``, ``mid``) are timed by the perf gate under CUDA-graph
replay (GPU time): their do_bench times are the machine's Python, not the kernel's (their baseline keys carry
``@graph`` and the sweep's graph column).
"""
from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweep_h200 as S  # noqa: E402

from tritondbg import Case  # noqa: E402


def norm_case_name(row_name: str) -> str:
    """A sweep row name ("3048x11008 (big)") -> the case name ("big_3048x11008")."""
    shape, size = row_name.split(" (")
    return f"{size.rstrip(')')}_{shape}"


def gemm_case_name(row_name: str) -> str:
    """A sweep row name ("127x5120x13824", "8192x8192x8192 gelu", "1x4096x4096 b=w.t()") -> the case name."""
    parts = row_name.split()
    m, n, k = parts[0].split("x")
    extra = [p.replace("b=w.t()", "bt") for p in parts[1:]]
    return "_".join([f"m{m}_n{n}_k{k}"] + extra)


def prefill_case_name(row_name: str) -> str:
    """"B4 H32/8 N4096 D128 causal" -> "prefill_b4_h32_8_n4096_d128_causal"."""
    return "prefill_" + row_name.lower().replace("/", "_").replace(" ", "_")


def decode_case_name(row_name: str) -> str:
    """"B8 H32/8 KV32768 D128" -> "decode_b8_h32_8_kv32768_d128"."""
    return "decode_" + row_name.lower().replace("/", "_").replace(" ", "_")


def fp8_case_name(row_name: str) -> str:
    """"16x8192x8192" -> "m16_n8192_k8192" (b K-major, as the sweep passes it)."""
    m, n, k = row_name.split("x")
    return f"m{m}_n{n}_k{k}"


def _attention_cases():
    from tritondbg.kernels import attention as A

    out = []
    for B, H, HKV, N, D, causal in S.PREFILL:
        name = prefill_case_name(f"B{B} H{H}/{HKV} N{N} D{D}" + (" causal" if causal else ""))
        out.append(Case(name, params=dict(B=B, H=H, H_KV=HKV, N=N, D=D, causal=causal), dtypes=("bfloat16",),
                        interpret=False, description="sweep prefill shape"))
    for B, H, HKV, KV, D in S.DECODE:
        small = 2 * B * HKV * KV * D * 2 < (256 << 20)  # the sweep's launch-bound rows (graph column)
        out.append(Case(decode_case_name(f"B{B} H{H}/{HKV} KV{KV} D{D}"), params=dict(B=B, H=H, H_KV=HKV, S=KV, D=D),
                        dtypes=("bfloat16",), interpret=False, launch=A.attention_decode,
                        reference=A.reference_decode, perf_timing="graph" if small else "do_bench",
                        description="sweep decode shape"))
    return out


def _fp8_cases():
    return [Case(fp8_case_name(f"{M}x{N}x{K}"), params=dict(M=M, N=N, K=K, b_layout="nk"), dtypes=("float8_e4m3fn",),
                 interpret=False, perf_timing="graph" if M <= 16 else "do_bench", description="sweep fp8 shape")
            for M, N, K in S.FP8_SHAPES]


def _norm_cases():
    return [Case(norm_case_name(f"{M}x{N} ({size})"), params=dict(M=M, N=N), dtypes=("float16", "bfloat16"),
                 interpret=False, perf_timing="do_bench" if size == "big" else "graph",
                 description=f"sweep row, {size}")
            for M, N, size in S.norm_shapes(S.NORM_N, S.SIZES)]


def _gemm_cases():
    shapes = [(m, n, k, None, False) for m in S.GEMM_M for n, k in S.GEMM_NK] + \
        [(m, n, k, act, False) for m, n, k, act in S.GEMM_EXTRA]
    # b = w.t() (the sweep's --b-layout nk rows)
    shapes += [(m, n, k, None, True) for m in S.GEMM_M_NK for n, k in S.GEMM_NK] + \
        [(m, n, k, act, True) for m, n, k, act in S.GEMM_EXTRA]
    out = []
    for M, N, K, act, bt in shapes:
        name = gemm_case_name(f"{M}x{N}x{K}" + (f" {act}" if act else "") + (" b=w.t()" if bt else ""))
        out.append(Case(name, params=dict(M=M, N=N, K=K, activation=act, b_transposed=bt), dtypes=("bfloat16",),
                        interpret=False, perf_timing="graph" if M <= 17 else "do_bench", description="sweep shape"))
    return out


def _scenarios():
    from tritondbg import loader

    ln, sm, gm, at, f8 = (loader.load(name) for name in ("layernorm", "softmax", "gemm", "attention", "fp8_gemm"))
    return [dataclasses.replace(ln, name="layernorm_sweep", cases=_norm_cases(), source=""),
            dataclasses.replace(sm, name="softmax_sweep", cases=_norm_cases(), source=""),
            dataclasses.replace(gm, name="gemm_sweep", cases=_gemm_cases(), source=""),
            dataclasses.replace(at, name="attention_sweep", cases=_attention_cases(), source=""),
            dataclasses.replace(f8, name="fp8_gemm_sweep", cases=_fp8_cases(), source="")]


LAYERNORM_SWEEP, SOFTMAX_SWEEP, GEMM_SWEEP, ATTENTION_SWEEP, FP8_GEMM_SWEEP = _scenarios()
SCENARIOS = (LAYERNORM_SWEEP, SOFTMAX_SWEEP, GEMM_SWEEP, ATTENTION_SWEEP, FP8_GEMM_SWEEP)

# sweep group -> (scenario name, row name -> case name)
GROUPS = {"layernorm": ("layernorm_sweep", norm_case_name), "softmax": ("softmax_sweep", norm_case_name),
          "gemm": ("gemm_sweep", gemm_case_name), "prefill": ("attention_sweep", prefill_case_name),
          "decode": ("attention_sweep", decode_case_name), "fp8": ("fp8_gemm_sweep", fp8_case_name)}


def _row_key(r, cases: dict) -> tuple[str, str] | None:
    """(the perf gate's key ``scenario/case/dtype``, ``@graph`` for the launch-bound rows, which the gate times by
    graph replay; the row's field holding that time) for a sweep row, or None for rows of other groups, failed
    rows and rows of shapes the scenarios do not list."""
    if r.get("group") not in GROUPS or r.get("check") != "pass":
        return None
    scen, namer = GROUPS[r["group"]]
    case = cases[scen].get(namer(r["name"]))
    if case is None or r["dtype"] not in case.dtypes:
        return None
    if case.perf_timing == "graph":
        return f"{scen}/{case.name}/{r['dtype']}@graph", "ours_graph_ms"
    return f"{scen}/{case.name}/{r['dtype']}", "ours_ms"


def _cases() -> dict:
    return {s.name: {c.name: c for c in s.cases} for s in SCENARIOS}


def baseline_times(rows) -> dict[str, float]:
    """A sweep run's rows -> the perf gate's baseline ``times_ms`` (``_row_key``)."""
    cases, out = _cases(), {}
    for r in rows:
        hit = _row_key(r, cases)
        ms = r.get(hit[1]) if hit else None
        if ms is not None and ms == ms:
            out[hit[0]] = ms
    return out


def _literal(v: str):
    try:
        return ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return v


def row_configs(config: str) -> dict | None:
    """A sweep row's config column -> {kernel: its autotuned config} as the gate records them (``Pinning.used``),
    for rows the tl kernels served ("kernel: K=V,...; kernel: ..." as the sweep writes ``config_dict``, a race's
    note in parentheses dropped); None for the others (a race's Gluon pick, the row kernels' rule)."""
    config = config.split(" (race:")[0].strip()
    out = {}
    for seg in config.split("; "):
        name, sep, kv = seg.partition(": ")
        if not sep or not name.isidentifier() or "=" not in kv:
            return None
        pairs = [p.partition("=") for p in kv.split(",")]
        if not all(eq and k.isidentifier() for k, eq, _ in pairs):
            return None
        out[name] = {k: _literal(v) for k, _, v in pairs}
    return out or None


def baseline_configs(rows) -> dict[str, dict]:
    """A sweep run's rows -> the perf gate's baseline ``configs`` (key -> {kernel: config}): the tl autotuners'
    picks of the rows that recorded them, so that a gate run whose autotuner picked differently says so."""
    cases, out = _cases(), {}
    for r in rows:
        hit = _row_key(r, cases)
        configs = row_configs(r.get("config") or "") if hit else None
        if configs:
            out[hit[0]] = configs
    return out
