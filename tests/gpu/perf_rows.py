"""Print the perf gate's timed rows from a `tritondbg check --json` record: key, ours, torch, ratio, recorded."""
import json
import sys


def rows(node):
    if isinstance(node, dict):
        t = node.get("timings")
        if isinstance(t, dict) and all(isinstance(v, dict) and "ours_ms" in v for v in t.values()):
            yield from t.items()
            return
        for v in node.values():
            yield from rows(v)
    elif isinstance(node, list):
        for v in node:
            yield from rows(v)


for path in sys.argv[1:]:
    for key, v in rows(json.load(open(path))):
        ours, base, rec = v["ours_ms"] * 1e3, v.get("torch_ms"), v.get("recorded_ms")
        ratio = f"{base / v['ours_ms']:.2f}x" if base else "-"
        recs = f" recorded {rec * 1e3:.1f} us ({100 * (v['ours_ms'] / rec - 1):+.1f}%)" if rec else ""
        cfg = " | ".join(f"{k}: " + ",".join(f"{a}={b}" for a, b in c.items() if a in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"))
                         for k, c in (v.get("configs") or {}).items())
        print(f"{key:55s} {ours:9.1f} us  torch {base * 1e3 if base else float('nan'):9.1f} us  {ratio}{recs}  [{cfg}]")
