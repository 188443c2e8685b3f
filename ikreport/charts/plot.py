"""Scatter and line charts drawn straight to SVG: what a kind declares as an ``XYChart``
(kinds/base.py), the throughput scatter and the roofline of every profile page.

Why not Vega, as charts/bars.py says for the bar charts: laying out one of these charts in
vl-convert costs more than the rest of its page, and a quarter of a real archive's profile
pages have one. They need no layout engine: linear or logarithmic axes from round
numbers, points, lines, a legend. The look is charts/bars.py's (Vega's palette and axes); the
XML is written by ElementTree, which escapes.
"""

from __future__ import annotations

import math
from typing import Any
from xml.etree import ElementTree as ET

from ikreport.kinds.base import XYChart
from ikreport.charts.bars import XLINK_HREF, LABEL_PX, MONO, MONO_EM, PAD, PALETTE, SANS, TITLE_PX, _line, _n, _text, _xml_text, tick_step

DASHES = ("", "6 3", "2 2", "8 3 2 3")  # a line series' look, in order of the series
POINT_R = 4.4
LEFT = 56  # room for the y axis's values and title
BOTTOM = 42  # and the x axis's


def draw(chart: XYChart, rows: list[dict[str, Any]]) -> str:
    """The SVG of ``chart`` showing ``rows``."""
    points = [r for r in rows if chart.series is None or r[chart.series] == chart.point_series]
    lines: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if chart.series is not None and r[chart.series] != chart.point_series:
            lines.setdefault(r[chart.series], []).append(r)
    xs, ys = [r[chart.x] for r in rows], [r[chart.y] for r in rows]
    x_axis, y_axis = _axis(chart, xs), _axis(chart, ys)
    w, h = chart.width, chart.height

    def px(value: float) -> float:
        return _at(x_axis, value) * w

    def py(value: float) -> float:
        return h - _at(y_axis, value) * h

    classes = _classes(chart, points)
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(classes)}
    legend = [(name, "point", colour[name]) for name in classes] + [(name, "line", DASHES[i % len(DASHES)])
                                                                    for i, name in enumerate(lines)]
    legend_w = math.ceil(max([len(chart.legend_title) * TITLE_PX * 0.68] + [28 + len(n) * LABEL_PX * MONO_EM
                                                                           for n, _, _ in legend])) if legend else 0
    width = LEFT + w + (18 + legend_w if legend else 0) + PAD
    height = PAD + h + BOTTOM
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": str(width), "height": str(height),
                             "viewBox": f"0 0 {width} {height}", "class": "plot"})
    ET.SubElement(svg, "rect", {"width": str(width), "height": str(height), "fill": "white"})
    plot = ET.SubElement(svg, "g", {"transform": f"translate({LEFT},{PAD})"})
    for value, label in _ticks(x_axis):
        _line(plot, px(value), 0, px(value), h, "#ddd")
        _text(plot, label, px(value), h + 15, "middle", LABEL_PX, SANS)
    for value, label in _ticks(y_axis):
        _line(plot, 0, py(value), w, py(value), "#ddd")
        _text(plot, label, -7, py(value) + 3.5, "end", LABEL_PX, SANS)
    _line(plot, 0, h, w, h)
    _line(plot, 0, 0, 0, h)
    _text(plot, chart.x_title, w / 2, h + 32, "middle", TITLE_PX, SANS).set("font-weight", "bold")
    title = _text(plot, chart.y_title, -LEFT + 12, h / 2, "middle", TITLE_PX, SANS)
    title.set("transform", f"rotate(-90 {_n(-LEFT + 12)} {_n(h / 2)})")
    title.set("font-weight", "bold")
    for value in chart.rules:
        for x1, y1, x2, y2 in ((px(value), 0, px(value), h), (0, py(value), w, py(value))):
            ET.SubElement(plot, "line", {"x1": _n(x1), "y1": _n(y1), "x2": _n(x2), "y2": _n(y2), "stroke": "#888",
                                         "stroke-dasharray": "4 4"})
    for i, (name, members) in enumerate(lines.items()):
        path = " ".join(f"{'M' if n == 0 else 'L'}{_n(px(r[chart.x]))},{_n(py(r[chart.y]))}" for n, r in enumerate(members))
        line = ET.SubElement(plot, "path", {"d": path, "fill": "none", "stroke": "#4c78a8", "stroke-width": "2"})
        if DASHES[i % len(DASHES)]:
            line.set("stroke-dasharray", DASHES[i % len(DASHES)])
        ET.SubElement(line, "title").text = _xml_text(name)
    for r in points:
        holder = ET.SubElement(plot, "a", {XLINK_HREF: r["href"]}) if r.get("href") else plot
        dot = ET.SubElement(holder, "circle", {"cx": _n(px(r[chart.x])), "cy": _n(py(r[chart.y])), "r": str(POINT_R),
                                               "fill": colour[r[chart.colour]] if chart.colour else PALETTE[2],
                                               "fill-opacity": "0.85"})
        ET.SubElement(dot, "title").text = _xml_text(_tooltip(chart, r))
    if legend:
        _legend(svg, chart, legend, LEFT + w + 18)
    return ET.tostring(svg, encoding="unicode")


Axis = tuple[float, float, bool]  # low end, high end, logarithmic


def _axis(chart: XYChart, values: list[float]) -> Axis:
    """The range an axis shows: the chart's domain, or round numbers at or past the values
    (powers of ten on a log axis)."""
    if chart.domain is not None:
        return chart.domain[0], chart.domain[1], chart.log
    low, high = min(values), max(values)
    if chart.log:
        return 10.0 ** math.floor(math.log10(low)), 10.0 ** math.ceil(math.log10(high) + 1e-9), True
    if high <= low:
        low, high = low - 1, high + 1
    step = tick_step(low, high, 5)
    return math.floor(low / step) * step, math.ceil(high / step) * step, False


def _at(axis: Axis, value: float) -> float:
    """Where ``value`` lies along the axis, 0 at its low end and 1 at its high end."""
    lo, hi, log = axis
    if log:
        return (math.log10(value) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    return (value - lo) / (hi - lo)


def _ticks(axis: Axis) -> list[tuple[float, str]]:
    """(value, label) of each tick: round steps, or each power of ten on a log axis."""
    lo, hi, log = axis
    if log:
        first, last = round(math.log10(lo)), round(math.log10(hi))
        every = max(1, math.ceil((last - first) / 8))  # at most about eight labels
        return [(10.0 ** p, _power(p)) for p in range(first, last + 1, every)]
    step = tick_step(lo, hi, 5)
    digits = max(0, math.ceil(-math.log10(step) - 1e-9))
    count = int(round((hi - lo) / step))
    return [(lo + i * step, f"{lo + i * step:,.{digits}f}") for i in range(count + 1)]


def _power(p: int) -> str:
    """10**p as a plain number where it is short, else as 1e±p."""
    return f"{10.0 ** p:,.{max(0, -p)}f}" if -3 <= p <= 4 else f"1e{p}"


def _classes(chart: XYChart, points: list[dict[str, Any]]) -> list[str]:
    if chart.colour is None:
        return []
    present = {r[chart.colour] for r in points}
    return [c for c in chart.colour_order if c in present] + sorted(present - set(chart.colour_order))


def _tooltip(chart: XYChart, row: dict[str, Any]) -> str:
    name = f"{row['label']}: " if row.get("label") else ""
    kind = f" ({row[chart.colour]})" if chart.colour else ""
    return f"{name}{chart.x_title} {row[chart.x]:g}, {chart.y_title} {row[chart.y]:g}{kind}"


def _legend(svg: ET.Element, chart: XYChart, entries: list[tuple[str, str, str]], left: int) -> None:
    legend = ET.SubElement(svg, "g", {"transform": f"translate({left},{PAD})"})
    _text(legend, chart.legend_title, 0, 9, "start", TITLE_PX, SANS).set("font-weight", "bold")
    for i, (name, kind, look) in enumerate(entries):
        middle = 20 + 13 * i
        if kind == "point":
            ET.SubElement(legend, "circle", {"cx": "6", "cy": str(middle), "r": str(POINT_R), "fill": look})
        else:
            mark = ET.SubElement(legend, "line", {"x1": "0", "y1": str(middle), "x2": "22", "y2": str(middle),
                                                  "stroke": "#4c78a8", "stroke-width": "2"})
            if look:
                mark.set("stroke-dasharray", look)
        _text(legend, name, 28, middle + 3.5, "start", LABEL_PX, MONO)
