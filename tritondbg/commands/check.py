"""`tritondbg check`: quality gates with an exit status for CI."""
from __future__ import annotations

import sys

import click


def run_check(targets: tuple[str, ...], *, all_: bool = False, gates: str | None = None, device: str | None = None,
              junit: str | None = None, json_path: str | None = None, workers: int | None = None,
              arch: str | None = None, baseline: str = "tritondbg-baseline.json", update_baseline: bool = False) -> int:
    """Run the gates; 0 when every selected gate passes (or is skipped with a reason), 1 when one fails."""
    from tritondbg.check import session
    from tritondbg.errors import UsageError

    chosen = session.resolve_gates(gates)
    names = session.resolve_targets(targets, all_)
    if device is None:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError("--device cuda needs a CUDA GPU and none is visible")
    record = session.check(names, chosen, device=device, workers=workers, junit=junit, arch=arch,
                           baseline=baseline, update_baseline=update_baseline)
    if json_path:
        record.save(json_path)
    from tritondbg.render.gates import print_gates

    print_gates(record)
    return 1 if session.failed(record) else 0


@click.command("check")
@click.argument("targets", nargs=-1, metavar="[KERNEL ... | path/to/cases.py[::name]]")
@click.option("--all", "all_", is_flag=True, help="Every bundled kernel.")
@click.option("--gates", metavar="LIST", help="Comma-separated: correctness, all-configs, sanitize, resources, "
              "perf, agreement, determinism (default: all; GPU-only gates skip on a CPU).")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default=None,
              help="cpu: interpreter; cuda: compiled on the GPU (default: cuda when available).")
@click.option("--junit", metavar="FILE", help="Write JUnit XML here.")
@click.option("--json", "json_path", metavar="FILE", help="Write the run record (JSON) here.")
@click.option("-n", "--workers", type=int, default=None, help="Worker processes (default: 2 on a CPU, one per GPU).")
@click.option("--arch", default=None, help="Target of the resources gate (default: local GPU, else sm_90).")
@click.option("--baseline", default="tritondbg-baseline.json", show_default=True, help="Perf baseline file.")
@click.option("--update-baseline", is_flag=True, help="Rewrite the perf baseline with this run's times.")
def check_cmd(targets, all_, gates, device, junit, json_path, workers, arch, baseline, update_baseline):
    """Quality gates for CI: exit 0 when every selected gate passes, 1 when one fails, 2 on bad usage."""
    sys.exit(run_check(targets, all_=all_, gates=gates, device=device, junit=junit, json_path=json_path,
                       workers=workers, arch=arch, baseline=baseline, update_baseline=update_baseline))
