"""The resources gate's compiles, in one process per scenario: every autotune config of every kernel each chosen
case x dtype launches, compiled for the target (a config the kernel's pruning removes for the case is listed, not
compiled), printed as one JSON object of `tritondbg ir --stats --json --all-configs` rows. One import of torch and
Triton serves every case (one `tritondbg ir` process per case cost ~3 s of CPU each, before any compile); a warm
request index answers every case without importing torch, and a case x dtype whose compile another one already made
(the same specialization) is a hit in Triton's cache.

    python -m tritondbg.check.compiles TARGET --case NAME:DTYPE ... [--extra NAME:DTYPE ...] [--want KERNEL ...]
                                              [--arch ARCH] [--log-dir DIR]

``--extra`` cases are tried one case at a time (every dtype given for it), in order, while a ``--want`` kernel was
not compiled yet (a wrapper with several code paths launches different kernels for different cases). Output:
``{"rows": [...], "compiled": [[name, dtype], ...], "no_launch": [[name, dtype] of those, that launched no
kernel], "seconds": {case: wall s}, "error": null | "one line"}``; exit 0, or 1 with ``error`` set (the first case x
dtype that failed; none after it is compiled). ``--log-dir`` (``check --out DIR``): where a failed compile's full
log is written (default: the temporary folder), the path the error names.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def _rows(items) -> list[dict]:
    from tritondbg.ir.stats import row

    return [row(item, mix=False) for item in items]  # the gate reads registers, spills and shared memory only


def compile_cases(target: str, cases: list[tuple[str, str]], extra: list[tuple[str, str]], want: set[str],
                  arch: str | None) -> dict:
    """Rows of every (case, dtype) in ``cases``, then of ``extra`` cases while a kernel in ``want`` is missing."""
    from tritondbg import runner
    from tritondbg.errors import UsageError
    from tritondbg.ir.capture import CaptureError, NothingLaunched
    from tritondbg.ir.request import Request, resolve
    from tritondbg.ir.stages import StageError
    from tritondbg.ir.targets import resolve_arch
    from tritondbg.program.replay import recorded_arch

    # before any lookup: the index compares the TRITON_* environment a capture would run under
    runner.set_mode("compiled")
    the_arch, arch_source = resolve_arch(arch, recorded_arch(target))
    out: dict = {"rows": [], "compiled": [], "no_launch": [], "seconds": {}, "error": None}
    todo, extra = list(cases), list(extra)
    several = {n for n, _ in cases + extra if sum(1 for m, _ in cases + extra if m == n) > 1}
    while todo:
        name, dtype = todo.pop(0)
        t0 = time.perf_counter()
        req = Request(target, the_arch, arch_source, case=name, dtype=dtype, all_configs=True, compile_pruned=False)
        try:
            items, _ = resolve(req)
            out["rows"].extend(_rows(items))
        except NothingLaunched:  # nothing to compile (an early return on an empty input): told, not an error
            out["no_launch"].append([name, dtype])
        except Exception as exc:  # noqa: BLE001 - one line for the gate, naming the case (and its dtype)
            text = str(exc).strip().splitlines() if isinstance(exc, (CaptureError, StageError, UsageError)) \
                else [f"{type(exc).__name__}: {exc}"]
            which = f"{name} ({dtype})" if name in several else name
            out["error"] = f"could not compile case {which}: {text[-1] if text else type(exc).__name__}"
            return out
        out["compiled"].append([name, dtype])
        # where a cold gate's time goes, per case (its dtypes together)
        out["seconds"][name] = round(out["seconds"].get(name, 0.0) + time.perf_counter() - t0, 2)
        if not todo and extra and want - {r.get("kernel") for r in out["rows"]}:
            # a kernel no case so far launched: try the next case, every dtype of it
            while extra and (not todo or extra[0][0] == todo[0][0]):
                todo.append(extra.pop(0))
    return out


def _pair(text: str) -> tuple[str, str]:
    name, _, dtype = text.rpartition(":")
    if not name:
        raise argparse.ArgumentTypeError(f"expected NAME:DTYPE, got {text!r}")
    return name, dtype


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tritondbg.check.compiles")
    p.add_argument("target")
    p.add_argument("--case", dest="cases", action="append", type=_pair, default=[])
    p.add_argument("--extra", action="append", type=_pair, default=[])
    p.add_argument("--want", action="append", default=[])
    p.add_argument("--arch", default=None)
    p.add_argument("--log-dir", default=None)
    a = p.parse_args(argv)
    from tritondbg.ir.capture import logs_in

    with logs_in(a.log_dir):
        out = compile_cases(a.target, a.cases, a.extra, set(a.want), a.arch)
    print(json.dumps(out, default=str))
    return 1 if out["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
