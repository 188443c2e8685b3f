"""The charts of a history page (site/history.py): each profile's median duration of a kernel
with its interval bar, or each run's figure (a serving benchmark's), in order of collection,
changes coloured and each point linking to its record. Drawn straight to SVG with charts/bars.py's
axes and look, as the bar charts are: a series' page has one per kernel, made again whenever a
profile joins the series, and a layout engine would cost more than the rest of the page."""

from __future__ import annotations

import math
from typing import Any
from xml.etree import ElementTree as ET

from ikreport.charts.bars import XLINK_HREF, LABEL_PX, MONO, PAD, SANS, TITLE_PX, _line, _n, _text, _xml_text, tick_step

CHANGES = {"no change": "#4c78a8", "FASTER": "#54a24b", "SLOWER": "#e45756"}  # Vega's palette: blue, green, red
STEP = 28  # pixels a profile takes along the axis
HEIGHT = 220
AXIS_W = 60  # room for the value labels left of the plot
TICKS = HEIGHT // 40


def draw_history(rows: list[dict[str, Any]]) -> str:
    """The SVG of a kernel's history: rows of {label, median_us, low_us, high_us, change, href,
    description}, in order of collection."""
    return _draw(rows, ("median_us", "low_us", "high_us"), "median duration (µs), 95% interval",
                 "profile, in order of collection")


def draw_run_history(rows: list[dict[str, Any]]) -> str:
    """The SVG of a figure's history over runs (a serving benchmark's median time to first
    token): rows of {label, value, change, href, description, axis}, in order of collection,
    a point each, no interval bar; the value axis is titled by the first row's ``axis``. Rows
    without a ``change`` (a figure no change is called for) draw no legend of changes."""
    return _draw(rows, ("value", "", ""), rows[0]["axis"], "run, in order of collection")


def _draw(rows: list[dict[str, Any]], fields: tuple[str, str, str], y_title: str, x_title: str) -> str:
    """Points in order along the axis, with an interval bar where ``fields`` names its ends."""
    mid_f, low_f, high_f = fields
    lo, hi, ticks = _scale([r[f] for r in rows for f in (low_f, high_f, mid_f) if f])

    def y(value: float) -> float:
        return HEIGHT - (value - lo) / (hi - lo) * HEIGHT

    plot_w = STEP * len(rows)
    legend_x = AXIS_W + plot_w + 18
    width = legend_x + math.ceil(len("change from the one before") * TITLE_PX * 0.68) + PAD
    total_h = PAD + HEIGHT + 48
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": str(width), "height": str(total_h),
                             "viewBox": f"0 0 {width} {total_h}", "class": "history"})
    ET.SubElement(svg, "rect", {"width": str(width), "height": str(total_h), "fill": "white"})
    plot = ET.SubElement(svg, "g", {"transform": f"translate({AXIS_W},{PAD})"})
    digits = max(0, math.ceil(-math.log10(ticks[1] - ticks[0]) - 1e-9)) if len(ticks) > 1 else 0
    for value in ticks:
        _line(plot, 0, y(value), plot_w, y(value), "#ddd")
        _line(plot, -5, y(value), 0, y(value))
        _text(plot, f"{value:,.{digits}f}", -7, y(value) + 3.5, "end", LABEL_PX, SANS)
    _line(plot, 0, 0, 0, HEIGHT)
    _line(plot, 0, HEIGHT, plot_w, HEIGHT)
    title = _text(plot, y_title, -AXIS_W + 12, HEIGHT / 2, "middle", TITLE_PX, SANS)
    title.set("transform", f"rotate(-90 {_n(-AXIS_W + 12)} {_n(HEIGHT / 2)})")
    title.set("font-weight", "bold")
    for i, row in enumerate(rows):
        x = STEP * i + STEP / 2
        _text(plot, row["label"], x, HEIGHT + 15, "middle", LABEL_PX, MONO)
        point = ET.SubElement(plot, "a", {XLINK_HREF: row["href"], "aria-label": _xml_text(row["description"])})
        ET.SubElement(point, "title").text = _xml_text(row["description"])
        if low_f:
            ET.SubElement(point, "line", {"x1": _n(x), "x2": _n(x), "y1": _n(y(row[low_f])), "y2": _n(y(row[high_f])),
                                          "stroke": "#888", "stroke-width": "2"})
        ET.SubElement(point, "circle", {"cx": _n(x), "cy": _n(y(row[mid_f])), "r": "4.4",
                                        "fill": CHANGES.get(row.get("change", ""), CHANGES["no change"])})
    label = _text(plot, x_title, plot_w / 2, HEIGHT + 32, "middle", TITLE_PX, SANS)
    label.set("font-weight", "bold")
    if not any("change" in row for row in rows):
        return ET.tostring(svg, encoding="unicode")  # a figure no change is called for: no legend of changes
    legend = ET.SubElement(svg, "g", {"transform": f"translate({legend_x},{PAD})"})
    _text(legend, "change from the one before", 0, 9, "start", TITLE_PX, SANS).set("font-weight", "bold")
    for n, (change, colour) in enumerate(CHANGES.items()):
        ET.SubElement(legend, "circle", {"cx": "6", "cy": str(22 + 13 * n), "r": "4.4", "fill": colour})
        _text(legend, change, 16, 25.5 + 13 * n, "start", LABEL_PX, MONO)
    return ET.tostring(svg, encoding="unicode")


def _scale(values: list[float]) -> tuple[float, float, list[float]]:
    """The value axis: round numbers at or past the smallest and largest value (not from zero:
    a change of a few percent must show)."""
    low, high = min(values), max(values)
    if high <= low:
        low, high = low * 0.9 if low > 0 else low - 1, high * 1.1 if high > 0 else high + 1
    step = tick_step(low, high, TICKS)
    lo, hi = math.floor(low / step) * step, math.ceil(high / step) * step
    step = tick_step(lo, hi, TICKS)
    lo, hi = math.floor(low / step) * step, math.ceil(high / step) * step
    count = int(round((hi - lo) / step))
    return lo, hi, [lo + i * step for i in range(count + 1)]


CHARTS = {"history": draw_history, "run-history": draw_run_history}
