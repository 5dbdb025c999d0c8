"""The H200 bench script's CPU-side logic: which baseline a variant scenario is measured against, and the
table it prints (the timings themselves need a GPU: tests/gpu)."""
import dataclasses
import importlib.util
import json

from conftest import REPO


def _bench_module():
    spec = importlib.util.spec_from_file_location("kernels_h200", REPO / "tests/bench/kernels_h200.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # TRITON_INTERPRET is already 1 here (conftest); setdefault keeps it
    return mod


def test_variant_scenario_is_measured_against_its_bundled_base(tmp_path):
    from tritondbg import loader

    bench = _bench_module()
    gemm = loader.load("gemm")
    variant = dataclasses.replace(gemm, name="gemm_variant_x")
    assert bench.base_kind(gemm) == "gemm"
    assert bench.base_kind(variant) == "gemm"
    other = dataclasses.replace(gemm, name="mine", make_inputs=lambda *a: {})
    assert bench.base_kind(other) == "mine"  # no bundled base: no baselines, not a wrong one
    wrapped = dataclasses.replace(gemm, name="gemm_tma", make_inputs=lambda *a: {})  # wraps its base's inputs
    assert bench.base_kind(wrapped) == "gemm"
    # a variant file (loaded by path, as `kernels_h200.py --only path.py::name` does)
    variant_file = tmp_path / "softmax_probe.py"
    variant_file.write_text("import dataclasses\nfrom tritondbg.scenarios.softmax import SCENARIO as _S\n"
                            "SCENARIO = dataclasses.replace(_S, name='softmax_probe')\n")
    assert bench.base_kind(loader.load(f"{variant_file}::softmax_probe")) == "softmax"


def test_markdown_has_do_bench_and_graph_columns():
    bench = _bench_module()
    rows = [{"kernel": "gemm", "case": "square_4096", "dtype": "bfloat16", "ours_ms": 0.2, "ours_graph_ms": 0.19,
             "tflops": 687.2, "tbps": None,
             "baselines": {"torch.matmul": {"ms": 0.19, "ratio": 0.95, "graph_ms": 0.18, "graph_ratio": 0.947},
                           "broken": {"error": "RuntimeError: no"}}}]
    meta = {"date": "2026-11-29", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "python x"}
    text = bench.markdown(rows, meta)
    lines = [line for line in text.splitlines() if line.startswith("| gemm") or line.startswith("|  |")]
    header = next(line for line in text.splitlines() if line.startswith("| kernel"))
    assert header.count("|") == lines[0].count("|") == lines[1].count("|")  # every row fills every column
    assert "200.0 µs" in lines[0] and "190.0 µs" in lines[0] and "0.95×" in lines[0] and "0.95×" in lines[0]
    assert "180.0 µs" in lines[0] and lines[0].rstrip(" |").endswith("0.95×")
    assert "RuntimeError: no" in lines[1]
    assert "FAIL" not in text
    rows[0].update(check="fail", check_message="out: max abs err 3.2")
    assert "200.0 µs (FAIL: out: max abs err 3.2)" in bench.markdown(rows, meta)  # a wrong kernel never looks fast


def test_gpu_bench_scripts_say_they_need_a_gpu_in_one_line(cli_env):
    """Without CUDA the H200 scripts exit 2 with one line, not a traceback."""
    import subprocess
    import sys

    for script in ("tests/bench/read_floor.py", "tests/bench/decode_splits.py", "tests/bench/kernels_h200.py",
                   "tests/bench/sweep_h200.py", "tests/bench/explore_prefill.py", "tests/bench/explore_fp8.py",
                   "tests/bench/explore_gemm_mid_m.py", "tests/bench/explore_prefill_timer.py",
                   "tests/bench/explore_gemm_ws.py", "tests/bench/explore_rows_small.py",
                   "tests/bench/gluon_gemm.py", "tests/bench/balance_probe.py", "tests/bench/gluon_decode.py",
                   "tests/bench/decode_configs.py", "tests/bench/host_breakdown.py",
                   "tests/bench/explore_static_launch.py", "tests/bench/host_add.py"):
        p = subprocess.run([sys.executable, str(REPO / script)], env=dict(cli_env, CUDA_VISIBLE_DEVICES=""),
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 2 and p.stderr.strip() == "needs a CUDA GPU", (script, p.stderr[-500:])


def test_explore_rows_small_candidates_cover_the_rule_and_fit_the_rows():
    import triton

    from tritondbg.kernels import softmax as SM

    spec = importlib.util.spec_from_file_location("explore_rows_small", REPO / "tests/bench/explore_rows_small.py")
    E = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(E)

    for M, N in ((2048, 128), (341, 768), (64, 4096), (3, 1000)):
        cands = E.candidates(N, M, 2)
        assert cands and SM.config_for(N, 2, M=M) in cands, (M, N)
        for c in cands:
            assert c.rows <= triton.next_power_of_2(M) and c.rows * c.block_n * 2 <= 16384
            assert 4 <= c.rows * c.block_n // (32 * c.num_warps) <= 64


def test_explore_gemm_ws_kernel_is_right_on_the_interpreter(cli_env, tmp_path):
    """tests/bench/explore_gemm_ws.py's warp-specialised gemm, every config, on a shape no tile divides (TMA
    zero-fill and clipping do the edges), under the interpreter: every row checked against the fp32 product."""
    import subprocess
    import sys

    out = tmp_path / "ws.json"
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/explore_gemm_ws.py"), "--device", "cpu",
                        "--shapes", "70x48x96", "--dtype", "float16", "--out", str(out)],
                       env=dict(cli_env, TRITON_INTERPRET="1"), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2 + 7 and all(r.get("rel_err", 1) < 1e-2 and "error" not in r for r in rows), rows


def test_gluon_gemm_compiles_warp_specialised_wgmma_tma_for_sm90_on_the_cpu(cli_env):
    """tests/bench/gluon_gemm.py --compile-only: the hand-written Gluon gemm (2 consumer warpgroups) compiles for
    sm_90 without a GPU to PTX with wgmma, TMA (cp.async.bulk.tensor), mbarriers and setmaxnreg, no spills."""
    import re
    import subprocess
    import sys

    import pytest

    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_gemm.py"), "--compile-only", "--configs", "1"],
                       env=dict(cli_env, TRITON_DEFAULT_FP_FUSION="1"), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("128x128x64 s5 w8"))
    pairs = re.findall(r"(wgmma|cp\.async\.bulk\.tensor|mbarrier|setmaxnreg|spills) (\d+)", line)
    counts = {k: int(v) for k, v in pairs}
    assert counts["wgmma"] > 0 and counts["cp.async.bulk.tensor"] > 0 and counts["mbarrier"] > 0, line
    assert counts["setmaxnreg"] > 0 and counts["spills"] == 0, line  # warp-specialised, nothing spilled
    bad = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_gemm.py"), "--compile-only", "--configs", "99"],
                         env=cli_env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr[-500:]


def test_every_tile_gemm_races_compiles_for_sm90_in_both_b_layouts(cli_env):
    """The Gluon tiles kernels/_gemm_ws.py races (every M class), b row-major and b = w.t(): each compiles for
    sm_90 on this Triton without a GPU, warp-specialised (setmaxnreg), with wgmma and TMA, and spills nothing.
    (A tile that failed to build on a user's Triton would only drop out of the race; this keeps them all in.)"""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    sys.path.insert(0, str(REPO))
    from tritondbg.kernels import _gemm_ws as WS

    want = {WS.config_name(c).split(": ")[1].replace(" pingpong", " pp").replace(" split-K", " sk")
            .replace(" split tail", " st") for m in (64, 256, 1024) for c in WS.candidates(m)}
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_gemm.py"), "--compile-only", "--configs", "race"],
                       env=dict(cli_env, TRITON_DEFAULT_FP_FUSION="1"), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    lines = [ln for ln in p.stdout.splitlines() if " regs " in ln or " FAILED " in ln]
    assert len(lines) == 2 * len(want) and not any(" FAILED " in ln for ln in lines), p.stdout[-3000:]
    got = {ln.split("  ")[0].replace(" b=w.t()", "").strip() for ln in lines}
    assert got == want, (got, want)
    for ln in lines:
        assert "spills 0 B" in ln and " wgmma 0 " not in ln and "setmaxnreg -" not in ln, ln
        assert "SERIALISED" not in ln, ln  # ptxas keeps the wgmma pipeline (no C7514)
        # split-K's merge (and the split tail's) keeps its memory ordering: the counter's gpu-scope acq_rel atomic,
        # partials re-read from L2
        split = any(f in ln.split("  ")[0] + " " for f in (" sk ", " st "))
        assert ("atom.acq_rel 0 " in ln) != split and ("ld.global.cg 0" in ln.split("atom.acq_rel")[1]) != split, ln


def test_every_tile_fp8_gemm_races_compiles_with_the_pipelined_promotion_unserialised(cli_env):
    """fp8_gemm's raced tiles (precise accumulation: each BLOCK_K partial added while the next stage's wgmma runs)
    compile for sm_90 on the CPU with no spills, and ptxas does not serialise their wgmma (C7514): the loop
    alternates two partials, where one carried partial would make ptxas serialise every wgmma."""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    sys.path.insert(0, str(REPO))
    from tritondbg.kernels import _gemm_ws as WS

    p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_gemm.py"), "--compile-only", "--fp8",
                        "--configs", "race"], env=dict(cli_env, TRITON_DEFAULT_FP_FUSION="1"), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    lines = [ln for ln in p.stdout.splitlines() if " regs " in ln or " FAILED " in ln]
    want = {WS.config_name(c).split(": ")[1] for m in (64, 1024) for c in WS.candidates(m, fp8=True)}
    assert len(lines) == len(want), p.stdout[-3000:]
    assert {ln.split("  ")[0].strip() for ln in lines} == want
    for ln in lines:
        assert "spills 0 B" in ln and "SERIALISED" not in ln and "not run" not in ln, ln
        assert int(ln.split(" wgmma ")[1].split()[0]) >= 12, ln  # prologue, two unrolled stages, the tail


def test_gluon_gemm_wrapper_launch_binds_and_compiles_through_tritondbg_ir(cli_env, tmp_path):
    """The host wrapper's launch (descriptors, constexprs, num_warps/maxnreg options) goes through Triton's binder:
    `tritondbg ir` on a scenario around gluon_gemm captures it on the CPU and shows sm_90 PTX with wgmma."""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    (tmp_path / "gscen.py").write_text(
        "import sys\nimport torch\n"
        f"sys.path.insert(0, {str(REPO / 'tests' / 'bench')!r})\n"
        "import gluon_gemm as GG\nfrom tritondbg import Case, Scenario\n"
        "def make_inputs(case, dtype, device, generator):\n"
        "    return dict(a=torch.randn(130, 72, generator=generator).to(device=device, dtype=dtype),\n"
        "                b=torch.randn(72, 136, generator=generator).to(device=device, dtype=dtype))\n"
        "SCENARIO = Scenario(name='gluon_gemm', description='g', make_inputs=make_inputs,\n"
        "    launch=lambda a, b: GG.gluon_gemm(a, b, num_sms=132), reference=lambda a, b: a.float() @ b.float(),\n"
        "    kernels=[GG.gluon_gemm_kernel], cases=[Case('tiny', params={}, dtypes=('bfloat16',))])\n")
    env = dict(cli_env, TRITON_DEFAULT_FP_FUSION="1", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-m", "tritondbg", "ir", f"{tmp_path / 'gscen.py'}::gluon_gemm",
                        "--stage", "ptx"], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "wgmma.mma_async" in p.stdout and "setmaxnreg" in p.stdout
    assert "num_warps=8" in p.stderr and "maxnreg=168" in p.stderr  # the wrapper's defaults reached the compile
    # Gluon has no TTIR: asking for it says where its IR starts
    t = subprocess.run([sys.executable, "-m", "tritondbg", "ir", f"{tmp_path / 'gscen.py'}::gluon_gemm",
                        "--stage", "ttir"], env=env, capture_output=True, text=True, timeout=120)
    assert t.returncode != 0 and "Traceback" not in t.stderr
    assert "a Gluon kernel has no TTIR, its first IR is --stage ttgir" in t.stderr, t.stderr[-1000:]


def test_gluon_gemm_measure_checks_each_contender_before_timing_it():
    """gluon_gemm.py's GPU loop, with a stub timer: a wrong or failing contender is a row with its error and no
    time; the ratio is against the first (torch's) contender."""
    import sys

    import pytest

    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    sys.path.insert(0, str(REPO / "tests" / "bench"))
    import gluon_gemm as GG

    fns = {"torch": lambda: 1.0, "ok": lambda: 1.0, "wrong": lambda: 2.0, "boom": lambda: 1 / 0}
    ms = {fns["torch"]: 0.010, fns["ok"]: 0.008}
    timed, running = [], []

    def timer(fn):
        timed.append(fn)
        return ms[fn]

    rows, line = GG.measure({"M": 3}, fns, lambda out: (abs(out - 1.0), abs(out - 1.0) < 1e-2), timer, running.append)
    assert [r["us"] for r in rows] == [10.0, 8.0, None, None] and all(r["M"] == 3 for r in rows)
    assert rows[1]["x_torch"] == 1.25 and "x_torch" not in rows[2]
    assert rows[2]["error"] == "WRONG" and rows[3]["error"].startswith("ZeroDivisionError")
    assert timed == [fns["torch"], fns["ok"]] and running == list(fns)
    assert line.startswith("torch 10.0 us | ok 8.0 us 1.250x | wrong WRONG | boom ZeroDivisionError")


def test_ncu_misses_parses_ncu_details_csv_and_says_what_it_needs(cli_env):
    """tests/bench/ncu_misses.py: ncu's --csv --page details (one row per launch and metric, rule rows with no
    metric) becomes one dict per launch; without ncu or CUDA, one line and exit 2."""
    import subprocess
    import sys

    sys.path.insert(0, str(REPO / "tests" / "bench"))
    import ncu_misses

    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
            '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n')
    rows = ['"0","1","python","h","gemm_tma_kernel","1","7","(256, 1, 1)","(129, 1, 1)","0","9.0",'
            '"GPU Speed Of Light Throughput","Duration","us","22.62"',
            '"0","1","python","h","gemm_tma_kernel","1","7","(256, 1, 1)","(129, 1, 1)","0","9.0",'
            '"GPU Speed Of Light Throughput","DRAM Throughput","%","71.5"',
            '"0","1","python","h","gemm_tma_kernel","1","7","(256, 1, 1)","(129, 1, 1)","0","9.0","Occupancy","","",""',
            '"1","1","python","h","nvjet_hsh_128x256","1","7","(384, 1, 1)","(64, 1, 1)","0","9.0",'
            '"Launch Statistics","Registers Per Thread","register/thread","168"']
    parsed = ncu_misses._parse("==PROF== Connected\n" + head + "\n".join(rows) + "\n")
    assert [k["kernel"] for k in parsed] == ["gemm_tma_kernel", "nvjet_hsh_128x256"]
    assert parsed[0]["Duration"] == "22.62 us" and parsed[0]["DRAM Throughput"] == "71.5 %"
    assert parsed[1]["Registers Per Thread"] == "168 register/thread"
    assert ncu_misses._parse("==ERROR== no kernels profiled") == []
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/ncu_misses.py")],
                       env=dict(cli_env, CUDA_VISIBLE_DEVICES="", PATH="/usr/bin:/bin"), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr[-500:]


def test_perf_rows_prints_each_timed_row_with_ratio_drift_and_config(tmp_path):
    import json
    import subprocess
    import sys

    record = {"extra": {"gates": [{"kernel": "attention", "gate": "perf", "details": {"timings": {
        "attention/odd/bfloat16@graph": {"ours_ms": 0.0175, "torch_ms": 0.0179, "recorded_ms": 0.0176,
                                         "timing": "graph",
                                         "configs": {"_attn_fwd_kernel": {"BLOCK_M": 64, "BLOCK_N": 64,
                                                                          "WARP_SPEC": False, "num_warps": 4}}}}}}]}}
    f = tmp_path / "check.json"
    f.write_text(json.dumps(record))
    p = subprocess.run([sys.executable, str(REPO / "tests/gpu/perf_rows.py"), str(f)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "attention/odd/bfloat16@graph" in p.stdout and "17.5 us" in p.stdout and "1.02x" in p.stdout
    assert "(-0.6%)" in p.stdout and "_attn_fwd_kernel: BLOCK_M=64,BLOCK_N=64,num_warps=4" in p.stdout


def _sweep_module():
    import sys

    sys.path.insert(0, str(REPO / "tests/bench"))  # the sweep imports kernels_h200 from there
    spec = importlib.util.spec_from_file_location("sweep_h200", REPO / "tests/bench/sweep_h200.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sweep_parts_shapes_and_rival_configs():
    import pytest

    from tritondbg.kernels._rows import check_config

    sw = _sweep_module()
    assert sw.parse_groups("norm") == ["layernorm", "softmax"]
    assert sw.parse_groups("attn,gemm") == ["gemm", "prefill", "decode"]
    with pytest.raises(ValueError, match="bogus"):
        sw.parse_groups("layernorm,bogus")
    shapes = sw.norm_shapes((1000, 32768), ("big", "small"))
    assert shapes == [(33554, 1000, "big"), (1024, 32768, "big"), (262, 1000, "small"), (8, 32768, "small")]
    assert sw.norm_shapes((1000,), ("mid",)) == [(1049, 1000, "mid")]
    for n in sw.NORM_N:
        for c in sw.grid_configs(n, 2):
            check_config(c, 16384, n)  # every rival is a config the wrappers accept
    assert {c.kind for c in sw.grid_configs(11008, 2)} == {"single", "looped", "split"}
    assert {c.kind for c in sw.grid_configs(256, 2)} == {"single"}


def test_sweep_norm_rows_checked_timed_and_summarised_on_the_cpu(monkeypatch, tmp_path):
    """The sweep's row logic end to end under the interpreter (tiny rows, the timers stubbed): each row checked
    against the reference, both sides timed, the summary against issue 18's targets, the merge of parts."""
    import argparse

    sw = _sweep_module()  # puts tests/bench on sys.path first
    import kernels_h200 as kh

    monkeypatch.setattr(kh, "interleaved", lambda fns, rounds, rep: {n: [2e-3 if n == "ours" else 3e-3] for n in fns})
    monkeypatch.setattr(kh, "_graph_ms", lambda fn: 1e-3)
    monkeypatch.setattr(sw, "_host_us", lambda fn, calls=200, dev="cuda": 5.0)
    monkeypatch.setattr(sw, "SMALL_ELEMS", 3000)
    s = sw.Sweep(argparse.Namespace(quick=True, device="cpu"))
    s.norm("layernorm", ["float32"], ["small"], (100, 1000))
    s.norm("softmax", ["float32"], ["small"], (300,))
    assert [(r["group"], r["name"], r["check"]) for r in s.rows] == [
        ("layernorm", "30x100 (small)", "pass"), ("layernorm", "3x1000 (small)", "pass"),
        ("softmax", "10x300 (small)", "pass")]
    assert all(r["baselines"]["copy"]["ratio"] == 1.5 and r["ours_host_us"] == 5.0 for r in s.rows)
    meta = {"date": "d", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "python x"}
    text = sw.markdown(s.rows, {"layernorm": meta, "softmax": meta})
    assert "| layernorm | F.layer_norm | 2 | 1.50× | 1.50× |" in text and "| 1.00 / 1.50 | yes |" in text
    assert "single block 128 rows 1 warps 4" in text  # the rule's config, per row
    s.rows[0].update(check="fail", check_message="max abs err 3")
    (ln, _) = sw.summarize(s.rows)
    assert ln["wrong"] == 1 and ln["met"] is False  # a wrong kernel never meets a target
    previous = {"rows": [{"group": "gemm", "name": "g"}, {"group": "softmax", "name": "old"}],
                "metas": {"gemm": meta, "softmax": meta}}
    rows, metas = sw.merge(previous, s.rows[:2], {"layernorm": meta}, ["layernorm"])
    assert [r["name"] for r in rows] == ["g", "old", "30x100 (small)", "3x1000 (small)"] and set(metas) == {
        "gemm", "softmax", "layernorm"}


def test_sweep_render_joins_parts_without_a_gpu(tmp_path):
    import json
    import subprocess
    import sys

    meta = {"date": "d", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "c"}
    row = {"group": "softmax", "name": "8x256 (small)", "dtype": "float16", "check": "pass", "ours_ms": 0.002,
           "config": "single", "baselines": {"torch.softmax": {"ms": 0.004, "ratio": 2.0}}}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"metas": {"softmax": meta}, "rows": [dict(row, name="old")]}))
    b.write_text(json.dumps({"metas": {"softmax": meta, "gemm": meta},
                             "rows": [row, dict(row, group="gemm", name="1x4096x4096")]}))
    out = tmp_path / "t.md"
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/sweep_h200.py"), "--render", str(a), str(b),
                        "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "8x256 (small)" in text and "| old |" not in text and "1x4096x4096" in text  # b's softmax replaced a's
    assert json.loads(out.with_suffix(".json").read_text())["metas"].keys() == {"softmax", "gemm"}
    bad = subprocess.run([sys.executable, str(REPO / "tests/bench/sweep_h200.py"), "--render", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_perf_gate_baseline_covers_every_sweep_shape(tmp_path):
    """Issue 18: every sweep shape (layernorm, softmax, gemm, prefill, decode, fp8) is a perf-gate case
    (tests/bench/sweep_scenarios.py)
    and the recorded baseline (tests/bench/baseline_sweep_h200.json) has a time for each case x dtype, written
    from the sweep's own JSON by ``--baseline-out``."""
    import json
    import subprocess
    import sys

    sys.path.insert(0, str(REPO / "tests/bench"))
    import sweep_scenarios as ss

    scenarios = ss.SCENARIOS
    assert {s.name for s in scenarios} == {"layernorm_sweep", "softmax_sweep", "gemm_sweep", "attention_sweep",
                                           "fp8_gemm_sweep"}
    recorded = json.loads((REPO / "tests/bench/baseline_sweep_h200.json").read_text())["times_ms"]
    want = {f"{s.name}/{c.name}/{d}" + ("@graph" if c.perf_timing == "graph" else "")
            for s in scenarios for c in s.cases for d in c.dtypes}
    assert len(want) >= 220 and want <= set(recorded), sorted(want - set(recorded))[:5]
    # every sweep row names a case (a new sweep shape or group without a case would fail here)
    rows = json.loads((REPO / "tests/bench/sweep_h200.json").read_text())["rows"]
    assert {r["group"] for r in rows} <= set(ss.GROUPS)
    cases = {s.name: {c.name for c in s.cases} for s in scenarios}
    for r in rows:
        if r["group"] in ss.GROUPS:
            scen, namer = ss.GROUPS[r["group"]]
            assert namer(r["name"]) in cases[scen], r["name"]
    # --baseline-out writes it from a run's JSON: a failed row is left out, a graph row keyed @graph
    run = tmp_path / "run.json"
    meta = {"date": "d", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "c"}
    ok = {"group": "softmax", "name": "8x32768 (small)", "dtype": "bfloat16", "check": "pass", "ours_ms": 0.006,
          "ours_graph_ms": 0.002, "config": "", "baselines": {}}
    run.write_text(json.dumps({"metas": {"softmax": meta}, "rows": [
        ok, dict(ok, name="1024x32768 (big)", check="fail")]}))
    out = tmp_path / "bl.json"
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/sweep_h200.py"), "--render", str(run),
                        "--out", str(tmp_path / "t.md"), "--baseline-out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["times_ms"] == {"softmax_sweep/small_8x32768/bfloat16@graph": 0.002}


def test_the_sweep_baseline_records_the_tl_picks_so_a_slower_gate_run_names_a_different_pick(tmp_path):
    """``--baseline-out`` records the tl autotuners' picks of the rows that show one (the config column, as the
    sweep writes ``config_dict``), so the perf gate's failure reason says when its process picked otherwise; rows
    a race's Gluon pick or a row rule served record none ({}: an older pick must not outlive its row)."""
    import json
    import subprocess
    import sys

    sys.path.insert(0, str(REPO / "tests/bench"))
    import sweep_scenarios as ss

    from tritondbg.check.perf import config_change

    tl = ("fp8_gemm_decode_kernel: DEC_BLOCK_M=16,DEC_BLOCK_N=64,DEC_BLOCK_K=128,SPLIT_K=2,USE_DOT=True,num_warps=4,"
          "num_stages=4 (race: tl 40.2 us, best gluon gluon_gemm_kernel: 64x64x128 s5 w4 40.3 us)")
    pick = {"fp8_gemm_decode_kernel": {"DEC_BLOCK_M": 16, "DEC_BLOCK_N": 64, "DEC_BLOCK_K": 128, "SPLIT_K": 2,
                                       "USE_DOT": True, "num_warps": 4, "num_stages": 4}}
    assert ss.row_configs(tl) == pick
    assert ss.row_configs("a_kernel: X=1; b_kernel: Y=foo,Z=False") == {"a_kernel": {"X": 1},
                                                                       "b_kernel": {"Y": "foo", "Z": False}}
    for other in ("gluon_gemm_kernel: 64x64x128 s5 w4 (race: tl 21.9 us, gluon 20.5 us)",
                  "single block 128 rows 32 warps 4 stages 1", "tl kernel (race: tl 27.9 us, gluon 31.4 us)", ""):
        assert ss.row_configs(other) is None, other
    meta = {"date": "d", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "c"}
    row = {"group": "gemm", "name": "1x4096x4096", "dtype": "bfloat16", "check": "pass", "ours_ms": 0.017,
           "ours_graph_ms": 0.0068, "config": tl, "baselines": {}}
    raced = dict(row, name="127x4096x4096", ours_ms=0.021, config="gluon_gemm_kernel: 64x64x128 s5 w4 (race: x)")
    run, out = tmp_path / "run.json", tmp_path / "bl.json"
    out.write_text(json.dumps({"configs": {"gemm_sweep/m127_n4096_k4096/bfloat16": pick}}))  # a stale pick
    run.write_text(json.dumps({"metas": {"gemm": meta}, "rows": [row, raced]}))
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/sweep_h200.py"), "--render", str(run),
                        "--out", str(tmp_path / "t.md"), "--baseline-out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    configs = json.loads(out.read_text())["configs"]
    assert configs == {"gemm_sweep/m1_n4096_k4096/bfloat16@graph": pick, "gemm_sweep/m127_n4096_k4096/bfloat16": {}}
    now = {"fp8_gemm_decode_kernel": dict(pick["fp8_gemm_decode_kernel"], DEC_BLOCK_N=128)}
    reason = config_change(now, configs["gemm_sweep/m1_n4096_k4096/bfloat16@graph"])
    assert "autotuner picked fp8_gemm_decode_kernel" in reason and "DEC_BLOCK_N=128" in reason
    assert "DEC_BLOCK_N=64" in reason.split("recorded run:")[1]
    assert config_change(pick, configs["gemm_sweep/m1_n4096_k4096/bfloat16@graph"]) == ""


def test_sweep_merge_keeps_the_sizes_a_run_did_not_cover():
    """A `--sizes small` run replaces the small rows of its groups and keeps the earlier big rows, with both
    runs' commands in the group's meta."""
    sw = _sweep_module()
    old_meta = {"date": "d1", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "python old"}
    new_meta = dict(old_meta, date="d2", command="python new --sizes small")
    previous = {"rows": [{"group": "softmax", "name": "8x256 (small)", "v": 1},
                         {"group": "softmax", "name": "1024x32768 (big)", "v": 1},
                         {"group": "gemm", "name": "1x4096x4096", "v": 1}],
                "metas": {"softmax": old_meta, "gemm": old_meta}}
    rows, metas = sw.merge(previous, [{"group": "softmax", "name": "8x256 (small)", "v": 2}], {"softmax": new_meta},
                           ["softmax"])
    assert sorted((r["name"], r["v"]) for r in rows) == [("1024x32768 (big)", 1), ("1x4096x4096", 1),
                                                         ("8x256 (small)", 2)]
    assert metas["softmax"]["command"] == "python new --sizes small"
    assert [e["command"] for e in metas["softmax"]["earlier"]] == ["python old"]
    text = sw.markdown([], metas)
    assert "python new --sizes small" in text and "python old" in text
    # a third run over the small rows again: the second run's rows are all gone, and so is its line
    newer = dict(old_meta, date="d3", command="python newer --sizes small")
    rows, metas = sw.merge({"rows": rows, "metas": metas}, [{"group": "softmax", "name": "8x256 (small)", "v": 3}],
                           {"softmax": newer}, ["softmax"])
    assert [e["command"] for e in metas["softmax"]["earlier"]] == ["python old"]


def test_sweep_merge_keeps_the_dtypes_a_run_did_not_cover():
    """A `--dtypes bfloat16` run replaces the bf16 rows it measured and keeps the float16 rows of the same shapes
    (session 20: a bf16 gemm run at M = 64 dropped the float16 M = 64 rows from the table)."""
    sw = _sweep_module()
    old_meta = {"date": "d1", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "python old"}
    new_meta = dict(old_meta, date="d2", command="python new --dtypes bfloat16")
    shapes = (("gemm", "64x4096x4096"), ("softmax", "8x256 (small)"))
    previous = {"rows": [{"group": g, "name": n, "dtype": d, "v": 1} for g, n in shapes for d in ("float16", "bfloat16")],
                "metas": {"gemm": old_meta, "softmax": old_meta}}
    new = [{"group": g, "name": n, "dtype": "bfloat16", "v": 2} for g, n in shapes]
    rows, _ = sw.merge(previous, new, {"gemm": new_meta, "softmax": new_meta}, ["gemm", "softmax"])
    assert sorted((r["group"], r["dtype"], r["v"]) for r in rows) == [
        ("gemm", "bfloat16", 2), ("gemm", "float16", 1), ("softmax", "bfloat16", 2), ("softmax", "float16", 1)]


def test_sweep_merge_a_run_of_chosen_row_lengths_replaces_only_its_rows():
    """`--n 1001` rows (marked by_row) replace the rows of that name and keep the other lengths of their size;
    a later full run of that size replaces them too (no duplicate rows)."""
    sw = _sweep_module()
    old_meta = {"date": "d1", "gpu": "G", "triton": "3.6.0", "torch": "2.11", "command": "python old"}
    new_meta = dict(old_meta, date="d2", command="python new --n 1001")
    previous = {"rows": [{"group": "softmax", "name": n, "dtype": "bfloat16", "v": 1}
                         for n in ("1024x256 (small)", "262x1001 (small)")], "metas": {"softmax": old_meta}}
    new = [{"group": "softmax", "name": "262x1001 (small)", "dtype": "bfloat16", "v": 2, "by_row": True},
           {"group": "softmax", "name": "1048x1001 (mid)", "dtype": "bfloat16", "v": 2, "by_row": True}]
    rows, metas = sw.merge(previous, new, {"softmax": new_meta}, ["softmax"])
    assert sorted((r["name"], r["v"]) for r in rows) == [("1024x256 (small)", 1), ("1048x1001 (mid)", 2),
                                                         ("262x1001 (small)", 2)]
    assert [e["command"] for e in metas["softmax"]["earlier"]] == ["python old"]
    full = dict(old_meta, date="d3", command="python full --sizes small")
    rows, _ = sw.merge({"rows": rows, "metas": metas}, [
        {"group": "softmax", "name": n, "dtype": "bfloat16", "v": 3} for n in ("1024x256 (small)", "262x1001 (small)")],
        {"softmax": full}, ["softmax"])
    assert sorted((r["name"], r["v"]) for r in rows) == [("1024x256 (small)", 3), ("1048x1001 (mid)", 2),
                                                         ("262x1001 (small)", 3)]


def test_static_launch_passes_the_cubin_only_its_runtime_arguments():
    """explore_static_launch.py hands torch's launcher the arguments Triton's C entry takes minus the constexprs
    (torch's type string has none): a wrong count is refused there, a wrong pick launches with shifted values."""
    import triton
    import triton.language as tl
    from triton.compiler import ASTSource

    spec = importlib.util.spec_from_file_location("explore_static_launch", REPO / "tests/bench/explore_static_launch.py")
    E = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(E)

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr, y_ptr, n, ONE: tl.constexpr):
        pass

    class Compiled:
        src = ASTSource(k, {"x_ptr": "*fp16", "BLOCK": "constexpr", "y_ptr": "*fp16", "n": "i32", "ONE": "constexpr"},
                        {"BLOCK": 16, "ONE": 1})
    assert E.runtime_args(Compiled) == [0, 2, 3]
