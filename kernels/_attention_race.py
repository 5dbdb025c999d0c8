"""Which kernel runs an ``attention`` (prefill) call on Hopper: the tl kernel (kernels/attention.py) or the
warp-specialised Gluon kernel (kernels/_attention_gluon.py), decided by a race on a call signature's first call
(kernels/_race.py: each candidate checked against the tl output, timed on the GPU against the tl path's cached
launcher, the winner kept for the signature's later calls).

Why a race: on the H200 (session 13, ``python tests/bench/gluon_attention.py``, tests/bench/runs/s13_*) the Gluon
kernel took D = 128 from 1.42-1.57x SDPA flash to 1.64-1.78x (B4 H32 N4096 causal 1215 -> 1032 us; N1000 non-causal
160 -> 134 us, persistent), tied the tl kernel at D = 64 (session 14, with the S wgmma one m64n128
instruction: 1206 vs 1213-1224 us at B4 H32 N4096), and lost on the short causal shapes the tl kernel's
64x64 tiles serve (B8 H16 N1000 causal 101 vs 110 us; B2 H32/8 N3001 D64 causal 195 vs 211). Persistent
programs won the non-causal shapes and lost the causal ones to a static round-robin over tiles of unequal length
(N2047 causal 363 against 304 us with one program per tile; session 15 gave persistent programs the next
untaken tile instead), so both launch shapes race.

Eligible (``eligible``): Gluon's Hopper API imports, ``TRITONDBG_GLUON_ATTENTION`` not 0, an sm_90 GPU, no CUDA
graph capture under way, contiguous 16-bit (B, H, N, D) q, k, v with D 64 or 128 and a positive scale, the Gluon
kernel's launch path unpatched (``tritondbg ir`` captures the tl kernel), no tl config pinned by a tool
(``tritondbg run --config``). The tl contender is the signature's cached launcher, or (where a tool patched the
autotuner, so none was cached) the full call, timed on the GPU alike.
"""
from __future__ import annotations

import os

import torch

from . import _launch, _race
from ._attention_common import LOG2E
from ._attention_decode import _num_sms  # cached per device

try:
    from . import _attention_gluon as GA
except ImportError:  # Triton without Gluon's Hopper API: the tl kernel only
    GA = None
except AssertionError:  # Gluon imported after TRITON_INTERPRET was turned off (kernels/_gemm_ws.py says why)
    GA = None

# (BLOCK_N, STAGES, persistent)
CANDIDATES = ((128, 2, False), (128, 3, False), (128, 2, True), (128, 3, True))


def config_name(cfg) -> str:
    bn, stages, persistent = cfg
    return f"gluon_attention_kernel: 128x{bn} s{stages}" + (" persistent" if persistent else "")


def tile_dict(cfg) -> dict:
    bn, stages, persistent = cfg
    return {"BLOCK_M": 128, "BLOCK_N": bn, "STAGES": stages, "persistent": persistent}


def enabled() -> bool:
    """``TRITONDBG_GLUON_ATTENTION=0`` turns the race off (the tl kernel only)."""
    return os.environ.get("TRITONDBG_GLUON_ATTENTION", "1").strip().lower() not in ("0", "false", "no", "off")


def eligible(q, k, v, sm_scale) -> bool:
    if GA is None or not enabled() or not q.is_cuda or torch.cuda.is_current_stream_capturing():
        return False
    return GA.supported(q, k, v, sm_scale) and _launch.pristine(GA.gluon_attention_kernel)


class GluonPlan:
    """The Gluon kernel bound to one call signature, with ``_PrefillPlan``'s interface: ``launch(q, k, v, o)``
    over descriptors rebased on the call's tensors (the templates hold no tensor)."""
    __slots__ = ("kernel", "launcher", "templates", "report")

    def launch(self, q, k, v, o) -> None:
        _launch.SERVED["gluon_attention_kernel"] = self.report  # what tritondbg run / check report as what ran
        self.launcher.with_templates((), self.templates, (q, k, v), (o,))  # the launcher adds the stream's counters


def build(cfg, q, k, v, o, causal: bool, sm_scale: float, num_sms: int) -> GluonPlan:
    """Compile ``cfg`` for these tensors, launch it once into ``o`` and return its plan."""
    bn, stages, persistent = cfg
    B, H, N_Q, _ = q.shape
    descs = GA.make_descriptors(q, k, v, bn)
    programs = num_sms if persistent else B * H * N_Q  # > the tile count: one program per tile
    compiled, grid, tail = GA.launch(descs, o, B, H, k.shape[1], N_Q, k.shape[2], sm_scale * LOG2E,
                                     causal, stages, programs)
    plan = GluonPlan()
    plan.kernel = GA.gluon_attention_kernel
    plan.launcher = _launch.Launcher(compiled, grid, tail, GA.gluon_attention_kernel, GA.sched_scratch(o.device))
    plan.templates = tuple(_launch.descriptor_template(d) for d in descs)
    plan.report = tile_dict(cfg)
    return plan


def agrees(out, ref) -> bool:
    """Within the bundled attention tolerance of the tl output (each has ~bf16 rounding of P): |d| <= 3e-2 + 3e-2 |ref|."""
    r = ref.float()
    return bool(((out.float() - r).abs() <= 3e-2 + 3e-2 * r.abs()).all())


def race(sig, q, k, v, o, causal: bool, sm_scale: float, plans: dict, steady, timer=None) -> None:
    """After the tl path computed ``o`` for the first call of ``sig``: race the Gluon candidates against ``steady``
    (the tl path's steady-state call); a winner goes into ``plans[sig]`` and recomputes ``o``."""
    num_sms = _num_sms(q.device)
    B, H, N_Q, D = q.shape
    key = {"op": "attention", "B": B, "H": H, "H_KV": k.shape[1], "N_Q": N_Q, "N_KV": k.shape[2], "D": D,
           "causal": bool(causal), "dtype": str(q.dtype).replace("torch.", "")}
    builds = {config_name(c): (lambda out, c=c: build(c, q, k, v, out, causal, sm_scale, num_sms)) for c in CANDIDATES}
    _race.run(sig, key, o, steady, builds,
              lambda plan, out: plan.launch(q, k, v, out), plans, kernel="gluon_attention_kernel",
              tiles={config_name(c): tile_dict(c) for c in CANDIDATES}, timer=timer, agree=agrees)
