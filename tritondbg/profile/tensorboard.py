"""TensorBoard summaries of a profile run, written into its run folder (an exporter of the run record):

- HParams: one trial (session) per autotune config of each kernel x case x dtype, under
  ``hparams/<worker>/<kernel>-<n>``: its meta-parameters, winner/status, and p50/p20/p80 in us. Under the
  interpreter only the config that ran is a trial, with the launch's interpreter time. Kernels without
  autotuning give one trial per case.
- Scalars ``best_time_us/<scenario>/<case>/<dtype>`` (the median kernel time), ``tflops/...``, ``gbps/...``,
  ``speedup_vs_torch/...``; the summary table as text; the roofline as an image.

torch's ``SummaryWriter.add_hparams`` writes an experiment summary with every trial, and TensorBoard's
HParams plugin takes its columns from the first experiment summary it finds (tensorboard 2.21
backend_context.py), so with several profile runs, or kernels with different meta-parameters, columns
would go missing. Each trial here writes only its session start/end (the protos from
``torch.utils.tensorboard.summary.hparams``) and its metric scalars; with no experiment summary anywhere the
plugin builds the columns from the union of all sessions, across every run under the logdir.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tritondbg.profile.session import worker_name
from tritondbg.record import RunRecord

METRICS = ("time/p50_us", "time/p20_us", "time/p80_us")


def _us(ms):
    return None if ms is None else ms * 1e3


def trials(record: RunRecord) -> list[tuple[str, dict[str, Any], dict[str, float]]]:
    """(run name, hparams, metrics) for every trial of the run."""
    out = []
    for r in record.results:
        prof = r.extra.get("profile", {})
        worker = worker_name(r.kernel, r.case, r.dtype)
        base = {"scenario": r.kernel, "case": r.case, "dtype": r.dtype, "timing": prof.get("timing", "?")}
        k = prof.get("kernel") or {}
        launch = {m: v for m, v in zip(METRICS, (_us(k.get("median_ms")), _us(k.get("p20_ms")),
                                                 _us(k.get("p80_ms")))) if v is not None}
        decisions = prof.get("autotune") or []
        if not decisions:
            out.append((f"hparams/{worker}/launch", {**base, "kernel": "-", "winner": "yes", "status": "launch",
                                                     "source": "no autotune"}, launch))
            continue
        for d in decisions:
            for i, e in enumerate(d["configs"]):
                if e["status"] == "not run":
                    continue
                hp = {**e["config"], **base, "kernel": d["kernel"], "winner": "yes" if e["winner"] else "no",
                      "status": e["status"], "source": d["source"]}
                if e["p50_ms"] is not None:
                    metrics = {m: v for m, v in zip(METRICS, (_us(e["p50_ms"]), _us(e["p20_ms"]), _us(e["p80_ms"])))
                               if v is not None}
                else:
                    metrics = launch if e["status"] == "ran" else {}
                out.append((f"hparams/{worker}/{d['kernel']}-{i:02d}", hp, metrics))
    return out


def write(record: RunRecord, run_dir: Path, roofline_png: Path | None = None) -> dict[str, Any]:
    """Write every summary into ``run_dir``; returns what was written (kept in the record)."""
    from torch.utils.tensorboard import SummaryWriter
    from torch.utils.tensorboard.summary import hparams as hparams_summary

    from tritondbg.profile.summary import markdown

    run_dir = Path(run_dir)
    all_trials = trials(record)
    scalars = 0
    with SummaryWriter(log_dir=str(run_dir)) as w:
        for r in record.results:
            prof = r.extra.get("profile", {})
            med = (prof.get("kernel") or {}).get("median_ms")
            m = prof.get("metrics") or {}
            tag = f"{r.kernel}/{r.case}/{r.dtype}"
            for name, value in (("best_time_us", _us(med)), ("tflops", m.get("tflops")), ("gbps", m.get("gbps")),
                                ("speedup_vs_torch", m.get("speedup_vs_torch"))):
                if value is not None:
                    w.add_scalar(f"{name}/{tag}", value, 0)
                    scalars += 1
        w.add_text("summary", markdown(record), 0)
        if roofline_png is not None:
            import numpy as np
            from PIL import Image

            w.add_image("roofline", np.asarray(Image.open(roofline_png).convert("RGB")), 0, dataformats="HWC")
    for run_name, hp, metrics in all_trials:
        _, ssi, sei = hparams_summary(hp, metrics or {METRICS[0]: 0.0})
        with SummaryWriter(log_dir=str(run_dir / run_name)) as tw:
            tw.file_writer.add_summary(ssi)
            tw.file_writer.add_summary(sei)
            for name, value in metrics.items():
                tw.add_scalar(name, value, 0)
    return {"hparams_trials": len(all_trials), "scalars": scalars, "image": roofline_png is not None}
