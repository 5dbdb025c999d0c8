"""Per-kernel numbers: registers, spills, shared memory, warps/stages and a static instruction mix.

NVIDIA: registers and local memory from ``cuobjdump -res-usage`` on the cubin, which reads the same ELF
attributes the driver reports on a GPU (Triton's ``n_regs`` = CU_FUNC_ATTRIBUTE_NUM_REGS, ``n_spills`` =
LOCAL_SIZE_BYTES / 4); shared memory, warps and stages from Triton's metadata. AMD: the kernel descriptor in the
AMDGCN text (``.vgpr_count``, ``.vgpr_spill_count``, ScratchSize, Occupancy).
Instruction counts are static (per kernel body, not executed counts), from PTX and SASS (or AMDGCN).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from tritondbg.ir.stages import StageError, resource_usage, sass, strip_line_info

# Shared memory one block may use (bytes, opt-in maximum): sm_70 96 KiB, sm_75 64 KiB, sm_80/87 164 KiB - 1 KiB
# reserved, sm_86/89/120 100 KiB - 1, sm_90/100/103 228 KiB - 1 (NVIDIA CCCL, libcudacxx/include/cuda/__device/
# arch_traits.h: max_shared_memory_per_block_optin = the SM's maximum - reserved_shared_memory_per_block, which is
# 1 KiB from sm_80 on, 0 before).
MAX_SHARED = {70: 98304, 75: 65536, 80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448, 100: 232448,
              103: 232448, 120: 101376}
# AMD: the LDS one workgroup may use, as Triton's AMD backend counts it (third_party/amd/lib/TritonAMDGPUToLLVM/
# TargetInfo.cpp, getSharedMemorySize(): 160 KiB on CDNA4 (gfx950), 320 KiB on gfx1250, else 64 KiB: CDNA2/3
# gfx90a/gfx942, RDNA3 gfx110x, RDNA4 gfx120x).
AMD_SHARED = {"gfx950": 163840, "gfx1250": 327680}
AMD_SHARED_DEFAULT = 65536


def shared_limit(arch) -> int | None:
    """The most shared memory (bytes) one block of ``arch`` may use: Triton metadata's target arch, an int
    (NVIDIA: 90) or a string (AMD: "gfx942"); None for an NVIDIA target not in the table."""
    if isinstance(arch, str) and arch.startswith("gfx"):
        return AMD_SHARED.get(arch, AMD_SHARED_DEFAULT)
    return MAX_SHARED.get(arch)


_PTX_WIDTH = re.compile(r"\.(v2|v4|v8)?\.?([bsuf])(8|16|32|64|128)\b")


def _ptx_mix(ptx: str) -> Counter:
    mix: Counter = Counter()
    for raw in ptx.splitlines():
        line = raw.strip()
        if not line or line.startswith(("//", ".", "$", "{", "}")) or line.endswith(":"):
            continue
        if line.startswith("@"):
            line = line.split(None, 1)[1] if " " in line else line
        op = line.split(None, 1)[0].rstrip(";")
        if op.startswith("wgmma.mma_async"):
            mix["wgmma (warpgroup mma)"] += 1
        elif op.startswith("tcgen05.mma"):
            mix["tcgen05.mma (Blackwell mma)"] += 1
        elif op.startswith("mma.sync"):
            mix["mma.sync"] += 1
        elif op.startswith(("ld.global", "st.global")):
            kind = "ld.global" if op.startswith("ld") else "st.global"
            mix[f"{kind} {_ptx_bits(op)}-bit"] += 1
        elif op.startswith("cp.async.bulk.tensor"):
            mix["TMA (cp.async.bulk.tensor)"] += 1
        elif op.startswith("cp.async.bulk"):
            mix["cp.async.bulk"] += 1
        elif op.startswith("cp.async") and not op.startswith(("cp.async.commit", "cp.async.wait")):
            mix["cp.async"] += 1
        elif op.startswith(("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive", "bar.red")):
            mix["barrier (bar.sync)"] += 1
        elif op.startswith("mbarrier"):
            mix["mbarrier"] += 1
        elif op.startswith("ldmatrix"):
            mix["ldmatrix"] += 1
        elif op.startswith(("ld.shared", "st.shared")):
            mix[f"{op[:9]} {_ptx_bits(op)}-bit"] += 1
        elif op.startswith(("ld.local", "st.local")):
            mix[op[:8]] += 1
    return mix


def _ptx_bits(op: str) -> int:
    m = _PTX_WIDTH.search(op[op.find(".", 3):])
    if not m:
        return 0
    vec = {"v2": 2, "v4": 4, "v8": 8}.get(m.group(1) or "", 1)
    return vec * int(m.group(3))


_SASS_INSN = re.compile(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def _sass_mix(text: str) -> Counter:
    mix: Counter = Counter()
    for line in text.splitlines():
        m = _SASS_INSN.search(line)
        if not m:
            continue
        op = m.group(1)
        base = op.split(".", 1)[0]
        if base == "HGMMA" or base == "QGMMA" or base == "IGMMA":
            mix[f"{base} (warpgroup mma)"] += 1
        elif base.startswith("UTC") and "MMA" in base:
            mix[f"{base} (tcgen05 mma)"] += 1
        elif base in ("HMMA", "IMMA", "DMMA", "QMMA"):
            mix[f"{base} (mma)"] += 1
        elif base in ("LDG", "STG"):
            mix[f"{base} {_sass_bits(op)}-bit"] += 1
        elif base == "LDGSTS":
            mix["LDGSTS (cp.async)"] += 1
        elif base.startswith("UTMA") or base == "UBLKCP":
            mix[f"{base} (TMA)"] += 1
        elif base in ("BAR", "BSYNC") and op.startswith("BAR"):
            mix["BAR (barrier)"] += 1
        elif base == "SYNCS":
            mix["SYNCS (mbarrier)"] += 1
        elif base in ("LDSM", "STSM"):
            mix[f"{base} (ldmatrix)" if base == "LDSM" else base] += 1
        elif base in ("LDS", "STS"):
            mix[f"{base} {_sass_bits(op)}-bit"] += 1
        elif base in ("LDL", "STL"):
            mix[f"{base} (local: spills)"] += 1
    return mix


def _sass_bits(op: str) -> int:
    for part in op.split(".")[1:]:
        if part.isdigit():
            return int(part)
        if part in ("U8", "S8"):
            return 8
        if part in ("U16", "S16"):
            return 16
    return 32


_GCN_WIDTH = {"ubyte": 8, "sbyte": 8, "byte": 8, "ushort": 16, "sshort": 16, "short": 16, "dword": 32,
              "dwordx2": 64, "dwordx3": 96, "dwordx4": 128, "b32": 32, "b64": 64, "b96": 96, "b128": 128,
              "b16": 16, "b8": 8, "u8": 8, "u16": 16, "i8": 8, "i16": 16}


def _amdgcn_mix(text: str) -> Counter:
    mix: Counter = Counter()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", ".", "//")) or line.endswith(":"):
            continue
        op = line.split(None, 1)[0]
        if op.startswith("v_mfma") or op.startswith("v_smfmac"):
            mix["v_mfma (matrix core)"] += 1
        elif op.startswith("v_wmma"):
            mix["v_wmma (matrix core)"] += 1
        elif re.match(r"(global|buffer)_(load|store)_", op):
            space, kind, rest = op.split("_", 2)
            width = _GCN_WIDTH.get(rest.replace("lds_", ""), 0)
            mix[f"{space}_{kind} {width}-bit"] += 1
        elif op == "s_barrier":
            mix["s_barrier"] += 1
        elif op.startswith(("ds_read", "ds_write", "ds_load", "ds_store")):
            mix["ds (LDS) access"] += 1
        elif op.startswith("scratch_"):
            mix["scratch (spills)"] += 1
    return mix


def _amdgcn_counts(text: str) -> dict[str, int]:
    fields = {"vgpr_count": r"\.vgpr_count:\s+(\d+)", "sgpr_count": r"\.sgpr_count:\s+(\d+)",
              "vgpr_spill_count": r"\.vgpr_spill_count:\s+(\d+)", "sgpr_spill_count": r"\.sgpr_spill_count:\s+(\d+)",
              "scratch_bytes": r";\s*ScratchSize:\s+(\d+)", "occupancy": r";\s*Occupancy:\s+(\d+)",
              "lds_bytes": r"\.group_segment_fixed_size:\s+(\d+)"}
    out = {}
    for key, pattern in fields.items():
        m = re.search(pattern, text)
        if m:
            out[key] = int(m.group(1))
    return out


# the loop attribute tl.range(warp_specialize=True) sets
_WS_LOOP = re.compile(r"\{[^{}]*\btt\.warp_specialize\b[^{}]*\}")
_WS_PARTITION = re.compile(r"^\s*(?:\}\s*)?partition\d+\(.*\bnum_warps\((\d+)\)", re.M)
_WS_REGS = re.compile(r"requestedRegisters\s*=\s*array<i32:\s*([\d,\s]+)>")
_MODULE_WARPS = re.compile(r'"ttg\.num-warps"\s*=\s*(\d+)')
_SETMAXNREG = re.compile(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)")


def warp_specialization(ttir: str, ttgir: str, ptx: str = "") -> dict[str, Any] | None:
    """Whether ``tl.range(..., warp_specialize=True)`` was asked for (the ``tt.warp_specialize`` loop attribute in
    TTIR) and what Triton built (``ttg.warp_specialize`` in TTGIR: the default warp group plus its partitions,
    their warps, the registers requested for each, and the ``setmaxnreg`` values in the PTX). None when the
    kernel neither asks for it nor has it. Triton may silently build nothing: on Hopper (3.6, 3.9) a loop
    with num_warps != 4, or a persistent flattened loop, compiles to one warp group (``built`` False)."""
    requested = len(_WS_LOOP.findall(ttir))
    ops = ttgir.count("ttg.warp_specialize(")
    if not requested and not ops:
        return None
    out: dict[str, Any] = {"requested_loops": requested, "built": ops > 0}
    if ops:
        default = _MODULE_WARPS.search(ttgir)
        warps = ([int(default.group(1))] if default else []) + [int(w) for w in _WS_PARTITION.findall(ttgir)]
        regs = _WS_REGS.search(ttgir)
        out.update(partitions=len(warps), partition_warps=warps, warps_launched=sum(warps),
                   requested_registers=[int(v) for v in regs.group(1).replace(" ", "").split(",") if v]
                   if regs else None)
        nreg = _SETMAXNREG.findall(ptx)
        if nreg:
            out["setmaxnreg"] = {kind: sorted({int(v) for k, v in nreg if k == kind}) for kind in ("inc", "dec")}
    return out


def warp_specialization_str(ws: dict[str, Any] | None) -> str:
    """One line for the stats table."""
    if not ws:
        return "-"
    if not ws["built"]:
        return f"asked ({ws['requested_loops']} loop), NOT built: one warp group"
    regs = ws.get("requested_registers")
    return (f"{ws['partitions']} groups ({'+'.join(map(str, ws['partition_warps']))} = {ws['warps_launched']} warps)"
            + (f", regs {'/'.join(map(str, regs))}" if regs else ""))


def row(item, mix: bool = True) -> dict[str, Any]:
    """``compute``'s stats of an item with where its config came from, as `ir --stats --json` prints them and the
    resources gate reads them; a config listed without a compile (pruned, refused by the compiler: its
    ``not_applicable`` reason, or not reached before a Ctrl-C) has its names only. ``status``: ok, not-applicable,
    interrupted (`ir --json`'s rows of a failed request say error)."""
    if not item.metadata_file:
        out = {"kernel": item.kernel or None, "arch": item.arch, "case": item.case, "dtype": item.dtype,
               "config": item.config}
    else:
        out = compute(item, mix=mix)
    status = "interrupted" if item.extra.get("interrupted") else \
        "not-applicable" if item.extra.get("not_applicable") else "ok"
    out.update({"status": status, "config_source": item.config_source, "cache": item.source, "grid": item.grid,
                "specialization": item.specialization, "kept_by_pruning": item.extra.get("kept_by_pruning", True),
                "not_applicable": item.extra.get("not_applicable")})
    return out


def compute(item, mix: bool = True) -> dict[str, Any]:
    """The stats of one IRItem as a flat dict (``--json`` prints it as is); ``mix=False``: without the
    instruction mix (no SASS disassembly), registers, spills and shared memory only."""
    meta = json.loads(Path(item.metadata_file).read_text())
    target = meta.get("target") or {}
    arch = target.get("arch")
    out: dict[str, Any] = {
        "kernel": item.kernel, "arch": item.arch, "case": item.case, "dtype": item.dtype,
        "config": item.config, "cache_entry": item.entry,
        "num_warps": meta.get("num_warps"), "num_stages": meta.get("num_stages"), "num_ctas": meta.get("num_ctas"),
        "shared": meta.get("shared"),
    }
    limit = shared_limit(arch)
    if limit and out["shared"] is not None:
        out["shared_limit"] = limit
        out["shared_fits"] = out["shared"] <= limit
    want_mix, mix = mix, {}
    texts = {stage: Path(item.files[stage]).read_text() if stage in item.files else ""
             for stage in ("ttir", "ttgir", "ptx")}
    out["warp_specialization"] = warp_specialization(texts["ttir"], texts["ttgir"], texts["ptx"])
    if target.get("backend") == "cuda":
        usage = resource_usage(item)
        out["n_regs"] = usage.get("REG")
        out["local_bytes"] = usage.get("LOCAL")
        # Triton's n_spills is the driver's LOCAL_SIZE_BYTES / 4, which counts the stack frame: ptxas spills
        # there (tests/zoo/spills.py: cuobjdump STACK:1864 LOCAL:0, 744 LDL in the SASS), so count both.
        out["n_spills"] = (usage.get("LOCAL", 0) + usage.get("STACK", 0)) // 4 if usage else None
        out["static_shared"] = usage.get("SHARED")
        out["stack_bytes"] = usage.get("STACK")
        if want_mix and "ptx" in item.files:
            mix["ptx"] = dict(sorted(_ptx_mix(texts["ptx"]).items()))
        try:
            if want_mix:
                text, _, _ = sass(item)
                mix["sass"] = dict(sorted(_sass_mix(strip_line_info(text)).items()))
        except StageError as exc:
            out["sass_error"] = str(exc)
    elif "amdgcn" in item.files:
        text = Path(item.files["amdgcn"]).read_text()
        counts = _amdgcn_counts(text)
        out["n_regs"] = counts.get("vgpr_count")
        out["n_spills"] = counts.get("vgpr_spill_count", 0) + counts.get("sgpr_spill_count", 0) \
            if counts.get("vgpr_spill_count") is not None else None
        out.update({k: v for k, v in counts.items() if k != "vgpr_count"})
        if want_mix:
            mix["amdgcn"] = dict(sorted(_amdgcn_mix(text).items()))
    out["instruction_mix"] = mix
    return out
