"""Subprocess helper for the IR tests: compiled mode needs its own process (the test session runs the
interpreter), and one process compiling everything avoids paying the torch import (~5 s) per request.

    python tests/ir_helper.py compile-all OUT.json
        every bundled scenario, with the fewest tiny cases that launch all its kernels, for sm_90, sm_80 and
        gfx942 (plus gemm square_4096 on sm_90/sm_80); per item: the IRItem, its stage files, its stats and the
        ptxas log Triton printed while compiling (run with TRITON_DUMP_PTXAS_LOG=1 for an independent count).
    python tests/ir_helper.py record-autotune ARCH CASE DTYPE OUT.json
        write Triton's own autotune record ({fn}.autotune.json) for gemm CASE/DTYPE on ARCH, through the
        autotuner's check_disk_cache with made-up timings that make the LAST pruned config the winner.
"""
import contextlib
import io
import json
import sys

from tritondbg import loader, runner
from tritondbg.configs import kernel_name

ARCHS = ("sm_90", "sm_80", "gfx942")
EXTRA = {"sm_90": [("gemm", "square_4096")], "sm_80": [("gemm", "square_4096")]}


def resolve_logged(name, arch, case, logs):
    """resolve() with what Triton printed (ptxas logs) kept per (scenario, case, arch); errors as strings."""
    from tritondbg.ir.capture import CaptureError
    from tritondbg.ir.request import Request, resolve

    log = io.StringIO()
    try:
        with contextlib.redirect_stderr(log):
            items, _ = resolve(Request(name, arch, "--arch", case=case))
    except CaptureError as exc:
        items = str(exc)
    logs[(name, case, arch.name)] = logs.get((name, case, arch.name), "") + log.getvalue()
    return items


def covering_cases(scenario, logs):
    """Tiny cases, in order, until every kernel of the scenario has been launched by one of them."""
    from tritondbg.ir.targets import parse_arch

    wanted = {kernel_name(k) for k in scenario.kernels}
    chosen, seen = [], set()
    for case in scenario.cases:
        if not case.interpret or seen >= wanted:
            continue
        items = resolve_logged(scenario.name, parse_arch(ARCHS[0]), case.name, logs)
        new = {i.kernel for i in items} - seen
        if new:
            chosen.append(case.name)
            seen |= new
    return chosen, sorted(wanted - seen)


def compile_all(out_path):
    from tritondbg.ir.stages import stage_text
    from tritondbg.ir.stats import compute
    from tritondbg.ir.targets import parse_arch

    runner.set_mode("compiled")
    plan, missing, logs, errors = [], {}, {}, []
    for name in loader.bundled_names():
        cases, left = covering_cases(loader.load(name), logs)
        missing[name] = left
        plan += [(name, c) for c in cases]
    results = []
    for arch_name in ARCHS:
        arch = parse_arch(arch_name)
        for name, case in plan + EXTRA.get(arch_name, []):
            items = resolve_logged(name, arch, case, logs)
            if isinstance(items, str):
                errors.append({"scenario": name, "case": case, "arch": arch_name, "error": items})
                continue
            for item in items:
                stages = {}
                for stage in arch.stages():
                    _, path = stage_text(item, stage)
                    stages[stage] = path
                results.append({"item": item.to_dict(), "stages": stages, "stats": compute(item),
                                "ptxas_log": logs[(name, case, arch_name)]})
    with open(out_path, "w") as f:
        json.dump({"results": results, "errors": errors, "plan": plan, "uncovered": missing}, f, indent=1,
                  default=str)


def record_autotune(arch_name, case_name, dtype, out_path):
    """Make Triton write a real autotune record for gemm on this target, naming the last pruned config."""
    import torch

    from tritondbg.configs import config_dict
    from tritondbg.ir.capture import StubDriver
    from tritondbg.ir.decision import autotune_json, tuning_key
    from tritondbg.ir.index import triton_cache_dir
    from tritondbg.ir.targets import parse_arch
    from triton.runtime.driver import driver

    runner.set_mode("compiled")
    scenario = loader.load("gemm")
    case = scenario.case(case_name)
    tuner = scenario.kernels[0]
    inputs = scenario.make_inputs(case, getattr(torch, dtype), "cpu", torch.Generator().manual_seed(0))
    a, b = inputs["a"], inputs["b"]
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype)
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    kwargs = {"ACTIVATION": None}
    tuner.nargs = dict(zip(tuner.arg_names, args))
    pruned = tuner.prune_configs(kwargs)
    winner = pruned[-1]
    key = tuning_key(tuner, args, kwargs)

    def bench():
        tuner.configs_timings = {cfg: [2.0 if cfg is not winner else 1.0] * 3 for cfg in pruned}
        tuner.cache[key] = winner

    saved = driver._active
    driver.set_active(StubDriver(parse_arch(arch_name)))
    try:
        tuner.check_disk_cache(key, pruned, bench)
        _, path = autotune_json(tuner, args, kwargs, pruned, triton_cache_dir(), "gemm_kernel")
    finally:
        driver._active = saved
    with open(out_path, "w") as f:
        json.dump({"winner": config_dict(winner), "pruned": len(pruned), "path": path}, f)


if __name__ == "__main__":
    if sys.argv[1] == "compile-all":
        compile_all(sys.argv[2])
    elif sys.argv[1] == "record-autotune":
        record_autotune(*sys.argv[2:6])
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
