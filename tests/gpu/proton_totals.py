"""Per-kernel totals from a Proton profile (``proton -n NAME script.py`` writes ``NAME.hatchet``, JSON):
``python tests/gpu/proton_totals.py NAME.hatchet`` prints kernel, launches, total ms.

The file is a list: the root frame tree (each node ``{"frame": {"name", "type"}, "metrics": {"count",
"time (ns)", "device_id", ...}, "children": [...]}``; kernel nodes carry their exclusive time), then device info
(triton/profiler/viewer.py reads it the same way). A kernel launched under several scopes is summed; ``paths``
lists each tree path where the kernel's name appears with its count, to tell where an extra launch came from."""
from __future__ import annotations

import json
import sys


def totals(path: str) -> dict[str, dict]:
    with open(path) as f:
        database = json.load(f)
    out: dict[str, dict] = {}

    def walk(node: dict, above: tuple[str, ...]) -> None:
        metrics = node.get("metrics") or {}
        name = (node.get("frame") or {}).get("name", "?")
        if "time (ns)" in metrics and node.get("frame"):
            t = out.setdefault(name, {"launches": 0, "total_ms": 0.0, "paths": []})
            t["launches"] += int(metrics.get("count", 0))
            t["total_ms"] += float(metrics["time (ns)"]) / 1e6
            t["paths"].append(("/".join((*above, name)), int(metrics.get("count", 0)),
                               float(metrics["time (ns)"]) / 1e6))
        for child in node.get("children") or []:
            walk(child, (*above, name))

    for node in database if isinstance(database, list) else [database]:
        if isinstance(node, dict) and "frame" in node:
            walk(node, ())
    return out


if __name__ == "__main__":
    for name, t in sorted(totals(sys.argv[1]).items(), key=lambda kv: -kv[1]["total_ms"]):
        print(f"{name[:80]:80s} {t['launches']:8d} {t['total_ms']:12.3f} ms")
        for where, count, ms in t["paths"]:
            print(f"    {where[:76]:76s} {count:8d} {ms:12.3f} ms")
