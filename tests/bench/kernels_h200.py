"""Bundled kernels against their vendor baselines on the local GPU, in the same run (issue 7's table).

    python tests/bench/kernels_h200.py [--only gemm,attention] [--cases square_4096] [--json out.json]
    python tests/bench/kernels_h200.py --only gemm,tests/bench/variants/my_gemm.py::my_gemm  # a variant beside

For every GPU-size case of every bundled scenario: our launch and the baseline(s), median of
triton.testing.do_bench on fresh random inputs (the scenario's make_inputs, seed 0), in ROUNDS interleaved
rounds (ours, each baseline, ours, ...: the same GPU history on both sides; each side's time is the median of
its rounds), the ratio baseline_time / our_time (> 1: we are faster), TFLOP/s or TB/s. Prints a markdown table.
Needs a CUDA GPU; runs each kernel compiled and autotuned as a user's first call would.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys

os.environ.setdefault("TRITON_INTERPRET", "0")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
ROUNDS = 3  # interleaved do_bench rounds per side (bench_case)
REP_MS = 200  # do_bench's rep (ms of timing) per round

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from tritondbg import loader, runner  # noqa: E402


def _copy_baseline(inputs):
    x = next(v for v in inputs.values() if isinstance(v, torch.Tensor))
    out = torch.empty_like(x)
    return {"copy": lambda: out.copy_(x)}


def _sdpa(q, k, v, causal, backend=None):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gqa = q.shape[1] != k.shape[1]  # grouped-query heads: SDPA must be told (else a shape error)

    def call():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **({"enable_gqa": True} if gqa else {}))
    if backend is None:
        return call
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]

    def with_backend():
        with sdpa_kernel(be):
            return call()
    return with_backend


def base_kind(scenario) -> str:
    """Which bundled kernel a scenario measures against: its own name, or, for a variant scenario (e.g.
    tests/bench/variants/*.py, built with dataclasses.replace on a bundled one), the bundled scenario whose
    make_inputs it shares."""
    names = loader.bundled_names()
    if scenario.name in names:
        return scenario.name
    for name in names:
        if loader.load(name).make_inputs is scenario.make_inputs:
            return name
    # a variant that wraps its base's make_inputs (extra layouts for its own cases): named after its base
    for name in sorted(names, key=len, reverse=True):
        if scenario.name.startswith(name + "_"):
            return name
    return scenario.name


def baselines(kernel: str, inputs: dict) -> dict:
    """name -> zero-argument callable: the vendor baseline(s) for one scenario's inputs."""
    if kernel == "gemm":
        a, b, act = inputs["a"], inputs["b"], inputs.get("activation")
        fn = {None: lambda x: x, "gelu": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu}[act]
        return {"torch.matmul" + (f"+{act}" if act else ""): lambda: fn(torch.matmul(a, b))}
    if kernel == "fp8_gemm":
        a, b = inputs["a"], inputs["b"]
        bt = b.t().contiguous().t()  # _scaled_mm wants b column-major
        sa = inputs["scale_a"].reshape(()).float()
        sb = inputs["scale_b"].reshape(()).float()
        return {"torch._scaled_mm": lambda: torch._scaled_mm(a, bt, scale_a=sa, scale_b=sb,
                                                             out_dtype=inputs["out_dtype"])}
    if kernel == "attention":
        if "q" in inputs and inputs["q"].dim() == 3:  # decode
            q = inputs["q"].unsqueeze(2)
            k, v = inputs["k_cache"], inputs["v_cache"]
            return {"sdpa default": _sdpa(q, k, v, False), "sdpa flash": _sdpa(q, k, v, False, "flash")}
        q, k, v, causal = inputs["q"], inputs["k"], inputs["v"], inputs["causal"]
        return {"sdpa flash": _sdpa(q, k, v, causal, "flash"), "sdpa cudnn": _sdpa(q, k, v, causal, "cudnn")}
    if kernel == "layernorm":
        x, w, b, eps = inputs["x"], inputs["weight"], inputs["bias"], inputs["eps"]
        return {**_copy_baseline(inputs), "F.layer_norm": lambda: F.layer_norm(x, x.shape[-1:], w, b, eps)}
    if kernel == "softmax":
        x = inputs["x"]
        return {**_copy_baseline(inputs), "torch.softmax": lambda: torch.softmax(x, -1)}
    if kernel == "add":
        x, y = inputs["x"], inputs["y"]
        return {"torch.add": lambda: torch.add(x, y)}
    return {}


def _graph_ms(fn):
    """Median time of ``fn`` replayed from a CUDA graph (do_bench_cudagraph): the GPU time without the
    per-call Python/launch cost, which plain do_bench includes once it exceeds the GPU time (decode shapes,
    4096x1024 rows: a bare Triton launch costs ~24 us of host time on the H200 VM). None if not capturable.
    Unlike do_bench it does not flush the L2 between calls: inputs under ~50 MB stay in the H200's L2 from
    one replay to the next, so its bandwidth figures for small shapes are L2-warm (the ratio is still fair:
    both sides replay the same way). do_bench's flush, for its part, leaves ~50 MB of dirty lines that the
    timed kernel's reads evict (a floor of ~12 us on any kernel, the fp8 decode helper's reading of FACTS)."""
    from tritondbg.check.perf import time_ms

    try:
        return time_ms(fn, "graph", rep=100)
    except Exception:  # noqa: BLE001 - a wrapper that cannot be captured just has no graph column
        return None


def interleaved(fns: dict, rounds: int = ROUNDS, rep: int = REP_MS, warmup: int = 25) -> dict:
    """name -> list of do_bench medians (ms), one per round, the sides timed in turn (a, b, ..., a, b, ...).

    A tensor-core-bound kernel's do_bench moves by up to ~7% with what the GPU did in the seconds before
    (tests/bench/profile.md); alternating gives every side the same history. Take the median of the rounds."""
    runs = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            runs[name].append(do_bench(fn, warmup=warmup, rep=rep))
    return runs


def bench_case(scenario, case, dtype_name):
    # Correct first: the launch (autotuned, as a user's first call) against the fp32 reference on these
    # inputs; a wrong result is timed anyway but its row says so (a miscompiled variant must not look fast).
    check = runner.run_case(scenario, case, dtype_name, device="cuda", seed=0)
    torch.cuda.empty_cache()
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator().manual_seed(0)
    inputs = scenario.make_inputs(case, dtype, "cuda", gen)
    launch = scenario.launch_for(case)
    launch(**inputs)  # autotune + compile outside the timing
    torch.cuda.synchronize()
    ours_fn = lambda: launch(**inputs)  # noqa: E731
    fns = {}
    errors = {}
    for name, fn in baselines(base_kind(scenario), inputs).items():
        try:
            fn()
            torch.cuda.synchronize()
            fns[name] = fn
        except Exception as e:  # a backend missing for this shape is a row note, not a crash
            errors[name] = {"error": f"{type(e).__name__}: {str(e)[:80]}"}
    runs = interleaved({"ours": ours_fn, **fns})
    ours = statistics.median(runs["ours"])
    ours_graph = _graph_ms(ours_fn)
    flops = scenario.flops(case, dtype) if scenario.flops else None
    nbytes = scenario.bytes(case, dtype) if scenario.bytes else None
    row = {"kernel": scenario.name, "case": case.name, "dtype": dtype_name, "ours_ms": ours,
           "ours_graph_ms": ours_graph, "check": check.status,
           "check_message": check.message or "; ".join(f"{e.name}: max abs err {e.max_abs:.3g}" for e in check.errors),
           "tflops": flops / ours / 1e9 if flops else None, "tbps": nbytes / ours / 1e9 if nbytes else None,
           "rounds_ms": runs, "baselines": dict(errors)}
    for name, fn in fns.items():
        t = statistics.median(runs[name])
        entry = {"ms": t, "ratio": t / ours}
        tg = _graph_ms(fn)
        if tg is not None and ours_graph is not None:
            entry.update(graph_ms=tg, graph_ratio=tg / ours_graph)
        if name == "copy":  # copy of x: read + write of x's bytes; ours as % of copy bandwidth
            x_bytes = 2 * next(v for v in inputs.values() if isinstance(v, torch.Tensor)).nbytes
            entry["copy_tbps"] = x_bytes / t / 1e9
            entry["pct_of_copy"] = 100 * (nbytes / ours) / (x_bytes / t) if nbytes else None
        row["baselines"][name] = entry
    from tritondbg.configs import autotuners, config_dict
    row["configs"] = {k: config_dict(t.best_config) for k, t in autotuners(scenario.kernels).items()
                      if getattr(t, "best_config", None) is not None}
    # every benchmarked config's median (ms), so one run shows how far the runners-up were
    row["config_timings"] = {k: {", ".join(f"{a}={b}" for a, b in config_dict(c).items()): _p50(v)
                                 for c, v in (getattr(t, "configs_timings", None) or {}).items()}
                             for k, t in autotuners(scenario.kernels).items()}
    return row


def _p50(v):
    return v[0] if isinstance(v, (list, tuple)) else v


def markdown(rows, meta) -> str:
    lines = [f"Date {meta['date']}, GPU {meta['gpu']}, Triton {meta['triton']}, torch {meta['torch']}.",
             f"Command: `{meta['command']}`", "",
             f"do_bench: plain `triton.testing.do_bench` in {ROUNDS} interleaved rounds per side (ours, baselines, "
             "ours, ...; median of the rounds; L2 flushed before each call; the per-call host cost "
             "shows once it exceeds the GPU time); graph: `do_bench_cudagraph` (replayed launches, no host cost, "
             "no L2 flush: inputs under ~50 MB are L2-warm).", "",
             "| kernel | case | dtype | ours | ours (graph) | TFLOP/s | TB/s | baseline | baseline time | ratio "
             "(base/ours) | baseline (graph) | ratio (graph) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for i, (name, b) in enumerate(r["baselines"].items() or [("-", {})]):
            first = i == 0
            g = r.get("ours_graph_ms")
            wrong = f" ({r['check'].upper()}: {r.get('check_message', '')})" if r.get("check", "pass") != "pass" else ""
            cells = [r["kernel"] if first else "", r["case"] if first else "", r["dtype"] if first else "",
                     f"{r['ours_ms'] * 1e3:.1f} µs{wrong}" if first else "",
                     (f"{g * 1e3:.1f} µs" if g else "-") if first else "",
                     f"{r['tflops']:.0f}" if first and r["tflops"] else "",
                     f"{r['tbps']:.2f}" if first and r["tbps"] else "", name]
            if "error" in b:
                cells += [b["error"], "", "", ""]
            elif b:
                extra = f" ({b['pct_of_copy']:.0f}% of copy)" if b.get("pct_of_copy") else ""
                cells += [f"{b['ms'] * 1e3:.1f} µs", f"{b['ratio']:.2f}×{extra}",
                          f"{b['graph_ms'] * 1e3:.1f} µs" if b.get("graph_ms") else "-",
                          f"{b['graph_ratio']:.2f}×" if b.get("graph_ratio") else "-"]
            else:
                cells += ["", "", "", ""]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated kernels or scenario files (path.py::name, e.g. "
                    "the variants in tests/bench/variants/); default: every bundled kernel")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: every GPU case)")
    ap.add_argument("--json", default=None, help="also write the rows as JSON here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    runner.set_mode("compiled")
    only = [k for k in args.only.split(",") if k] or loader.bundled_names()
    wanted_cases = [c for c in args.cases.split(",") if c]
    rows = []
    for name in only:
        scenario = loader.load(name)
        for case in scenario.cases:
            if case.interpret or (wanted_cases and case.name not in wanted_cases):
                continue
            for dtype_name in case.dtypes:
                row = bench_case(scenario, case, dtype_name)
                rows.append(row)
                print(json.dumps(row), flush=True)
                torch.cuda.empty_cache()
    meta = {"date": dt.date.today().isoformat(), "gpu": torch.cuda.get_device_name(),
            "triton": triton.__version__, "torch": torch.__version__,
            "command": "python " + " ".join(sys.argv)}
    print(markdown(rows, meta))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
