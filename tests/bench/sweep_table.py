"""Issue 18's sweep, the table side (no GPU): the groups and their targets, the summary, the markdown table, the merge
of a run's rows into an earlier table, ``--render`` and ``--baseline-out`` (the perf gate's baseline). The runs
themselves are tests/bench/sweep_h200.py's, which re-exports these names."""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROUPS = ("layernorm", "softmax", "gemm", "fp8", "prefill", "decode")
SIZES = ("big", "mid", "small")

# Issue 18's targets, per group: (baseline the ratio is taken against, every row >=, median row >=)
TARGETS = {"layernorm": ("F.layer_norm", 1.0, 1.5), "softmax": ("torch.softmax", 1.0, 1.5),
           "gemm": ("torch.matmul", 0.95, 1.0), "fp8": ("torch._scaled_mm", 0.95, 1.0),
           "prefill": ("sdpa flash", 1.5, 1.5), "decode": ("sdpa default", 1.0, 1.0)}


# Other baselines a group is also summarised against (no target): the fastest one a user could call instead
ALSO = {"prefill": "sdpa cudnn"}


def summarize(rows) -> list[dict]:
    """Per group: rows, the ratio against the target's baseline (min / median), the worst row, met or not; then
    the groups of ``ALSO`` against their other baseline."""
    out = []
    parts = [(g, None, TARGETS[g]) for g in GROUPS]
    parts += [(g, z, TARGETS[g]) for g in ("layernorm", "softmax") for z in SIZES]
    parts += [(g, None, (base, None, None)) for g, base in ALSO.items()]
    for group, size, (base, every, median_t) in parts:
        rs = [r for r in rows if r["group"] == group and base in r["baselines"] and "ratio" in r["baselines"][base]
              and (size is None or r["name"].endswith(f"({size})"))]
        if not rs or (size is not None and len(rs) == len([r for r in rows if r["group"] == group])):
            continue
        ratios = [r["baselines"][base]["ratio"] for r in rs]
        worst = min(rs, key=lambda r: r["baselines"][base]["ratio"])
        fails = sum(r.get("check") != "pass" for r in rs)
        med = statistics.median(ratios)
        met = None if every is None else (min(ratios) >= every and med >= median_t and not fails)
        out.append(dict(group=group if size is None else f"{group} ({size})", baseline=base, rows=len(rs),
                        min=min(ratios), median=med,
                        worst=f"{worst['name']} {worst['dtype']}", wrong=fails, every=every, median_target=median_t,
                        met=met))
    return out


def grid_summary(rows) -> list[dict]:
    """Per (kernel, shape, dtype) of a --grid run: the rule's config and time, the fastest correct config."""
    out = {}
    for r in rows:
        if not r["group"].endswith("-grid") or r.get("check") != "pass" or not r.get("ours_ms"):
            continue
        g = out.setdefault((r["group"], r["name"], r["dtype"]), dict(
            kernel=r["group"][:-5], name=r["name"], dtype=r["dtype"], rule="", rule_ms=None, best="", best_ms=None))
        cfg = r.get("config", "")
        if cfg.endswith(" (rule)"):
            g["rule"], g["rule_ms"] = cfg[:-7], r["ours_ms"]
        if g["best_ms"] is None or r["ours_ms"] < g["best_ms"]:
            g["best"], g["best_ms"] = cfg.replace(" (rule)", ""), r["ours_ms"]
    return [g for g in out.values() if g["rule_ms"] is not None]


def markdown(rows, metas) -> str:
    lines = ["# Issue 18 sweep: bundled kernels against torch on the H200", ""]
    for group, meta in sorted(metas.items(), key=lambda kv: GROUPS.index(kv[0]) if kv[0] in GROUPS else 99):
        for i, m in enumerate([meta] + list(meta.get("earlier", []))):
            label = group if i == 0 else f"{group} (rows the run above did not cover)"
            lines.append(f"- {label}: {m['date']}, {m['gpu']}, Triton {m['triton']}, torch {m['torch']}: "
                         f"`{m['command']}`")
    lines += ["", "do_bench median (L2 flushed), interleaved rounds; ratio = baseline / ours (> 1: ours faster). "
              "graph: CUDA-graph replay (GPU time, no host cost); host: Python + launch per call, no sync.", "",
              "| group | baseline | rows | min ratio | median ratio | worst row | target (every / median) | met |",
              "|---|---|---|---|---|---|---|---|"]
    for s in summarize(rows):
        target = "-" if s["every"] is None else f"{s['every']:.2f} / {s['median_target']:.2f}"
        met = "-" if s["met"] is None else ("yes" if s["met"] else "**no**")
        wrong = f" ({s['wrong']} wrong)" if s["wrong"] else ""
        lines.append(f"| {s['group']} | {s['baseline']} | {s['rows']}{wrong} | {s['min']:.2f}× | {s['median']:.2f}× "
                     f"| {s['worst']} | {target} | {met} |")
    grid = grid_summary(rows)
    if grid:
        lines += ["", "Rule against its rivals (`--grid`, big size, one round each):", "",
                  "| kernel | shape | dtype | rule | rule time | best config | best time | rule / best |",
                  "|---|---|---|---|---|---|---|---|"]
        for g in grid:
            lines.append(f"| {g['kernel']} | {g['name']} | {g['dtype']} | {g['rule']} | {g['rule_ms'] * 1e3:.1f} µs "
                         f"| {g['best']} | {g['best_ms'] * 1e3:.1f} µs | {g['rule_ms'] / g['best_ms']:.2f} |")
    lines += ["", "| group | shape | dtype | ours | check | config | baseline | time | ratio | graph ours / base "
              "| host ours / base |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bases = list(r["baselines"].items()) or [("-", {})]
        for i, (name, b) in enumerate(bases):
            first = i == 0
            perf = ""
            if first and r.get("tflops"):
                perf = f" ({r['tflops']:.0f} TF/s)"
            elif first and r.get("tbps"):
                perf = f" ({r['tbps']:.2f} TB/s)"
            check = r.get("check", "") if r.get("check") == "pass" else f"**{r.get('check', '').upper()}** {r.get('check_message', '')}"
            cells = [r["group"] if first else "", r["name"] if first else "", r["dtype"] if first else "",
                     f"{r['ours_ms'] * 1e3:.1f} µs{perf}" if first else "", check if first else "",
                     r.get("config", "") if first else "", name]
            if "error" in b:
                cells += [b["error"], "", "", ""]
            elif b:
                g = (f"{r['ours_graph_ms'] * 1e3:.1f} / {b['graph_ms'] * 1e3:.1f} µs"
                     if b.get("graph_ms") and r.get("ours_graph_ms") else "")
                h = (f"{r['ours_host_us']:.1f} / {b['host_us']:.1f} µs" if b.get("host_us") and r.get("ours_host_us")
                     else "")
                cells += [f"{b['ms'] * 1e3:.1f} µs", f"{b['ratio']:.2f}×", g, h]
            else:
                cells += ["", "", "", ""]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _part(row) -> tuple:
    """What a run replaces, per dtype (a run with --dtypes bfloat16 leaves the float16 rows in place): (group, size,
    dtype) for layernorm/softmax rows ("... (big)" / "... (small)": a run with --sizes small leaves the big rows of
    an earlier run in place), (group, row name, dtype) for gemm rows (a run with --gemm-m or --b-layout replaces the
    rows it measured), (group, None, dtype) for the others (the whole group)."""
    name = row.get("name", "")
    # a gemm run may cover some M (--gemm-m) or one b layout (--b-layout), a norm run some row lengths (--n,
    # its rows marked by_row): row by row
    if row.get("group") == "gemm" or row.get("by_row"):
        return row.get("group"), name, row.get("dtype")
    size = name[name.rfind("(") + 1:-1] if name.endswith(")") and "(" in name else None
    return row.get("group"), size, row.get("dtype")


def _run_key(meta: dict) -> str:
    """Which run a row came from: its date and command."""
    return f"{meta.get('date')} {meta.get('command')}"


def merge(previous: dict, rows: list, metas: dict, groups: list) -> tuple[list, dict]:
    """Rows and metas of this run, plus the rows of ``previous`` this run did not replace: other groups, and
    within a group the parts this run did not cover (``_part``). A group made of two runs keeps both runs'
    dates and commands in its meta (``earlier``): those of the runs whose rows are still in the table (each row
    carries its run's date and command, ``run``)."""
    for r in rows:
        m = metas.get(r.get("group"))
        if m is not None and "run" not in r:
            r["run"] = _run_key(m)
    old_metas = previous.get("metas", {})
    # rows from a JSON written before the tag: their table's main run
    old_rows = [r if "run" in r or r.get("group") not in old_metas else
                dict(r, run=_run_key(old_metas[r["group"]]))
                for r in previous.get("rows", [])]
    covered = {_part(r) for r in rows}

    def replaced(r):  # by its part (a by_row row also by its size's part), or by a new row of the same name
        return (_part(r) in covered or _part({**r, "by_row": False}) in covered
                or (r.get("group"), r.get("name"), r.get("dtype")) in covered)

    kept = [r for r in old_rows if r.get("group") not in groups
            or (_part(r)[1] is not None and not replaced(r) and any(r2.get("group") == r["group"] for r2 in rows))]
    out = {g: m for g, m in old_metas.items() if g not in groups}
    for g, m in metas.items():
        m = dict(m)
        if g in old_metas and any(r.get("group") == g for r in kept):
            old = old_metas[g]
            seen = {(m.get("date"), m.get("command"))}
            used = {r["run"] for r in kept if r.get("group") == g and r.get("run")}
            m["earlier"] = []
            for e in list(old.get("earlier", [])) + [{k: old.get(k) for k in ("date", "gpu", "triton", "torch",
                                                                                 "command")}]:
                key = (e.get("date"), e.get("command"))
                # not this run again (a table rendered from its own JSON), nor a run none of whose rows is left
                if key not in seen and _run_key(e) in used:
                    seen.add(key)
                    m["earlier"].append(e)
        out[g] = m
    return kept + rows, out


def write_baseline(path: str, rows, metas) -> int:
    """The perf gate's baseline for the sweep's shapes (tests/bench/sweep_scenarios.py) from these rows."""
    sys.path.insert(0, str(HERE))
    import sweep_scenarios
    from tritondbg.check import perf

    times, configs = sweep_scenarios.baseline_times(rows), sweep_scenarios.baseline_configs(rows)
    # every timed key gets its entry ({} where the row recorded no tl pick): save_baseline keeps the old file's
    # entries, and a stale pick must not outlive the row that recorded it
    configs = {key: configs.get(key, {}) for key in times}
    parts = {g: metas[g] for g in sweep_scenarios.GROUPS if g in metas}
    first = next(iter(parts.values()), {})
    meta = {"date": first.get("date", ""), "gpu": first.get("gpu", ""), "triton": first.get("triton", ""),
            "torch": first.get("torch", ""), "how": "tests/bench/sweep_h200.py --baseline-out, from: "
            + "; ".join(f"{g}: {m.get('command', '')} ({m.get('date', '')})" for g, m in parts.items())}
    perf.save_baseline(path, times, meta, configs)
    print(f"wrote {path} ({len(times)} perf-gate baseline entries, {sum(map(bool, configs.values()))} with the "
          "autotuners' picks)")
    return 0


def render(files, out: Path, baseline_out: str | None = None) -> int:
    rows, metas = [], {}
    for f in files:
        try:
            data = json.loads(Path(f).read_text())
        except (OSError, ValueError) as e:
            print(f"sweep_h200: cannot read {f}: {e}", file=sys.stderr)
            return 2
        groups = sorted({r["group"] for r in data.get("rows", [])} | set(data.get("metas", {})))
        rows, metas = merge({"rows": rows, "metas": metas}, data.get("rows", []), data.get("metas", {}), groups)
    out.with_suffix(".json").write_text(json.dumps({"metas": metas, "rows": rows}, indent=1))
    out.write_text(markdown(rows, metas))
    print(f"wrote {out} ({len(rows)} rows)")
    return write_baseline(baseline_out, rows, metas) if baseline_out else 0
