"""`tritondbg cache ls | show | clear` on private copies of the Triton cache `tritondbg ir` filled for the
session (every bundled kernel for sm_90, sm_80 and gfx942; see ir_shared.py)."""
import json
import re
import os
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from ir_shared import ir_env, shared, snapshot_dir  # noqa: F401  (shared is a fixture)


def _env(cache: Path, tmp: Path) -> dict:
    return ir_env(cache, tmp / "traces")


@pytest.fixture
def cache(shared, tmp_path):
    """A private copy of the session's shared cache as the helper left it (every bundled kernel; tests delete
    and corrupt entries)."""
    env, _ = shared
    copy = tmp_path / "cache"
    shutil.copytree(snapshot_dir(env), copy, symlinks=True)
    return copy


def _ls(cache: Path, *extra) -> list[dict]:
    p = run_cli(["cache", "--cache-dir", str(cache), "ls", "--json", *extra], _env(cache, cache.parent))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["entries"]


def _kernel_entries(entries):
    return sorted((e["kernel"], e["target"]) for e in entries if e["kind"] == "kernel")


def test_ls_lists_kernels_targets_and_stages(cache, shared):
    _, compiled = shared
    entries = _ls(cache)
    expected = sorted({(r["item"]["name"], {"sm_90": "cuda:90", "sm_80": "cuda:80", "gfx942": "hip:gfx942"}[
        r["item"]["arch"]], Path(r["item"]["entry"]).name) for r in compiled["results"]})
    listed = {(e["kernel"], e["target"], e["key"]) for e in entries if e["kind"] == "kernel"}
    assert set(expected) <= listed   # the helper also compiled tiny cases it then did not need (same kernels)
    assert {e[0] for e in listed} == {e[0] for e in expected}
    for e in entries:
        assert e["ok"], e
        if e["kind"] != "kernel":
            continue
        common = {"source", "ttir", "ttgir", "llir"}
        assert common | ({"amdgcn", "hsaco"} if e["target"].startswith("hip") else {"ptx", "cubin"}) <= set(e["stages"])
        assert e["size"] > 1000 and len(e["key"]) == 52
    adds = _kernel_entries(_ls(cache, "--kernel", "add*"))
    assert adds == [("add_kernel", "cuda:80"), ("add_kernel", "cuda:90"), ("add_kernel", "hip:gfx942")]
    table = run_cli(["cache", "--cache-dir", str(cache), "ls"], _env(cache, cache.parent))
    assert table.returncode == 0 and "softmax_kernel" in table.stdout and f"{len(entries)} entries" in table.stdout


def test_ls_reports_corrupt_and_partial_entries(cache):
    entries = {(e["kernel"], e["target"]): e for e in _ls(cache)}
    add80, add90, soft = (Path(entries[k]["path"]) for k in
                          [("add_kernel", "cuda:80"), ("add_kernel", "cuda:90"), ("softmax_kernel", "cuda:90")])
    (add80 / "__grp__add_kernel.json").write_text("{not json")
    (add90 / "add_kernel.cubin").unlink()
    (soft / "tmp.pid_123_abc").mkdir()
    (cache / ("A" * 52)).mkdir()
    (cache / "stray.txt").write_text("x")
    # what a compile stopped midway (Ctrl-C during `ir`) leaves: stages, no metadata, no group file ("ok" before)
    cut = cache / ("B" * 52)
    cut.mkdir()
    for stage in ("source", "ttir", "ttgir"):
        shutil.copy(add90 / f"add_kernel.{stage}", cut / f"add_kernel.{stage}")
    by_path = {}
    for e in _ls(cache):
        by_path.setdefault(e["path"], []).append(e)
    assert by_path[str(add80)][0]["problem"].startswith("corrupt group file __grp__add_kernel.json")
    assert by_path[str(add90)][0]["problem"] == "partial: missing add_kernel.cubin"
    assert by_path[str(soft)][0]["problem"] == "unfinished write (tmp.pid_123_abc)"
    assert by_path[str(cache / ("A" * 52))][0]["problem"] == "empty folder"
    assert by_path[str(cache / "stray.txt")][0]["problem"] == "stray file"
    (cut_entry,) = by_path[str(cut)]
    assert cut_entry["kind"] == "kernel" and cut_entry["kernel"] == "add_kernel" and not cut_entry["ok"]
    assert cut_entry["problem"].startswith("partial: no metadata json and no __grp__ file"), cut_entry
    assert cut_entry["stages"] == ["source", "ttir", "ttgir"]
    table = run_cli(["cache", "--cache-dir", str(cache), "ls"], _env(cache, cache.parent))
    assert table.returncode == 0 and "Traceback" not in table.stderr and "incomplete or corrupt" in table.stdout


def test_show_summary_and_stage(cache):
    entry = next(e for e in _ls(cache) if e["target"] == "cuda:90" and e["kernel"] == "add_kernel")
    env = _env(cache, cache.parent)
    p = run_cli(["cache", "--cache-dir", str(cache), "show", entry["key"][:8]], env)
    assert p.returncode == 0, p.stderr
    assert "add_kernel" in p.stdout and "target  cuda:90" in p.stdout and "num_warps=4" in p.stdout
    p = run_cli(["cache", "--cache-dir", str(cache), "show", entry["key"], "--stage", "ptx"], env)
    assert p.stdout == Path(entry["files"]["ptx"]).read_text()
    p = run_cli(["cache", "--cache-dir", str(cache), "show", entry["key"], "--stage", "sass"], env)
    assert p.returncode == 0 and "EXIT" in p.stdout
    p = run_cli(["cache", "--cache-dir", str(cache), "show", "ZZZZ"], env)
    assert p.returncode == 2 and "no cache entry 'ZZZZ'" in p.stderr


def _index_keys(cache: Path) -> dict[str, set]:
    return {p.name: {Path(i["entry"]).name for i in json.loads(p.read_text())["items"]}
            for p in (cache / "tritondbg-ir-index").glob("*.json")}


def test_clear_removes_only_that_kernels_entries(cache):
    env = _env(cache, cache.parent)
    before = _ls(cache)
    add_keys = {e["key"] for e in before if e["kernel"] == "add_kernel"}
    assert len(add_keys) == 3
    index_before = _index_keys(cache)
    p = run_cli(["cache", "--cache-dir", str(cache), "clear", "--kernel", "add_kernel"], env)
    assert p.returncode == 0, p.stderr
    assert "removed 3 entries" in p.stdout
    after = _ls(cache)
    assert sorted(e["key"] for e in after) == sorted(e["key"] for e in before if e["key"] not in add_keys)
    assert all(Path(e["path"]).is_dir() for e in after)
    # index records that pointed at an add entry are gone, the others stay
    index_after = _index_keys(cache)
    assert set(index_after) == {name for name, keys in index_before.items() if not keys & add_keys}
    assert len(index_after) < len(index_before)


def test_clear_refuses_anything_outside_the_cache(cache, tmp_path):
    env = _env(cache, cache.parent)
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    link = cache / ("B" * 52)
    link.symlink_to(outside, target_is_directory=True)
    for target in (str(outside), str(cache / ".." / "precious"), str(link), "B" * 52):
        p = run_cli(["cache", "--cache-dir", str(cache), "clear", target], env)
        assert p.returncode == 2, (target, p.stdout, p.stderr)
        assert "refusing" in p.stderr and "Traceback" not in p.stderr
    p = run_cli(["cache", "--cache-dir", str(cache), "clear", "--all"], env)
    assert p.returncode == 0, p.stderr
    assert re.search(r"removed \d+ entries", p.stdout) and f"skipped {link}: a symlink" in p.stderr
    assert (outside / "keep.txt").read_text() == "keep" and link.is_symlink()
    assert _kernel_entries(_ls(cache)) == []


@pytest.mark.parametrize("args, needle", [
    (["clear"], "cache clear needs --kernel NAME, KEY... or --all"),
    (["clear", "--kernel", "nothing_kernel"], "no cache entry for kernel 'nothing_kernel'"),
    # --all with --kernel removed every entry of the cache (a user lost 32 entries): one selector at a time
    (["clear", "--all", "--kernel", "add_kernel"], "not --kernel and --all"),
    (["clear", "--all", "--kernel", "add_kernel", "--dry-run"], "not --kernel and --all"),
    (["clear", "ABCD", "--kernel", "add_kernel"], "not KEY... and --kernel"),
])
def test_clear_needs_a_real_selection(cache, args, needle):
    before = _kernel_entries(_ls(cache))
    p = run_cli(["cache", "--cache-dir", str(cache), *args], _env(cache, cache.parent))
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert _kernel_entries(_ls(cache)) == before


def test_ls_of_a_kernel_the_cache_does_not_hold_names_the_ones_it_does(cache):
    p = run_cli(["cache", "--cache-dir", str(cache), "ls", "--kernel", "nomatch*"], _env(cache, cache.parent))
    assert p.returncode == 1 and "no entries for kernel nomatch* in" in p.stdout and "add_kernel" in p.stdout, p.stdout


def test_clear_refuses_a_root_that_is_not_a_cache(tmp_path):
    for root in ("/", os.path.expanduser("~")):
        p = run_cli(["cache", "--cache-dir", root, "clear", "--all", "--dry-run"], _env(tmp_path, tmp_path))
        assert p.returncode == 2 and "does not look like a Triton cache directory" in p.stderr


def test_clear_all_on_a_folder_that_is_not_a_triton_cache_deletes_nothing(tmp_path):
    """Key-named folders holding the user's files are not Triton entries: refused, one line, exit 2."""
    root = tmp_path / "not-a-cache"
    keep = {root / ("A" * 52) / "notes.txt": "mine", root / ("B" * 52) / "data.json": '{"a": 1}',
            root / ("C" * 52) / "x.ptx": ".version 8.0", root / ("D" * 52) / "__grp__x.json": "{not json"}
    for path, text in keep.items():
        path.parent.mkdir(parents=True)
        path.write_text(text)
    for extra in ((), ("--dry-run",)):
        p = run_cli(["cache", "--cache-dir", str(root), "clear", "--all", *extra], _env(tmp_path, tmp_path))
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "refusing to clear" in p.stderr and "holds no Triton cache entry" in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
        assert all(path.read_text() == text for path, text in keep.items())


def test_clear_all_keeps_a_user_folder_among_real_entries_and_dry_run_lists_each(cache):
    env = _env(cache, cache.parent)
    entries = [e for e in _ls(cache) if e["kind"] == "kernel"]
    mine = cache / ("Q" * 52)
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    # a real entry with one extra user file is not Triton's either
    mixed = Path(entries[0]["path"])
    (mixed / "todo.txt").write_text("mine too")
    # what a compile for an unsupported target leaves: stages without metadata, still Triton's own files
    partial = cache / ("P" * 52)
    partial.mkdir()
    ttir = next(Path(e["files"]["ttir"]) for e in entries if "ttir" in e["files"])
    shutil.copy(ttir, partial / ttir.name)
    p = run_cli(["cache", "--cache-dir", str(cache), "clear", "--all", "--dry-run"], env)
    assert p.returncode == 0, p.stderr
    listed = [ln.split() for ln in p.stdout.splitlines() if ln.startswith("  would remove ")]
    by_key = {parts[2]: parts for parts in listed}
    for e in entries[1:]:
        assert e["key"] in by_key and e["kernel"] in by_key[e["key"]], (e["key"], p.stdout)
        assert by_key[e["key"]][-1] in ("KiB", "MiB")   # each line ends with the folder's size
    assert mixed.name not in by_key and mine.name not in by_key
    assert by_key[partial.name][3:5] == [f"{ttir.stem}", "(no"], by_key[partial.name]
    assert f"skipped {mine}: holds 'notes.txt', which Triton did not write" in p.stderr
    assert all(Path(e["path"]).is_dir() for e in entries)   # dry run: nothing gone
    p = run_cli(["cache", "--cache-dir", str(cache), "clear", "--all"], env)
    assert p.returncode == 0, p.stderr
    assert (mine / "notes.txt").read_text() == "mine" and (mixed / "todo.txt").read_text() == "mine too"
    assert not any(Path(e["path"]).exists() for e in entries[1:]) and not partial.exists()


def test_truncated_stage_and_metadata_are_flagged_and_recompiled(cache):
    """A cut PTX (Triton serves it as a hit) and a cut metadata json (Triton dies in json.loads): `cache ls`
    names the file, `ir` says which file is damaged and compiles a fresh entry."""
    env = _env(cache, cache.parent)
    entries = {(e["kernel"], e["target"]): e for e in _ls(cache)}
    ptx = Path(entries[("add_kernel", "cuda:90")]["files"]["ptx"])
    meta = Path(entries[("add_kernel", "cuda:80")]["files"]["json"])
    for folder in (ptx.parent, meta.parent):   # the copy's group files still name the shared cache's files
        group = folder / "__grp__add_kernel.json"
        children = json.loads(group.read_text())["child_paths"]
        group.write_text(json.dumps({"child_paths": {c: str(folder / c) for c in children}}))
    whole_ptx = ptx.read_text()
    ptx.write_text(whole_ptx[:len(whole_ptx) // 2])
    meta.write_text(meta.read_text()[:300])
    status = {e["path"]: e["problem"] for e in _ls(cache)}
    assert status[str(ptx.parent)].startswith("damaged: add_kernel.ptx: truncated"), status
    assert status[str(meta.parent)].startswith("corrupt metadata add_kernel.json"), status
    p = run_cli(["ir", "add", "--diff", "arch=sm_80", "arch=sm_90", "--stage", "ptx"], env)
    assert p.returncode == 0, p.stderr
    assert f"damaged cache entry: {ptx}: truncated" in p.stderr
    assert f"damaged cache entry: {meta}: not valid JSON" in p.stderr
    assert "Traceback" not in p.stderr and "cache miss: compiled for sm_90" in p.stderr
    assert ptx.read_text() == whole_ptx   # the fresh compile wrote the whole PTX again, in the same entry
    assert all(e["ok"] for e in _ls(cache) if e["kernel"] == "add_kernel"), _ls(cache)


def test_stage_checks_see_truncation_not_braces_in_strings(tmp_path):
    import struct

    from tritondbg.ir.integrity import stage_problem

    ptx = ('.version 8.7\n.target sm_90a\n.file 1 "odd{name}.py"\n.visible .entry k(\n)\n{\n'
           '  .global .b8 fmt[2] = {123, 0}; // "{"\n  ret;\n}\n')
    f = tmp_path / "k.ptx"
    f.write_text(ptx)
    assert stage_problem("ptx", str(f)) == ""
    f.write_text(ptx[:-3])
    assert stage_problem("ptx", str(f)).startswith("truncated")
    f.write_text(ptx.replace(".entry", ".func"))
    assert stage_problem("ptx", str(f)).startswith("no .entry")
    elf = bytearray(64)
    elf[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", elf, 0x28, 4096)      # section table at byte 4096 ...
    struct.pack_into("<HH", elf, 0x3A, 64, 10)   # ... 10 entries of 64 bytes: the file must hold 4736 bytes
    f = tmp_path / "k.cubin"
    f.write_bytes(bytes(elf) + bytes(4672))
    assert stage_problem("cubin", str(f)) == ""
    f.write_bytes(bytes(elf) + bytes(1000))
    assert stage_problem("cubin", str(f)).startswith("truncated (1064 bytes")


def test_ls_of_a_folder_that_is_no_triton_cache_says_so(tmp_path, cli_env):
    """Its sub-folders were listed as '- (other) ... ok', exit 0, as if it were a cache."""
    (tmp_path / "notcache" / "sub").mkdir(parents=True)
    (tmp_path / "notcache" / "sub" / "notes.txt").write_text("mine")
    r = run_cli(["cache", "--cache-dir", str(tmp_path / "notcache"), "ls"], cli_env, cwd=tmp_path)
    assert r.returncode == 1 and "holds no Triton cache entry" in r.stdout, r.stdout + r.stderr
