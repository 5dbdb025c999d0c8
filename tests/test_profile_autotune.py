"""Autotune capture without a GPU: a real @triton.autotune kernel under the interpreter, benchmarked by a
wall-clock ``do_bench`` (the default one needs a GPU driver), watched the way `profile` watches a launch."""
import time

import pytest
import torch
import triton
import triton.language as tl

from tritondbg.profile import autotune as at

pytestmark = pytest.mark.interpreter


def _bench(fn, quantiles=None, **_):
    """Wall-clock 'benchmark': a config with a bigger BLOCK runs fewer programs, so it is faster here."""
    t0 = time.perf_counter()
    fn()
    ms = (time.perf_counter() - t0) * 1e3
    return [ms, ms * 0.9, ms * 1.1]


def _prune(configs, named_args, **_):
    return [c for c in configs if c.kwargs["BLOCK"] <= 256]


CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=4),
           triton.Config({"BLOCK": 1024}, num_warps=8)]


def _make_kernel():
    @triton.autotune(configs=CONFIGS, key=["n"], do_bench=_bench, prune_configs_by={"early_config_prune": _prune})
    @triton.jit
    def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)

    return double_kernel


def _launch(kernel, n):
    x = torch.randn(n)
    y = torch.empty_like(x)
    kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, n)
    assert torch.equal(y, 2 * x)


def test_timed_decision_then_in_memory_cache_hit():
    kernel = _make_kernel()
    watch = at.AutotuneWatch([kernel])
    with watch.watching(listen=False):
        _launch(kernel, 2000)
    [d] = watch.decisions({}, {"double_kernel": "autotuned"}, interpret=True)
    assert d["timed"] and d["source"] == "benchmark" and d["cache_hit"] is False
    assert d["key"] == ["2000", "torch.float32", "torch.float32"] and d["key_names"] == ["n"]
    by_block = {e["config"]["BLOCK"]: e for e in d["configs"]}
    assert by_block[1024]["status"] == "pruned" and d["pruned"] == [by_block[1024]["config"]]
    timed = [e for e in d["configs"] if e["status"] == "timed"]
    assert len(timed) == 2
    for e in timed:
        assert e["p20_ms"] < e["p50_ms"] < e["p80_ms"]
    winner = min(timed, key=lambda e: e["p50_ms"])
    assert winner["winner"] and d["winner"] == winner["config"]
    assert d["bench_s"] > 0

    # same key again: the autotuner answers from its cache; the decision keeps the timings it was made on
    again = at.AutotuneWatch([kernel])
    with again.watching(listen=False):
        _launch(kernel, 2000)
    [hit] = again.decisions({}, {"double_kernel": "autotuned"}, interpret=True)
    assert hit["cache_hit"] is True and hit["source"] == "in-memory cache"
    assert hit["configs"] == d["configs"] and hit["winner"] == d["winner"]


def test_one_decision_per_key_however_often_the_launch_calls_the_kernel():
    """A launch calling the kernel in a loop (the attention race times its tl path ~20 times) reports each key
    once, with the calls it answered; the trace's autotune track draws that benchmark once."""
    from tritondbg.profile import trace_events

    kernel = _make_kernel()
    watch = at.AutotuneWatch([kernel])
    with watch.watching(listen=False):
        for n in (3000, 3000, 3000, 700, 3000):
            _launch(kernel, n)
    ds = watch.decisions({}, {"double_kernel": "autotuned"}, interpret=True)
    assert [(d["key"][0], d["source"], d["calls"]) for d in ds] == [("3000", "benchmark", 4), ("700", "benchmark", 1)]
    track = [e for e in trace_events.autotune_events(ds, 0.0) if e.get("ph") == "X"]
    assert len(track) == 2 * 2  # two keys, two benchmarked configs each (BLOCK=1024 pruned)
    assert sum(e["args"]["winner"] for e in track) == 2


def test_watch_chains_with_another_tools_wrapper_and_restores_it():
    kernel = _make_kernel()
    seen = []
    original_run = kernel.run

    def other_tool(*args, **kwargs):  # e.g. a tracer that wrapped this autotuner before us
        seen.append(args[2])
        return original_run(*args, **kwargs)

    kernel.run = other_tool
    watch = at.AutotuneWatch([kernel])
    with watch.watching(listen=False):
        _launch(kernel, 600)
        assert kernel.run is not other_tool
    assert kernel.run is other_tool  # put back exactly
    assert seen == [600]
    assert watch.decisions({}, {"double_kernel": "autotuned"}, interpret=True)[0]["timed"]
    del kernel.run
    assert "run" not in vars(kernel)


def test_pinned_decision_is_untimed_with_the_config_that_ran():
    kernel = _make_kernel()
    watch = at.AutotuneWatch([kernel])
    used = {"BLOCK": 256, "num_warps": 4, "num_stages": 3}
    [d] = watch.decisions({"double_kernel": used}, {"double_kernel": "case"}, interpret=True)
    assert d["timed"] is False and d["source"] == "pinned (case)" and d["winner"] == used
    assert "cannot benchmark without a GPU" in d["note"]
    assert [e["status"] for e in d["configs"]] == ["not run", "ran", "not run"]


def test_listener_is_chained_and_restored():
    from triton import knobs

    if not hasattr(knobs.autotuning, "listener"):
        pytest.skip("Triton < 3.8 has no autotuning listener (the attributes are read instead)")
    theirs = []

    def their_listener(**kw):
        theirs.append(kw["key"])

    old = knobs.autotuning.listener
    knobs.autotuning.listener = their_listener
    try:
        events = []
        kernel = _make_kernel()
        with at._listening(events):
            assert knobs.autotuning.listener is not their_listener
            knobs.autotuning.listener(fn=kernel.fn, key=(7, "torch.float32"), best_config=CONFIGS[0],
                                      configs_timings={CONFIGS[0]: [1.0, 0.9, 1.1]}, duration=0.5, cache_hit=False)
        assert knobs.autotuning.listener is their_listener
        assert theirs == [(7, "torch.float32")]
        assert events == [{"fn": "double_kernel", "key": (7, "torch.float32"), "cache_hit": False, "duration": 0.5}]
    finally:
        knobs.autotuning.listener = old


def test_timing_entry_marks_failed_configs():
    e = at.timing_entry(CONFIGS[0], [float("inf"), float("inf"), float("inf")], CONFIGS[1])
    assert e["status"] == "failed" and e["p50_ms"] is None and e["winner"] is False
    e = at.timing_entry(CONFIGS[1], 0.25, CONFIGS[1])
    assert e["status"] == "timed" and e["p50_ms"] == 0.25 and e["p20_ms"] is None and e["winner"]


def test_the_gemm_race_decided_during_a_launch_is_a_timed_decision(monkeypatch):
    """kernels/_race.py's race (Hopper gemm / fp8_gemm: the tl path against the Gluon tiles) shows up as a
    decision of the launch that ran it: every contender's median, the failed ones with their reason, the winner;
    a race decided before the watch began does not. The console, the trace's autotune track and the TensorBoard
    hparams read it as they read an autotuner's."""
    from tritondbg.kernels import _gemm_ws as WS, _race as R
    from tritondbg.profile import console, trace_events

    old = {"tl": 30.0, "ws": {}, "pick": None, "tiles": {}, "key": {"op": "gemm", "M": 1}}
    monkeypatch.setattr(R, "DECISIONS", {"old": old})
    watch = at.AutotuneWatch([])
    cfgs = WS.candidates(127)
    names = [WS.config_name(c) for c in cfgs]
    with watch.watching(listen=False):
        R.DECISIONS["new"] = {"tl": 22.0, "ws": {names[0]: 20.0, names[1]: "wrong result", names[2]: 25.0},
                               "pick": names[0], "tiles": {n: WS.tile_dict(c) for n, c in zip(names, cfgs)},
                               "key": {"op": "gemm", "M": 127, "N": 4096, "K": 4096, "dtype": "bfloat16",
                                       "b": "w.t()"}}
    (d,) = watch.decisions({}, {}, interpret=False)
    assert d["kernel"] == "gemm race" and d["timed"] and d["source"] == "race"
    assert d["key"] == ["127", "4096", "4096", "bfloat16", "w.t()"] and d["key_names"][:3] == ["M", "N", "K"]
    by = {e["config"].get("BLOCK_M", "tl"): e for e in d["configs"]}
    assert len(d["configs"]) == 4 and d["configs"][0]["config"] == {"path": "tl kernels"}
    assert d["configs"][0]["p50_ms"] == pytest.approx(0.022) and not d["configs"][0]["winner"]
    win = [e for e in d["configs"] if e["winner"]]
    assert len(win) == 1 and win[0]["config"]["BLOCK_M"] == cfgs[0][0] and win[0]["p50_ms"] == pytest.approx(0.02)
    assert d["winner"] == win[0]["config"] and win[0]["config"]["path"] == "gluon_gemm_kernel"
    bad = d["configs"][2]
    assert bad["status"] == "failed" and bad["reason"] == "wrong result" and bad["p50_ms"] is None
    assert "tl" in by
    text = "\n".join(console._decision_lines(d))
    assert "gemm race key=(127, 4096, 4096, bfloat16, w.t())" in text and "failed (wrong result)" in text
    assert "20.0 us" in text and "p20" not in text
    events = trace_events.autotune_events([d], 0.0)
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == 4 and sum(e["args"]["winner"] for e in spans) == 1
    # nothing new: no decision (the watch never imports the race module itself)
    watch2 = at.AutotuneWatch([])
    with watch2.watching(listen=False):
        pass
    assert watch2.decisions({}, {}, interpret=False) == []


def _cudagraph_like(fn, quantiles=None, **_):  # calls do_bench_cudagraph by name only (never reached here)
    from triton.testing import do_bench_cudagraph

    return do_bench_cudagraph(fn, quantiles=quantiles) if False else _bench(fn, quantiles)


def _synced(fn, quantiles=None, **_):  # synchronises before it (kernels/_autotune.py's gpu_time_bench does)
    import torch
    from triton.testing import do_bench_cudagraph

    torch.cuda.synchronize() if False else None
    return do_bench_cudagraph(fn, quantiles=quantiles) if False else _bench(fn, quantiles)


def test_a_benchmark_on_do_bench_cudagraph_without_a_synchronize_is_said():
    """Triton's do_bench_cudagraph times on a new stream that does not wait for the caller's (session 57: wrong and
    NaN results on an H100); a user's autotuner that benchmarks with it, unsynchronised, gets the note on its
    decision; one that synchronises first, Triton's default do_bench and the bundled kernels' timer do not."""
    import functools
    import warnings

    import triton.testing

    from tritondbg.kernels import _autotune

    def tuner(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (use_cuda_graph)
            return triton.autotune(configs=CONFIGS[:2], key=["n"], **kw)(_make_kernel().fn)

    from tritondbg import standin

    # (Triton's own: the interpreter's stand-in, installed in this process, replaces it in triton.testing)
    graph = standin._state.get("bench", {}).get("do_bench_cudagraph", triton.testing.do_bench_cudagraph)
    assert graph.__module__ == "triton.testing"
    flagged = [tuner(do_bench=graph), tuner(do_bench=functools.partial(graph, rep=10)),
               tuner(do_bench=_cudagraph_like), tuner(use_cuda_graph=True)]
    assert [at.unsynced_graph_bench(t) for t in flagged] == [True] * 4
    fine = [tuner(), tuner(do_bench=_synced), tuner(do_bench=_autotune.gpu_time_bench), tuner(do_bench=_bench)]
    assert [at.unsynced_graph_bench(t) for t in fine] == [False] * 4
    kernel = tuner(do_bench=_cudagraph_like)
    watch = at.AutotuneWatch([kernel])
    with watch.watching(listen=False):
        _launch(kernel, 300)
    [d] = watch.decisions({}, {"double_kernel": "autotuned"}, interpret=True)
    assert d["source"] == "benchmark" and d["note"] == at.GRAPH_BENCH_NOTE, d
