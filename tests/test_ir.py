"""`tritondbg ir`: every bundled kernel compiled on the CPU for sm_90, sm_80 and gfx942; Hopper/Ampere matrix
instructions; stats against ptxas' own report; source maps; cache hits; config decisions; diff.

Compiled mode needs its own process, so everything runs in subprocesses: one helper process compiles all the
kernels into a Triton cache shared by the whole session (and by both xdist workers, behind a file lock), and CLI
calls that ask for the same requests then come straight from the cache.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from ir_shared import HELPER, ir_env, shared  # noqa: F401  (shared is a fixture)
from tritondbg.ir.sourcemap import map_lines
PTX_TARGET = {"sm_90": ".target sm_90a", "sm_80": ".target sm_80"}
TTGIR_TARGET = {"sm_90": 'ttg.target = "cuda:90"', "sm_80": 'ttg.target = "cuda:80"',
                "gfx942": 'ttg.target = "hip:gfx942"'}


def _env(cache: Path, out: Path) -> dict:
    return ir_env(cache, out)


def _results(compiled, arch=None, scenario=None, case=None, kernel=None):
    return [r for r in compiled["results"]
            if (arch is None or r["item"]["arch"] == arch) and (scenario is None or r["item"]["scenario"] == scenario)
            and (case is None or r["item"]["case"] == case) and (kernel is None or r["item"]["kernel"] == kernel)]


def test_every_bundled_kernel_every_stage_every_target(shared):
    from tritondbg.commands.catalog import catalog

    env, compiled = shared
    kernels = {e["name"]: set(e["kernels"]) for e in catalog()}   # what each scenario declares it launches
    assert not any(compiled["uncovered"].values()), compiled["uncovered"]
    for arch in ("sm_90", "sm_80", "gfx942"):
        for scenario, names in kernels.items():
            got = {r["item"]["kernel"] for r in _results(compiled, arch, scenario)}
            if scenario == "fp8_gemm" and arch == "sm_80":
                continue  # e4m3 needs sm_89+: checked below as a clear error
            if scenario in ("gemm", "fp8_gemm") and arch != "sm_90":
                # TMA path: NVIDIA sm_90+ only; the pointer kernel elsewhere
                names = names - {"gemm_tma_kernel", "fp8_gemm_tma_kernel"}
            assert got == names, (arch, scenario, got, names)
    for r in compiled["results"]:
        item, st = r["item"], r["stages"]
        text = {s: Path(p).read_text(errors="replace") for s, p in st.items()}
        name, arch = item["kernel"], item["arch"]
        assert f"tt.func public @{name}" in text["source"] and f"tt.func public @{name}" in text["ttir"]
        assert TTGIR_TARGET[arch] in text["ttgir"], (name, arch)
        assert re.search(rf"define .*@{name}\(", text["llir"]), (name, arch)
        if arch == "gfx942":
            assert set(st) == {"source", "ttir", "ttgir", "llir", "amdgcn"}
            assert re.search(r'\.amdgcn_target "[^"]*gfx942', text["amdgcn"]) and f"{name}:" in text["amdgcn"]
        else:
            assert PTX_TARGET[arch] in text["ptx"] and f".entry {name}(" in text["ptx"], (name, arch)
            assert "EXIT" in text["sass"] and "/*0000*/" in text["sass"], (name, arch)


def test_fp8_on_ampere_is_a_clear_error(shared):
    _, compiled = shared
    errs = [e for e in compiled["errors"] if e["arch"] == "sm_80"]
    assert {e["scenario"] for e in errs} == {"fp8_gemm"}
    assert all("fp8e4nv not supported" in e["error"] for e in errs)
    for e in errs:   # one line naming the kernel's def line; the whole compiler output kept in a named file
        assert len(e["error"].splitlines()) == 1, e["error"]
        assert re.search(r"(fp8_gemm|_splitk)\.py:\d+: ValueError", e["error"]), e["error"]
        log = re.search(r"\(full log: (\S+\.log)\)$", e["error"])
        assert log and "Traceback" in Path(log.group(1)).read_text(), e["error"]
    # both fp8 kernels (large M and decode) are refused, each naming itself and the target
    failing = {m.group(1) for e in errs if (m := re.match(r"compiling (\w+) for sm_80 failed", e["error"]))}
    assert failing == {"fp8_gemm_kernel", "fp8_gemm_decode_kernel"}, [e["error"][:120] for e in errs]
    assert not [e for e in compiled["errors"] if e["arch"] != "sm_80"]


def test_gemm_uses_wgmma_on_hopper_and_mma_on_ampere(shared):
    _, compiled = shared
    (h,), (a,) = _results(compiled, "sm_90", "gemm", "square_4096"), _results(compiled, "sm_80", "gemm", "square_4096")
    assert h["item"]["config"]["BLOCK_M"] >= 64, h["item"]["config"]
    # aligned operands: the persistent TMA kernel on Hopper, the pointer kernel on Ampere
    assert (h["item"]["kernel"], a["item"]["kernel"]) == ("gemm_tma_kernel", "gemm_kernel")
    hopper_ptx, hopper_sass = (Path(h["stages"][s]).read_text() for s in ("ptx", "sass"))
    ampere_ptx, ampere_sass = (Path(a["stages"][s]).read_text() for s in ("ptx", "sass"))
    assert "wgmma.mma_async" in hopper_ptx and "HGMMA" in hopper_sass
    assert "cp.async.bulk.tensor" in hopper_ptx and "UTMALDG" in hopper_sass and "UTMASTG" in hopper_sass
    assert "cp.async.bulk.tensor" not in ampere_ptx
    assert "mma.sync" in ampere_ptx and "HMMA" in ampere_sass
    assert "wgmma" not in ampere_ptx and "HGMMA" not in ampere_sass
    assert h["stats"]["instruction_mix"]["ptx"]["wgmma (warpgroup mma)"] == hopper_ptx.count("wgmma.mma_async")
    assert a["stats"]["instruction_mix"]["sass"]["HMMA (mma)"] == len(re.findall(r"\bHMMA\.", ampere_sass))


def test_one_launch_split_merges_keep_their_memory_ordering_on_hopper(shared):
    """The split-K decode kernel (fp8_gemm, gemm's small M) and decode attention merge their splits in one launch:
    each split publishes a partial and bumps a counter, the last reads them all. That protocol rests on what the sm_90
    code keeps, checked here so that a compiler upgrade cannot drop it silently: the bump is a gpu-scope acq_rel
    atomic (SASS: MEMBAR.ALL.GPU, then within a few instructions ATOMG ... STRONG.GPU), and the partials are re-read
    from L2 (PTX ld.global.cg; SASS LDG ... STRONG.GPU)."""
    _, compiled = shared
    merging = [r for r in _results(compiled, "sm_90")
               if (r["item"]["kernel"] == "fp8_gemm_decode_kernel" and r["item"]["config"].get("SPLIT_K", 1) > 1)
               or (r["item"]["kernel"] == "_attn_decode_kernel" and r["item"]["case"] == "decode_tiny")]
    assert {r["item"]["kernel"] for r in merging} == {"fp8_gemm_decode_kernel", "_attn_decode_kernel"}, \
        sorted({(r["item"]["kernel"], r["item"]["case"]) for r in _results(compiled, "sm_90")})
    for r in merging:
        ptx, sass = (Path(r["stages"][s]).read_text() for s in ("ptx", "sass"))
        where = (r["item"]["kernel"], r["item"]["case"])
        assert re.search(r"atom\.global\.gpu\.acq_rel\.add", ptx) and "ld.global.cg" in ptx, where
        assert re.search(r"MEMBAR\.ALL\.GPU(?:[^\n]*\n){1,4}[^\n]*ATOMG\.E\.ADD\.STRONG\.GPU", sass), where
        assert re.search(r"LDG\.E[.\w]*\.STRONG\.GPU", sass), where


def _ptxas_report(log: str, kernel: str, arch: str) -> dict:
    """What ptxas itself printed for one kernel (TRITON_DUMP_PTXAS_LOG=1)."""
    sm = "sm_90a" if arch == "sm_90" else arch
    m = re.search(rf"Compiling entry function '{re.escape(kernel)}' for '{sm}'.*?\n(.*?)Used (\d+) registers",
                  log, re.S)
    assert m, (kernel, arch, log[-2000:])
    frame = re.search(r"(\d+) bytes stack frame", m.group(1))
    return {"regs": int(m.group(2)), "stack": int(frame.group(1)) if frame else 0}


def test_stats_match_ptxas_and_triton_metadata(shared):
    _, compiled = shared
    # ptxas reports a kernel once, when it is compiled: a later case with the same specialization is a cache hit
    # (gemm's tiny and tiny_tma both run the pointer kernel on sm_80), so look the report up by cache entry
    logs = {}
    for r in compiled["results"]:
        logs[r["item"]["entry"]] = logs.get(r["item"]["entry"], "") + r["ptxas_log"]
    checked = 0
    for r in compiled["results"]:
        item, stats = r["item"], r["stats"]
        meta = json.loads(Path(item["metadata_file"]).read_text())
        assert (stats["shared"], stats["num_warps"], stats["num_stages"]) == \
            (meta["shared"], meta["num_warps"], meta["num_stages"])
        if item["arch"] == "gfx942":
            amdgcn = Path(r["stages"]["amdgcn"]).read_text()
            total = re.search(r"; TotalNumVgprs: (\d+)", amdgcn) or re.search(r"; NumVgprs: (\d+)", amdgcn)
            assert stats["n_regs"] == int(total.group(1))   # arch + accumulation VGPRs (gfx942 unified file)
            continue
        report = _ptxas_report(logs[item["entry"]], item["kernel"], item["arch"])
        assert stats["n_regs"] == report["regs"], (item["kernel"], item["arch"], stats["n_regs"], report)
        # ptxas's "bytes stack frame" is cuobjdump's STACK; Triton's n_spills counts LOCAL + STACK (stats.py)
        assert stats["stack_bytes"] == report["stack"], (item, stats, report)
        assert stats["n_spills"] == (stats["local_bytes"] + report["stack"]) // 4, (item, stats, report)
        checked += 1
    assert checked >= 20


def test_source_map_points_at_real_kernel_lines(shared):
    _, compiled = shared
    for r in compiled["results"]:
        kernel_dir = Path(r["item"]["kernel_file"]).parent
        for stage, path in r["stages"].items():
            mapped = [m for m in map_lines(stage, Path(path).read_text()) if m.frame]
            assert mapped, (r["item"]["kernel"], stage)
            # the kernel's file and the helpers it calls from beside it (fp8_gemm_tma_kernel's descriptors and
            # boxes are kernels/_gemm_tma.py's, both gemm kernels' tile order kernels/_gemm_parts.py's)
            in_kernel = [m for m in mapped if Path(m.frame[0]).parent == kernel_dir]
            assert len(in_kernel) > len(mapped) / 2, (r["item"]["kernel"], stage)
            lines = {f: Path(f).read_text().splitlines() for f in {m.frame[0] for m in in_kernel}}
            assert all(1 <= m.frame[1] <= len(lines[m.frame[0]]) for m in in_kernel), (stage, r["item"]["kernel"])
            # Triton itself places a rare location on a blank line (e.g. attention.py `.loc 1 330 9` for the
            # multiply on line 329); nearly all must be code lines
            blank = [m for m in in_kernel if not lines[m.frame[0]][m.frame[1] - 1].strip()]
            assert len(blank) <= 0.02 * len(in_kernel), (stage, r["item"]["kernel"], blank[:3])
    (h,) = _results(compiled, "sm_90", "gemm", "square_4096")
    dot_lines = {i + 1 for i, s in enumerate(Path(h["item"]["kernel_file"]).read_text().splitlines()) if "tl.dot(" in s}
    for stage, needle in (("ttgir", "warp_group_dot "), ("ptx", "wgmma.mma_async"), ("sass", "HGMMA"),
                          ("llir", "wgmma.mma_async")):
        hits = [m for m in map_lines(stage, Path(h["stages"][stage]).read_text()) if needle in m.text]
        on_dot = [m for m in hits if m.frame and m.frame[1] in dot_lines]
        # ptxas may attribute a scheduled HGMMA to a neighbouring line of the loop (Triton 3.6: 2 of 4)
        assert hits and len(on_dot) >= len(hits) / 2, (stage, hits[:2])


def test_sass_library_lines_without_a_caller_go_to_the_kernel_line_located_last():
    """Triton 3.6's cubins give tl.max's reduce (standard.py) no "inlined at": such SASS lines are put at the kernel
    line located last (on 3.6, 94 of softmax_split_kernel's 176 mapped lines were shown in standard.py)."""
    import triton

    std = str(Path(triton.__file__).parent / "language" / "standard.py")
    text = "\n".join([
        '//## File "/k/softmax.py", line 152',
        "        /*0100*/                   LDG.E R7, desc[UR10][R10.64] ;",
        f'//## File "{std}", line 191',
        "        /*0110*/                   FMNMX R9, R7, R6, !PT ;",
        f'//## File "{std}", line 263 inlined at "/k/softmax.py", line 155',
        "        /*0120*/                   FADD R9, R7, R6 ;",
    ])
    frames = [m.frame for m in map_lines("sass", text) if m.frame]
    assert frames == [("/k/softmax.py", 152), ("/k/softmax.py", 152), ("/k/softmax.py", 155)]


def test_cli_prints_the_ir_from_the_cache(shared):
    env, compiled = shared
    (h,) = _results(compiled, "sm_90", "gemm", "square_4096")
    p = run_cli(["ir", "gemm", "--case", "square_4096", "--arch", "sm_90"], env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == Path(h["stages"]["ptx"]).read_text()   # piped: plain, exactly the cached file
    assert f"cache hit: {h['stages']['ptx']}" in p.stderr and h["item"]["entry"].rsplit("/", 1)[1] in p.stderr
    assert "config BLOCK_M=" in p.stderr and "first of the" in p.stderr   # which config, and why


def test_cli_source_map_and_out_file(shared, tmp_path):
    env, _ = shared
    out = tmp_path / "g.ptx"
    p = run_cli(["ir", "gemm", "--case", "square_4096", "--arch", "sm_90", "--source-map", "--out", str(out)], env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and f"wrote {out}" in p.stderr
    notes = re.findall(r"^// (\w+\.py):(\d+)  (.*)$", out.read_text(), re.M)
    assert len(notes) > 10
    # the TMA kernel (kernels/_gemm_tma.py) and its inlined helpers (kernels/_gemm_parts.py)
    files = {f: (REPO / "kernels" / f).read_text().splitlines() for f, _, _ in notes}
    assert all(files[f][int(n) - 1].strip() == text for f, n, text in notes)
    assert any("tl.dot(" in text for f, _, text in notes if f == "_gemm_tma.py")


def test_cli_diff_between_archs(shared):
    env, _ = shared
    # the odd-K tiny case runs the pointer kernel on both targets (square_4096 runs the TMA kernel on sm_90);
    # a 64x128 tile makes it wgmma on sm_90
    p = run_cli(["ir", "gemm", "--case", "tiny", "--config", "BLOCK_M=64,BLOCK_N=128", "--diff", "arch=sm_80",
                 "arch=sm_90"], env)
    assert p.returncode == 0, p.stderr
    minus = [line for line in p.stdout.splitlines() if line.startswith("-")]
    plus = [line for line in p.stdout.splitlines() if line.startswith("+")]
    assert any("mma.sync" in line for line in minus) and any("wgmma.mma_async" in line for line in plus)
    assert re.search(r"n_regs\s+\d+\s+\d+", p.stdout)
    assert not any(re.search(r"%r\d", line) for line in minus + plus)   # register numbering normalised away


def test_cli_stats_json(shared):
    env, compiled = shared
    (h,) = _results(compiled, "sm_90", "gemm", "square_4096")
    p = run_cli(["ir", "gemm", "--case", "square_4096", "--arch", "sm_90", "--stats", "--json"], env)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    for key in ("n_regs", "n_spills", "shared", "num_warps", "num_stages", "instruction_mix", "config"):
        assert row[key] == h["stats"][key], key


_TWO_KERNELS = """
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def scale_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def shift_kernel(Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(Y + offs, mask=offs < n) + 1.0, mask=offs < n)


def launch(x):  # one launch wrapper, two kernels
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    shift_kernel[(triton.cdiv(x.numel(), 64),)](y, x.numel(), BLOCK=64)
    return y


SCENARIO = Scenario("two", lambda case, dtype, device, gen: dict(x=torch.randn(100, generator=gen).to(device, dtype)),
                    launch, lambda x: 2 * x.float() + 1, [Case("tiny", params=dict(n=100), dtypes=("float32",))],
                    kernels=[scale_kernel, shift_kernel])
"""


def test_cli_kernel_picks_one_of_several(shared, tmp_path):
    # no bundled case launches two kernels any more (attention decode is one launch): a user scenario that does
    env, _ = shared
    (tmp_path / "two.py").write_text(_TWO_KERNELS)
    target = f"{tmp_path / 'two.py'}::two"
    p = run_cli(["ir", target, "--case", "tiny", "--arch", "sm_90", "--kernel", "shift", "--stage", "ttir"], env)
    assert p.returncode == 0, p.stderr
    assert "tt.func public @shift_kernel" in p.stdout and "scale_kernel" not in p.stdout
    both = run_cli(["ir", target, "--case", "tiny", "--arch", "sm_90", "--stage", "ttir"], env)
    assert both.stdout.count("// ==== ") == 2 and "// ==== scale_kernel" in both.stdout
    bad = run_cli(["ir", target, "--case", "tiny", "--arch", "sm_90", "--kernel", "nope"], env)
    assert bad.returncode == 2 and "choose from: scale_kernel, shift_kernel" in bad.stderr


def test_warm_call_imports_neither_torch_nor_triton(shared):
    env, _ = shared
    code = ("import sys\nfrom tritondbg.cli import main\n"
            "try:\n    main(['ir', 'gemm', '--case', 'square_4096', '--arch', 'sm_90'])\nexcept SystemExit as e:\n"
            "    assert e.code == 0, e.code\n"
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip().endswith("[]") and "cache hit:" in p.stderr


def test_second_call_is_a_cache_hit(tmp_path):
    env = _env(tmp_path / "cache", tmp_path / "traces")
    first = run_cli(["ir", "add", "--arch", "sm_90"], env)
    assert first.returncode == 0, first.stderr
    m = re.search(r"cache miss: compiled for sm_90 in [\d.]+ s, stored in (\S+)", first.stderr)
    assert m, first.stderr
    entry = m.group(1)
    second = run_cli(["ir", "add", "--arch", "sm_90"], env)
    assert f"cache hit: {entry}/add_kernel.ptx" in second.stderr and "tritondbg index" in second.stderr
    assert second.stdout == first.stdout == Path(entry, "add_kernel.ptx").read_text()
    # without the index, the key is recomputed from the real arguments: Triton's own cache answers
    third = run_cli(["ir", "add", "--arch", "sm_90", "--no-index"], env)
    assert f"cache hit: {entry}/add_kernel.ptx (entry {Path(entry).name}; Triton cache)" in third.stderr
    assert len([d for d in (tmp_path / "cache").iterdir() if d.name != "tritondbg-ir-index"]) == 1


def test_default_config_comes_from_a_run_record(shared, tmp_path):
    env, _ = shared
    env = dict(env, TRITONDBG_OUT=str(tmp_path / "traces"))
    args = ["ir", "gemm", "--case", "square_4096", "--arch", "sm_90", "--stats", "--json"]
    (before,) = json.loads(run_cli(args, env).stdout)
    assert before["config_source"].startswith("first of the")
    record = tmp_path / "traces" / "20260101-000000-compiled-gemm-1" / "tritondbg" / "record.json"
    record.parent.mkdir(parents=True)
    tuned = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "EPILOGUE_SUBTILE": True,
             "num_warps": 4, "num_stages": 4}
    record.write_text(json.dumps({"schema": 1, "command": "run gemm", "environment": {"gpu": "NVIDIA H200"},
                                  "results": [{"kernel": "gemm", "case": "square_4096", "dtype": "bfloat16",
                                               "mode": "compiled", "config": {"gemm_tma_kernel": tuned},
                                               "config_source": {"gemm_tma_kernel": "autotuned"}}]}))
    p = run_cli(args, env)   # the index entry of the first call relied on there being no record: not reused
    (after,) = json.loads(p.stdout)
    assert after["config"] == tuned
    assert after["config_source"] == f"autotuned on NVIDIA H200 (run record {record})"


def test_default_config_comes_from_tritons_autotune_record(shared):
    # float16: its own autotune key (the dtypes are part of it), so the bfloat16 requests of other tests keep
    # their default; the record lands in the shared cache, as Triton's autotuner would write it on a GPU.
    # sm_80: the helper records gemm_kernel, the kernel square_4096 runs there (sm_90 runs gemm_tma_kernel)
    env, _ = shared
    out = Path(env["TRITONDBG_OUT"]).parent / "autotune-winner.json"
    p = subprocess.run([sys.executable, str(HELPER), "record-autotune", "sm_80", "square_4096", "float16", str(out)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    winner = json.loads(out.read_text())
    assert winner["pruned"] > 1
    args = ["ir", "gemm", "--case", "square_4096", "--dtype", "float16", "--stats", "--json"]
    p = run_cli([*args, "--arch", "sm_80"], env)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["kernel"] == "gemm_kernel" and row["config"] == winner["winner"]
    assert row["config_source"] == f"recorded autotune decision {winner['path']}"
    assert Path(winner["path"]).is_file() and winner["path"].startswith(env["TRITON_CACHE_DIR"])
    # the decision is per target: gfx942 runs the same kernel with the same key but has no record, so it
    # falls back to the first pruned config
    p = run_cli([*args, "--arch", "gfx942"], env)
    (row,) = json.loads(p.stdout)
    assert row["kernel"] == "gemm_kernel" and row["config_source"].startswith("first of the")


def test_all_configs_emits_one_per_config(shared):
    env, _ = shared
    p = run_cli(["ir", "add", "--arch", "sm_90", "--all-configs", "--stats", "--json"], env)
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [r["config"]["BLOCK"] for r in rows] == [1024, 2048, 4096]
    assert [r["config_source"] for r in rows] == [f"--all-configs: config {i} of 3" for i in (1, 2, 3)]
    assert len({r["cache_entry"] for r in rows}) == 3


@pytest.mark.parametrize("args, needle", [
    (["ir", "gemm", "--arch", "sm_9x"], "unknown --arch 'sm_9x'"),
    (["ir", "add", "--arch", "gfx942", "--stage", "sass"], "--stage sass does not exist for gfx942"),
    (["ir", "add", "--config", "BLOCK=1024", "--all-configs"], "--config and --all-configs exclude each other"),
    (["ir", "gemm", "--diff", "arch=sm_80", "colour=red"], "bad --diff side 'colour=red'"),
    (["ir", "gemm", "--config", "BLOCK_M=7"], "no config of gemm_kernel has BLOCK_M=7"),
    (["ir", "add", "--out", "/nonexistent_dir/x.ptx"], "--out /nonexistent_dir/x.ptx: no folder"),  # before compiling
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    p = run_cli(args, _env(tmp_path / "cache", tmp_path / "traces"))
    assert p.returncode == 2, p.stderr
    assert needle in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


_WS_LOOP = """
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def ws_gemm_kernel(A, B, C, M, N, K, BLOCK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(A, shape=[M, K], strides=[K, 1], block_shape=[BLOCK, 64])
    b_desc = tl.make_tensor_descriptor(B, shape=[K, N], strides=[N, 1], block_shape=[64, BLOCK])
    c_desc = tl.make_tensor_descriptor(C, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    om, on = tl.program_id(0) * BLOCK, tl.program_id(1) * BLOCK
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, 64), warp_specialize=True):
        acc = tl.dot(a_desc.load([om, k * 64]), b_desc.load([k * 64, on]), acc)
    c_desc.store([om, on], acc.to(tl.bfloat16))


def make_inputs(case, dtype, device, generator):
    return dict(a=torch.randn(256, 256, generator=generator).to(device=device, dtype=dtype),
                b=torch.randn(256, 256, generator=generator).to(device=device, dtype=dtype))


def _launch(warps):
    def launch(a, b):
        c = torch.empty(256, 256, dtype=a.dtype, device=a.device)
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=a.device))
        ws_gemm_kernel[(2, 2)](a, b, c, 256, 256, 256, BLOCK=128, num_warps=warps, num_stages=3)
        return c
    return launch


_CASES = [Case("tiny", params={}, dtypes=("bfloat16",))]
built = Scenario("built", make_inputs, _launch(4), lambda a, b: a.float() @ b.float(), _CASES, kernels=[ws_gemm_kernel])
not_built = Scenario("not_built", make_inputs, _launch(8), lambda a, b: a.float() @ b.float(), _CASES,
                     kernels=[ws_gemm_kernel])
"""


def test_stats_say_whether_warp_specialisation_was_built(shared, tmp_path):
    """`--stats` reports what Triton made of ``tl.range(..., warp_specialize=True)`` on sm_90: with 4 warps a
    producer and two consumer groups (12 warps, setmaxnreg); with 8 warps Triton 3.6 / 3.9 silently build one
    warp group, which the stats must say instead of leaving the user to guess from the warp count."""
    env, _ = shared
    (tmp_path / "ws.py").write_text(_WS_LOOP)
    rows = {}
    for name in ("built", "not_built"):
        p = run_cli(["ir", f"{tmp_path / 'ws.py'}::{name}", "--arch", "sm_90", "--stats", "--json"], env)
        assert p.returncode == 0, p.stderr
        (rows[name],) = json.loads(p.stdout)
    ws = rows["built"]["warp_specialization"]
    assert ws["requested_loops"] == 1 and ws["built"] and ws["partitions"] == 3, ws
    assert ws["warps_launched"] == sum(ws["partition_warps"]) == rows["built"]["num_warps"] == 12, ws
    assert ws["setmaxnreg"]["inc"] and ws["setmaxnreg"]["dec"], ws
    assert rows["not_built"]["warp_specialization"] == {"requested_loops": 1, "built": False}
    p = run_cli(["ir", f"{tmp_path / 'ws.py'}::not_built", "--arch", "sm_90", "--stats"], env)
    assert "asked (1 loop), NOT built" in p.stdout, p.stdout
    (gemm,) = json.loads(run_cli(["ir", "gemm", "--case", "square_4096", "--arch", "sm_90", "--stats", "--json"],
                                 env).stdout)
    assert gemm["warp_specialization"] is None  # neither asked nor built


def test_config_applies_to_the_kernel_that_lists_it(shared):
    """attention's prefill and decode kernels share config keys (BLOCK_N, num_warps, num_stages): a prefill
    config on a prefill case is not refused because the decode kernel lists no such config; a config no kernel
    lists still is, in one line."""
    env, _ = shared
    cfg = "BLOCK_M=128,BLOCK_N=64,WARP_SPEC=False,num_warps=8,num_stages=4"
    p = run_cli(["ir", "attention", "--case", "prefill_b4_h32_n4k_d128", "--arch", "sm_90", "--config", cfg,
                 "--stage", "ttgir"], env)
    assert p.returncode == 0, p.stderr
    assert "(--config)" in p.stderr and "ttg.num-warps\" = 8" in p.stdout
    bad = run_cli(["ir", "attention", "--case", "prefill_b4_h32_n4k_d128", "--arch", "sm_90", "--config",
                   "BLOCK_N=96"], env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "no config of" in bad.stderr


@pytest.mark.parametrize("name, needle", [
    ("tutorial_01_vector_add", ".target sm_90a"),     # DEVICE = driver.active.get_active_torch_device() at import
    ("tutorial_02_fused_softmax", ".target sm_90a"),  # kernel.warmup(), then n_regs / metadata.shared for its grid
])
def test_ir_on_host_code_that_asks_for_the_device(name, needle, tmp_path):
    """Real host code asks for the GPU at import and at launch: `ir` answers as the target (it died with "0 active
    drivers" importing Triton's tutorials, and on tutorial 02's warmup-then-launch)."""
    p = run_cli(["ir", str(REPO / "tests" / "third_party" / f"{name}.py"), "--arch", "sm_90", "--stage", "ptx"],
                _env(tmp_path / "cache", tmp_path / "out"), timeout=600)
    assert p.returncode == 0 and needle in p.stdout, p.stderr[-2000:]


def test_ir_imports_a_library_as_the_target_would(tmp_path):
    """flash-linear-attention picks its configs at import from the device (Hopper, shared memory per block): `ir`
    for sm_90 gets the Hopper list (BK = BV = 32 for chunk_fwd_kernel_h), not the CPU fallback's 16."""
    pytest.importorskip("fla")
    p = run_cli(["ir", str(REPO / "tests" / "third_party" / "fla_retention.py"), "--arch", "sm_90", "--stats",
                 "--json"], _env(tmp_path / "cache", tmp_path / "out"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    items = {i["kernel"]: i for i in json.loads(p.stdout)}
    assert items["chunk_fwd_kernel_h"]["config"]["BK"] == 32, items["chunk_fwd_kernel_h"]["config"]


def test_stats_table_piped_keeps_every_label_and_names_each_config(tmp_path):
    """`ir --all-configs --stats` into a pipe or a file: the table at its natural width (at 80 columns every label
    was cut, "registers / thread" to "re…"), each column of the same kernel and target headed "config N"."""
    p = run_cli(["ir", "add", "--all-configs", "--stats"], _env(tmp_path / "cache", tmp_path / "out"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "registers / thread" in p.stdout and "shared memory" in p.stdout and "…" not in p.stdout, p.stdout[:2000]
    header = p.stdout.splitlines()[:4]
    assert any("config 1" in ln and "config 2" in ln for ln in header), header


def test_all_configs_on_a_kernel_without_an_autotuner_says_so(tmp_path):
    """--all-configs where nothing is autotuned: the one launch as it is, and a note saying there was nothing to
    sweep (it printed the launch as if it were the sweep)."""
    pytest.importorskip("liger_kernel")
    p = run_cli(["ir", str(REPO / "tests" / "third_party" / "liger_swiglu.py"), "--all-configs", "--stage", "ttir"],
                _env(tmp_path / "cache", tmp_path / "out"), timeout=600)
    assert p.returncode == 0 and "launches no autotuned kernel" in p.stderr and "tt.func" in p.stdout, p.stderr[-2000:]


def test_diff_across_backends_without_a_stage_shows_ttgir(tmp_path):
    """--diff arch=sm_90 arch=gfx942 with no --stage: the default (ptx) does not exist for gfx942, so both sides
    show ttgir with a note (it was a usage error); an explicit --stage ptx stays one."""
    env = _env(tmp_path / "cache", tmp_path / "out")
    p = run_cli(["ir", "add", "--diff", "arch=sm_90", "arch=gfx942"], env, timeout=600)
    assert p.returncode == 0 and "both sides show ttgir" in p.stderr, p.stderr[-2000:]
    assert 'ttg.target = "cuda:90"' in p.stdout and 'ttg.target = "hip:gfx942"' in p.stdout, p.stdout[-2000:]
    p = run_cli(["ir", "add", "--diff", "arch=sm_90", "arch=gfx942", "--stage", "ptx"], env, timeout=600)
    assert p.returncode == 2 and "--stage ptx does not exist for gfx942" in p.stderr


def test_the_default_config_of_an_unpruned_autotuner_says_it_may_not_be_the_gpus_pick(tmp_path):
    """mamba's SSD kernels have no pruning: the message said "left after the kernel's pruning", and the config
    (295 KB of shared memory on sm_90) is one the GPU's autotuner drops."""
    import triton

    from tritondbg.ir.decision import Decider

    class Tuner:  # what decide() reads of an Autotuner
        configs = [triton.Config({"B": 128}), triton.Config({"B": 64})]
        arg_names = ["x"]

        def prune_configs(self, kwargs):
            return list(self.configs)

    d = Decider(requested={}, case_name="tiny", case_config=None, records=[], cache_dir=str(tmp_path),
                record_pattern=str(tmp_path / "none*.json"))
    chosen, why = d.decide(Tuner(), "k", (1,), {})
    assert chosen.kwargs == {"B": 128}
    assert why.startswith("first of the 2 configs (its pruning drops none)") and "not necessarily" in why


AMD_OPTIONS = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def twice(x_ptr, y_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


def launch(x):
    y = torch.empty_like(x)
    twice[(1,)](x, y, x.numel(), B=64, num_warps=4, waves_per_eu=2, matrix_instr_nonkdim=16)  # vLLM's AMD path
    return y


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(50, generator=generator)), launch,
             lambda x: 2 * x, [Case("tiny", dtypes=("float32",))], kernels=[twice])
'''


def test_backend_launch_options_of_a_wrapper_are_named(tmp_path):
    """helper-51 (vLLM's decode attention on gfx942): the wrapper's waves_per_eu / matrix_instr_nonkdim / kpack were
    compiled in, but the config line named only num_warps and num_stages."""
    (tmp_path / "amd.py").write_text(AMD_OPTIONS)
    p = run_cli(["ir", str(tmp_path / "amd.py"), "--arch", "gfx942", "--json"],
                _env(tmp_path / "cache", tmp_path / "out"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    (item,) = json.loads(p.stdout)
    assert item["config"] == {"num_warps": 4, "waves_per_eu": 2, "matrix_instr_nonkdim": 16}, item["config"]
    assert "B" not in item["config"]  # a kernel argument is no launch option


MAXNREG = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)


def launch(x):
    y = torch.empty_like(x)
    copy[(1,)](x, y, x.numel(), BLOCK=16, maxnreg=128)
    return y


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.rand(10)), launch, lambda x: x,
             [Case("tiny", dtypes=("float32",))], kernels=[copy])
'''


def test_a_launch_option_another_backend_does_not_take_is_named(tmp_path):
    """helper-62: a reproducer captured on sm_90 with maxnreg, compiled for gfx942, said only "KeyError: 'Keyword
    argument maxnreg was specified but unrecognised'"."""
    (tmp_path / "mx.py").write_text(MAXNREG)
    env = ir_env(tmp_path / "cache", tmp_path / "out")
    p = run_cli(["ir", str(tmp_path / "mx.py"), "--arch", "gfx942", "--stage", "ttir"], env, cwd=tmp_path)
    assert p.returncode != 0, p.stdout[-1000:]
    assert "maxnreg is a launch option gfx942's backend does not take" in p.stderr, p.stderr[-2000:]


def test_a_stage_given_with_stats_is_said_not_to_be_printed(tmp_path):
    """helper-117: `ir ... --stage ptx --stats` printed the stats table alone, the --stage dropped without a word."""
    p = run_cli(["ir", "add", "--stage", "ptx", "--stats"], _env(tmp_path / "cache", tmp_path / "out"), timeout=600)
    assert p.returncode == 0 and "registers / thread" in p.stdout, p.stderr[-2000:]
    assert "note: --stats prints the statistics, not the ptx itself: run without it for the ptx" in p.stderr, p.stderr
