"""report.html in a real browser, offline: headless Chromium (Debian's `chromium`) with every network request
refused loads the report, its DOM has the tables, and the screenshot is not blank. Skipped without Chromium.
Set TRITONDBG_SCREENSHOTS=DIR to keep the PNG (or run tests/browser/report_screenshot.py)."""
import os
import shutil
from pathlib import Path

import pytest

from report_screenshot import chromium, run_chromium, screenshot, synthetic_report

pytestmark = pytest.mark.skipif(chromium() is None, reason="headless Chromium not installed (apt-get install chromium)")


def test_report_renders_offline_with_its_tables(tmp_path):
    from PIL import Image

    from test_profile_report import parse

    html = synthetic_report(tmp_path)
    dom = run_chromium("--dump-dom", html.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    p = parse(dom.stdout)  # the DOM as the browser built it
    ids = [t["attrs"].get("id") for t in p.tables]
    assert "summary" in ids and "roofline-points" in ids
    decisions = [t for t in p.tables if t["attrs"].get("class") == "autotune"]
    assert len(decisions) == 2 and [r["class"] for r in decisions[0]["rows"]].count("winner") == 1
    assert dom.stdout.count("<svg") == 3

    shot = tmp_path / "report.png"
    run = screenshot(html, shot, width=1400, height=2600)
    assert shot.is_file(), run.stderr[-2000:]
    img = Image.open(shot).convert("RGB")
    assert img.size == (1400, 2600)
    top = img.crop((0, 0, 1400, 1300))  # tables and the roofline: many colours, not a blank page
    colors = top.getcolors(maxcolors=1 << 16)
    assert colors is None or len(colors) > 50
    keep = os.environ.get("TRITONDBG_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, keep)
