"""Screenshot of report.html in headless Chromium, offline: `python tests/browser/report_screenshot.py OUT.png
[RUN_DIR]`. With RUN_DIR, that run folder's report.html; without, a report rendered from a synthetic GPU run
(tests/profile_synthetic.py). Every request to the network is refused (--host-resolver-rules), so what the
PNG shows is what the file draws on a machine without internet. Look at the PNG."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--no-proxy-server=false")


def chromium() -> str | None:
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


def run_chromium(*args: str, width: int = 1400, height: int = 2600, timeout: int = 120) -> subprocess.CompletedProcess:
    # --no-sandbox: CI runs as root; --virtual-time-budget: let the page finish before the capture
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           f"--window-size={width},{height}", "--virtual-time-budget=5000", *OFFLINE, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def synthetic_report(folder: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from profile_synthetic import synthetic_record

    from tritondbg.profile import report

    return report.write(synthetic_record(str(folder)), folder)


def screenshot(report_html: Path, png: Path, **size) -> subprocess.CompletedProcess:
    png.parent.mkdir(parents=True, exist_ok=True)
    return run_chromium(f"--screenshot={png}", report_html.resolve().as_uri(), **size)


def main(argv: list[str]) -> int:
    if not argv or chromium() is None:
        print("usage: report_screenshot.py OUT.png [RUN_DIR]  (needs chromium: apt-get install chromium)",
              file=sys.stderr)
        return 2
    out = Path(argv[0])
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(argv[1]) / "report.html" if len(argv) > 1 else synthetic_report(Path(tmp))
        p = screenshot(html, out)
    if not out.is_file():
        print(p.stderr[-2000:], file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
