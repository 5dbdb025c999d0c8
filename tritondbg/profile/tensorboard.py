"""TensorBoard summaries of a profile run, written into its run folder (an exporter of the run record):

- HParams: one trial (session) per autotune config of each kernel x case x dtype, under
  ``hparams/<worker>/<kernel>-<n>``: its meta-parameters, winner/status, and p50/p20/p80 in us. Under the
  interpreter only the config that ran is a trial, with the launch's interpreter time. Kernels without
  autotuning give one trial per case.
- Scalars ``best_time_us/<scenario>/<case>/<dtype>`` (the median kernel time), ``tflops/...``, ``gbps/...``,
  ``speedup_vs_torch/...`` (under ``interpreter/`` when the interpreter timed them: a section of its own, so a
  CPU run in the same logdir never shares a card with a GPU run); the summary table and the autotune decisions
  as text; the roofline as an image.

Scalars: each value is written at steps 0..3 (a flat line), not once. Checked in headless Chromium on
TensorBoard 2.21 (two runs sharing a card, "Ignore outliers in chart scaling" on, as by default): with one
point per run the Time Series card draws nothing (the data table under it lists both values); with four it
draws both lines. A single point is no line to draw, and the outlier filter keeps only values between the
5th and 95th percentile of the card's points (webfiles, line chart y extent: with one point per run and three
runs only the middle one is kept); four equal points per run keep every run's value for up to 15 runs a card.

HParams columns: the plugin shows the first 5 columns by default, sorted by (values differ, name) (tensorboard
2.21 backend_context._sort_and_reduce_to_hparams_limit, and the frontend's ``Math.min(5, ...)``). Each run
folder holds one experiment summary (``hparams/`` run) that lists the fixed columns ``case``, ``dtype``,
``scenario``, ``source``, ``winner`` as differing (so they are the five shown), then ``config`` (the whole
config as text), ``kernel``, ``status``, ``timing`` and this run's meta-parameters (one column each, ticked
in the left pane). The plugin reads the first experiment summary it finds under the logdir: with several
runs, the meta-parameter columns of the others may be missing; their ``config`` column is always there.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tritondbg.configs import config_str
from tritondbg.profile.session import worker_name
from tritondbg.record import RunRecord

METRICS = ("time/p50_us", "time/p20_us", "time/p80_us")
FIXED = ("case", "dtype", "scenario", "source", "winner")  # shown by default in HParams (see above)
OTHER = ("config", "kernel", "status", "timing")
STEPS = 4


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
                                                     "source": "no autotune", "config": "-"}, launch))
            continue
        for j, d in enumerate(decisions):
            # one trial per config and autotune key: several keys of a kernel shared run names (one HParams
            # session kept, the others' event files piled into it)
            key = f"-key{j}" if len(decisions) > 1 else ""
            for i, e in enumerate(d["configs"]):
                if e["status"] == "not run":
                    continue
                hp = {**e["config"], **base, "kernel": d["kernel"], "winner": "yes" if e["winner"] else "no",
                      "status": e["status"], "source": d["source"], "config": config_str(e["config"])}
                if e["p50_ms"] is not None:
                    metrics = {m: v for m, v in zip(METRICS, (_us(e["p50_ms"]), _us(e["p20_ms"]), _us(e["p80_ms"])))
                               if v is not None}
                else:
                    metrics = launch if e["status"] == "ran" else {}
                out.append((f"hparams/{worker}/{d['kernel']}{key}-{i:02d}", hp, metrics))
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
            # interpreter timings are CPU seconds of Python: their own section, never one card with a GPU run's
            where = "" if prof.get("timing") == "gpu" else "interpreter/"
            tag = f"{r.kernel}/{r.case}/{r.dtype}"
            for name, value in (("best_time_us", _us(med)), ("tflops", m.get("tflops")), ("gbps", m.get("gbps")),
                                ("speedup_vs_torch", m.get("speedup_vs_torch"))):
                if value is not None:
                    for step in range(STEPS):
                        w.add_scalar(f"{where}{name}/{tag}", value, step)
                    scalars += 1
        w.add_text("summary", markdown(record), 0)
        w.add_text("autotune", autotune_markdown(record), 0)
        if roofline_png is not None:
            import numpy as np
            from PIL import Image

            w.add_image("roofline", np.asarray(Image.open(roofline_png).convert("RGB")), 0, dataformats="HWC")
    if all_trials:
        with SummaryWriter(log_dir=str(run_dir / "hparams")) as ew:
            ew.file_writer.add_summary(experiment(all_trials))
    for run_name, hp, metrics in all_trials:
        _, ssi, sei = hparams_summary(hp, metrics or {METRICS[0]: 0.0})
        with SummaryWriter(log_dir=str(run_dir / run_name)) as tw:
            tw.file_writer.add_summary(ssi)
            tw.file_writer.add_summary(sei)
            for name, value in metrics.items():
                for step in range(STEPS):
                    tw.add_scalar(name, value, step)
    return {"hparams_trials": len(all_trials), "scalars": scalars, "image": roofline_png is not None}


def experiment(all_trials):
    """The experiment summary: the fixed columns first (marked as differing: the plugin shows them by
    default), then the others, then every meta-parameter of this run's trials."""
    # the protos, as torch.utils.tensorboard.summary.hparams builds them (tensorboard's own summary module
    # imports tensorflow)
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.plugins.hparams import api_pb2
    from tensorboard.plugins.hparams.metadata import EXPERIMENT_TAG, PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    names = list(FIXED) + list(OTHER)
    for _, params, _ in all_trials:
        names += [k for k in params if k not in names]
    infos = []
    for name in names:
        values = [params[name] for _, params, _ in all_trials if name in params]
        if values and all(isinstance(v, bool) for v in values):
            kind = api_pb2.DATA_TYPE_BOOL
        elif values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            kind = api_pb2.DATA_TYPE_FLOAT64
        else:
            kind = api_pb2.DATA_TYPE_STRING
        infos.append(api_pb2.HParamInfo(name=name, type=kind, differs=name in FIXED))
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=m), display_name=m) for m in METRICS]
    content = HParamsPluginData(experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics),
                                version=PLUGIN_DATA_VERSION)
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME,
                                                                 content=content.SerializeToString()))
    return Summary(value=[Summary.Value(tag=EXPERIMENT_TAG, metadata=smd)])


def autotune_markdown(record: RunRecord) -> str:
    """Every autotune decision as Markdown (TensorBoard's Text tab): one table per decision."""
    from tritondbg.profile.summary import fmt_time

    parts = []
    for r in record.results:
        for d in r.extra.get("profile", {}).get("autotune", []):
            key = f" key=({', '.join(d['key'])})" if d.get("key") else ""
            parts.append(f"**{r.kernel}:{r.case}:{r.dtype}** `{d['kernel']}`{key}: source **{d['source']}**, "
                         f"winner `{config_str(d.get('winner') or {})}`"
                         + (f" ({d['note']})" if d.get("note") else ""))
            parts.append("\n| config | status | p20 | p50 | p80 | winner |\n|---|---|---|---|---|---|")
            parts.append("\n".join(f"| {config_str(e['config'])} | {e['status']} | {fmt_time(e['p20_ms'])} | "
                                   f"{fmt_time(e['p50_ms'])} | {fmt_time(e['p80_ms'])} | "
                                   f"{'**yes**' if e['winner'] else ''} |" for e in d["configs"]))
            parts.append("")
    return "\n".join(parts) if parts else "no autotuned kernel ran"
