"""A real browser on TensorBoard: headless Chromium (Debian's `chromium`) opens the PyTorch Profiler tab on
a profile run and the plugin renders it (run and worker selectors filled). Skipped when Chromium is absent.

The screenshots are kept: set TRITONDBG_SCREENSHOTS=DIR to copy them there and look at them.
Offline, every view of the plugin spins forever: it loads Google Charts and, for Trace, a web-components
script from the internet before it draws anything (torch_tb_profiler/static/index.html; checked 2026-11-30).
This test only checks that the plugin lists the run; report.html (tests/browser/test_report_browser.py) is the
offline view.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_profile_tensorboard import tensorboard_server, wait_for_profiler_run

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install chromium)")


def _chromium(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    # --no-sandbox: CI runs as root; --virtual-time-budget lets the page's scripts run before the capture
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           "--window-size=1600,1000", "--virtual-time-budget=20000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_pytorch_profiler_tab_renders_the_run(tmp_path):
    from PIL import Image

    from tritondbg.profile import pipeline

    out = tmp_path / "traces"
    record = pipeline.profile(["add"], dtype="float32", iters=2, warmup=0, out_dir=str(out))
    run = Path(record.extra["profile"]["run_dir"]).name
    shots = {}
    with tensorboard_server(out) as base:
        wait_for_profiler_run(base, run)
        # the plugin's own page: its DOM names the run and the worker once its scripts have run
        dom = _chromium("--dump-dom", f"{base}/data/plugin/pytorch_profiler/index.html")
        assert run in dom.stdout, dom.stderr[-2000:]
        assert "add-tiny-float32" in dom.stdout
        for tab in ("pytorch_profiler", "hparams"):
            shot = tmp_path / f"tensorboard_{tab}.png"
            p = _chromium(f"--screenshot={shot}", f"{base}/#{tab}")
            assert shot.is_file(), p.stderr[-2000:]
            shots[tab] = shot
    for tab, shot in shots.items():
        img = Image.open(shot).convert("RGB")
        assert img.size == (1600, 1000)
        colors = img.getcolors(maxcolors=1 << 16)
        assert colors is None or len(colors) > 50, f"{tab}: the page looks blank"
    keep = os.environ.get("TRITONDBG_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for shot in shots.values():
            shutil.copy(shot, keep)
