"""The roofline picture: each profiled case at (FLOP per byte, achieved TFLOP/s), log-log, under the GPU's
bandwidth slope and compute roofs. Drawn with Pillow (a TensorBoard dependency, so no new package; the
CLI imports it only here, when a profile run ends).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tritondbg.record import RunRecord

W, H = 1000, 640
LEFT, RIGHT, TOP, BOTTOM = 90, 260, 60, 70
_COLORS = {"float32": (31, 119, 180), "float16": (44, 160, 44), "bfloat16": (214, 39, 40),
           "float8_e4m3fn": (148, 103, 189)}
_OTHER = (127, 127, 127)
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "fp8"}


def points(record: RunRecord) -> list[dict[str, Any]]:
    """Cases with both FLOPs and bytes and a time: the kernel's point and, when timed, torch's."""
    pts = []
    for r in record.results:
        prof = r.extra.get("profile", {})
        med = (prof.get("kernel") or {}).get("median_ms")
        if not (r.flops and r.bytes and med):
            continue
        label = f"{r.kernel}:{r.case}:{_SHORT.get(r.dtype, r.dtype)}"
        pts.append({"label": label, "x": r.flops / r.bytes, "y": r.flops / (med * 1e-3) / 1e12, "dtype": r.dtype,
                    "torch": False})
        tms = (prof.get("torch") or {}).get("median_ms")
        if tms:
            pts.append({"label": label, "x": r.flops / r.bytes, "y": r.flops / (tms * 1e-3) / 1e12,
                        "dtype": r.dtype, "torch": True})
    return pts


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType
    except TypeError:
        return ImageFont.load_default()


def _text(g, xy, text: str, *, fill, font, anchor: str | None = None) -> None:
    """Draw text; old Pillow with its bitmap font refuses ``anchor``: then left-top aligned."""
    try:
        g.text(xy, text, fill=fill, font=font, anchor=anchor)
    except ValueError:
        g.text(xy, text, fill=fill, font=font)


def _decades(lo: float, hi: float) -> tuple[int, int]:
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def _tick(e: int) -> str:
    return f"{10.0 ** e:g}" if -3 <= e <= 4 else f"1e{e}"


def draw(record: RunRecord, path: Path, peaks: dict[str, Any] | None, note: str = "") -> Path | None:
    """Write the roofline PNG to ``path``; None when no case has FLOPs, bytes and a time."""
    from PIL import Image, ImageDraw

    pts = points(record)
    if not pts:
        return None
    figures = (peaks or {}).get("figures") or {}
    bw = figures.get("bandwidth")
    dtypes = sorted({p["dtype"] for p in pts})
    roofs = {dt: figures[dt] / 1e12 for dt in dtypes if figures.get(dt)} if bw else {}
    xs = [p["x"] for p in pts] + [figures[dt] / bw for dt in dtypes if bw and figures.get(dt)]
    ys = [p["y"] for p in pts] + list(roofs.values())
    x0, x1 = _decades(min(xs) / 2, max(xs) * 4)
    y0, y1 = _decades(min(ys) / 2, max(ys) * 2)
    if bw:
        y0 = min(y0, math.floor(math.log10(bw * 10.0 ** x0 / 1e12)))

    img = Image.new("RGB", (W, H), "white")
    g = ImageDraw.Draw(img)
    font, small, big = _font(14), _font(12), _font(18)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return TOP + ph - (math.log10(max(y, 1e-300)) - y0) / (y1 - y0) * ph

    for e in range(x0, x1 + 1):
        g.line([(px(10.0 ** e), TOP), (px(10.0 ** e), TOP + ph)], fill=(225, 225, 225))
        _text(g, (px(10.0 ** e), TOP + ph + 6), _tick(e), fill="black", font=small, anchor="mt")
    for e in range(y0, y1 + 1):
        g.line([(LEFT, py(10.0 ** e)), (LEFT + pw, py(10.0 ** e))], fill=(225, 225, 225))
        _text(g, (LEFT - 6, py(10.0 ** e)), _tick(e), fill="black", font=small, anchor="rm")
    g.rectangle([LEFT, TOP, LEFT + pw, TOP + ph], outline="black")
    _text(g, (LEFT + pw / 2, H - 22), "arithmetic intensity (FLOP per byte of DRAM traffic)", fill="black",
          font=font, anchor="mm")
    label = Image.new("RGB", (200, 24), "white")
    _text(ImageDraw.Draw(label), (100, 12), "achieved TFLOP/s", fill="black", font=font, anchor="mm")
    img.paste(label.rotate(90, expand=True), (8, int(TOP + ph / 2 - 100)))

    title = "roofline"
    if peaks:
        title += f": {peaks['device']}, peaks {peaks['source']}"
    g.text((LEFT, 14), title, fill="black", font=big)
    if note:
        g.text((LEFT, 38), note, fill=(200, 0, 0), font=font)

    legend_y = TOP
    lx = LEFT + pw + 16
    for dt, peak in roofs.items():
        color = _COLORS.get(dt, _OTHER)
        ridge = peak * 1e12 / bw
        xa, xb = 10.0 ** x0, 10.0 ** x1
        line = [(px(xa), py(bw * xa / 1e12))]
        if xa < ridge < xb:
            line.append((px(ridge), py(peak)))
        line.append((px(xb), py(min(peak, bw * xb / 1e12))))
        g.line(line, fill=color, width=2)
        g.text((lx, legend_y), f"{_SHORT.get(dt, dt)} roof {peak:.0f} TFLOP/s", fill=color, font=small)
        legend_y += 18
    if bw:
        g.text((lx, legend_y), f"DRAM {bw / 1e12:.2f} TB/s", fill="black", font=small)
        legend_y += 26

    for p in pts:
        color = _COLORS.get(p["dtype"], _OTHER)
        cx, cy, r = px(p["x"]), py(p["y"]), 6
        if p["torch"]:
            g.ellipse([cx - r, cy - r, cx + r, cy + r], outline=color, width=2)
        else:
            g.ellipse([cx - r, cy - r, cx + r, cy + r], fill=color)
            g.text((cx + 9, cy - 8), p["label"], fill=color, font=small)
    g.ellipse([lx, legend_y + 2, lx + 10, legend_y + 12], fill=_OTHER)
    g.text((lx + 16, legend_y), "Triton kernel", fill="black", font=small)
    g.ellipse([lx, legend_y + 22, lx + 10, legend_y + 32], outline=_OTHER, width=2)
    g.text((lx + 16, legend_y + 20), "torch, same work", fill="black", font=small)
    path = Path(path)
    img.save(path, format="PNG")
    return path
