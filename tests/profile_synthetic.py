"""A synthetic GPU profile run record (as `tritondbg profile` fills it on an H200), for the exporter tests on
the CPU: report.html, the trace's autotune track, TensorBoard summaries. No kernel runs."""
from __future__ import annotations


def entry(cfg: dict, p50, status: str, winner: bool = False) -> dict:
    return {"config": cfg, "p50_ms": p50, "p20_ms": p50 and p50 * 0.9, "p80_ms": p50 and p50 * 1.1,
            "status": status, "winner": winner}


GEMM_CONFIGS = [
    entry({"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4}, 0.25, "timed"),
    entry({"BLOCK_M": 128, "BLOCK_N": 256, "num_warps": 8}, 0.2, "timed", True),
    entry({"BLOCK_M": 256, "BLOCK_N": 256, "num_warps": 8}, None, "failed"),
    entry({"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4}, None, "pruned"),
]


def gemm_decision() -> dict:
    return {"kernel": "gemm_kernel", "key_names": ["M", "N", "K"], "key": ["4096", "4096", "4096", "torch.bfloat16"],
            "timed": True, "source": "benchmark", "cache_hit": False,
            "winner": dict(GEMM_CONFIGS[1]["config"]), "configs": [dict(e) for e in GEMM_CONFIGS],
            "pruned": [GEMM_CONFIGS[3]["config"]], "bench_s": 1.25, "listener": True, "note": ""}


def add_decision() -> dict:
    return {"kernel": "add_kernel", "key_names": ["n"], "key": None, "timed": False, "source": "pinned (case)",
            "cache_hit": False, "winner": {"BLOCK": 1024, "num_warps": 4},
            "configs": [{"config": {"BLOCK": 1024, "num_warps": 4}, "p50_ms": None, "p20_ms": None, "p80_ms": None,
                         "status": "ran", "winner": True},
                        {"config": {"BLOCK": 2048, "num_warps": 8}, "p50_ms": None, "p20_ms": None,
                         "p80_ms": None, "status": "not run", "winner": False}],
            "pruned": [], "bench_s": None, "listener": False, "note": "pinned by case: not benchmarked"}


def synthetic_record(run_dir: str = "/tmp/out/20260101-000000-profile-all-1"):
    from tritondbg.profile import peaks
    from tritondbg.profile.summary import derive
    from tritondbg.record import CaseResult, RunRecord

    spec = {"source": "spec", "device": "NVIDIA H200", "figures": peaks.spec_peaks("NVIDIA H200")}
    rec = RunRecord(command="profile gemm add", environment={"gpu": "NVIDIA H200", "torch": "2.11.0",
                                                             "triton": "3.6.0"})
    rows = (("gemm", "square_4096", "bfloat16", 2 * 4096.0 ** 3, 3 * 4096.0 ** 2 * 2, 0.2, 0.19, [gemm_decision()]),
            ("add", "big", "float32", 64 * 2.0 ** 20, 12 * 64 * 2.0 ** 20, 0.19, 0.2, [add_decision()]))
    for kernel, case, dtype, flops, nbytes, ms, tms, decisions in rows:
        r = CaseResult(kernel=kernel, case=case, dtype=dtype, mode="compiled", device="cuda", seed=0, params={})
        r.flops, r.bytes = flops, nbytes
        r.config = {decisions[0]["kernel"]: decisions[0]["winner"]}
        r.config_source = {decisions[0]["kernel"]: "autotuned"}
        r.extra["profile"] = {
            "timing": "gpu", "autotune": decisions,
            "kernel": {"median_ms": ms, "p20_ms": ms * 0.95, "p80_ms": ms * 1.05, "method": "triton.testing.do_bench"},
            "torch": {"label": "torch", "kind": "baseline", "median_ms": tms},
            "trace": f"{kernel}-{case}-{dtype}.1.pt.trace.json",
            "timeline": {"unit": "us", "launches": [[i * 300.0, 20.0] for i in range(5)],
                         "gpu_kernels": [[i * 300.0 + 25, ms * 1e3, f"{kernel}_kernel"] for i in range(5)],
                         "torch": [[1600.0 + i * 250, 15.0] for i in range(5)]},
        }
        r.extra["profile"]["metrics"] = derive(r, spec)
        rec.results.append(r)
    rec.extra["profile"] = {"run_dir": run_dir, "mode": "compiled", "timing": "gpu", "note": "", "peaks": spec,
                            "traces": [r.extra["profile"]["trace"] for r in rec.results], "report": "report.html"}
    return rec
