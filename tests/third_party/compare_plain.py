"""Regenerate the table of tests/third_party/README.md: each corpus kernel under plain ``TRITON_INTERPRET=1``
(the scenario's own launch, a bare interpreter, no tritondbg shim or stand-in), under the bare interpreter with
only the CPU stand-in installed (what plain Triton computes once the host code can run), and under
``tritondbg interpret``.

    python tests/third_party/compare_plain.py            # print the table (markdown)
    python tests/third_party/compare_plain.py --write    # and put it into tests/third_party/README.md

Three processes (TRITON_INTERPRET is read at import), one per column; the last runs every kernel through
tritondbg's runner with its instruments, as `tritondbg interpret FILE --case all` does. About 3 minutes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- table: begin -->", "<!-- table: end -->"


def files() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != Path(__file__).name)


def _short(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {text}"[:110]


def plain(path: str) -> list[dict]:
    """In this process (TRITON_INTERPRET=1 set by the caller): import the file, run every case and dtype."""
    import importlib.util

    import torch

    from tritondbg.compare import compare, tolerance
    from tritondbg.scenario import Scenario

    sys.path.insert(0, str(Path(path).parent))
    try:
        spec = importlib.util.spec_from_file_location("plain_scenario", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the import itself is a result
        return [{"case": "*", "dtype": "*", "status": "import", "message": _short(exc)}]
    scenario = next(v for v in vars(module).values() if isinstance(v, Scenario))
    rows = []
    for case in scenario.cases:
        for dt in case.dtypes:
            dtype = getattr(torch, dt)
            inputs = scenario.make_inputs(case, dtype, "cpu", torch.Generator().manual_seed(0))
            expected = scenario.reference_for(case)(**inputs)
            try:
                out = scenario.launch_for(case)(**inputs)
                atol, rtol = tolerance(dt, case.atol, case.rtol)
                errors = compare(out, expected, atol, rtol)
                bad = [e for e in errors if not e.passed]
                row = {"status": "pass"} if not bad else {
                    "status": "wrong", "message": f"{bad[0].mismatched}/{bad[0].numel} wrong"}
            except Exception as exc:  # noqa: BLE001
                row = {"status": "error", "message": _short(exc)}
            rows.append({"case": case.name, "dtype": dt, **row})
    return rows


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTEST_VERSION", None)
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    return env


def run_plain_all(paths: list[Path], flag: str = "--plain") -> dict[str, list[dict]]:
    env = _env() | {"TRITON_INTERPRET": "1"}
    p = subprocess.run([sys.executable, __file__, flag, *map(str, paths)], capture_output=True, text=True,
                       env=env, timeout=3600)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {str(x): [{"case": "*", "dtype": "*", "status": "crash", "message": tail[:110]}] for x in paths}


def tritondbg_rows(path: str) -> list[dict]:
    """In this process: `tritondbg interpret PATH --case all` (sanitizers on), as rows."""
    from tritondbg import runner
    from tritondbg.interp import instruments

    try:
        record = runner.run(path, mode="interpret", cases="all", instruments=instruments.build(path))
    except Exception as exc:  # noqa: BLE001
        return [{"case": "*", "dtype": "*", "status": "error", "message": _short(exc)}]
    out = []
    for r in record.results:
        kinds = sorted({f.get("kind", "?") for f in r.findings})
        out.append({"case": r.case, "dtype": r.dtype, "status": r.status,
                    "message": (r.message or "") + (f" [{', '.join(kinds)}]" if kinds else "")})
    return out


def run_tritondbg_all(paths: list[Path]) -> dict[str, list[dict]]:
    p = subprocess.run([sys.executable, __file__, "--tritondbg", *map(str, paths)], capture_output=True, text=True,
                       env=_env(), timeout=3600)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {str(x): [{"case": "*", "dtype": "*", "status": "crash", "message": tail[:110]}] for x in paths}


def summary(rows: list[dict]) -> str:
    """'all 6 pass' or the failing runs, grouped by message (with their dtypes)."""
    if rows and rows[0]["case"] == "*":
        return f"{rows[0]['status']}: {rows[0]['message']}"
    bad = [r for r in rows if r["status"] != "pass"]
    if not bad:
        return f"all {len(rows)} pass"
    groups: dict[str, list[str]] = {}
    for r in bad:
        key = f"{r['status']}: {r['message']}" if r["status"] == "error" else r["status"]
        groups.setdefault(key, [])
        if r["dtype"] not in groups[key]:
            groups[key].append(r["dtype"])
    parts = [f"{'/'.join(dts)} {key}" for key, dts in groups.items()]
    return f"{len(rows) - len(bad)}/{len(rows)} pass; " + "; ".join(parts)


def table() -> str:
    paths = files()
    plain_rows, stand_in = run_plain_all(paths), run_plain_all(paths, "--plain-standin")
    ours = run_tritondbg_all(paths)
    lines = ["| kernel | plain `TRITON_INTERPRET=1` | plain + the CPU stand-in only | "
             "`tritondbg interpret --case all` |", "|---|---|---|---|"]
    for path in paths:
        cells = [summary(rows[str(path)]).replace("|", "/") for rows in (plain_rows, stand_in, ours)]
        lines.append(f"| {path.stem} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--plain"]:
        print(json.dumps({path: plain(path) for path in argv[1:]}))
        return 0
    if argv[:1] == ["--plain-standin"]:   # the bare interpreter, with only tritondbg/standin.py installed
        from tritondbg import standin

        standin.install("sm_90")
        print(json.dumps({path: plain(path) for path in argv[1:]}))
        return 0
    if argv[:1] == ["--tritondbg"]:
        print(json.dumps({path: tritondbg_rows(path) for path in argv[1:]}))
        return 0
    text = table()
    print(text)
    if "--write" in argv:
        readme = HERE / "README.md"
        old = readme.read_text()
        start, end = old.index(BEGIN) + len(BEGIN), old.index(END)
        readme.write_text(old[:start] + "\n" + text + "\n" + old[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
