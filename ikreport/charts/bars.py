"""Horizontal bar charts drawn straight to SVG: the per-kernel time, speed-of-light and stall
charts every profile page has.

Why not Vega, as for the other charts: laying out one of these charts in vl-convert is
nearly all spent measuring the kernel names' text, and made most of a record page's time
(bench/bench_build.py shows the build's rate). These charts need no layout
engine: bars on a zero-based linear scale, a round-numbered axis, names beside the bars. The
names are set in a monospace font, whose advance (0.6 em in the common ones) gives their width
without measuring, so the output is the same on every machine. What a chart shows is declared
by its kind (kinds/base.py ``BarChart``); the XML is written by ElementTree, which escapes.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast
from xml.etree import ElementTree as ET

from ikreport.kinds.base import BarChart

# the look of the site's Vega charts: Vega's default palette and axis styling
PALETTE = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
           "#bab0ac")
PLOT_WIDTH = 360
PAD = 5
LABEL_PX = 10  # names and tick labels
TITLE_PX = 11  # axis and legend titles, bold
MONO_EM = 0.62  # a monospace character's advance, with a little to spare (0.6 em in DejaVu, Liberation, Courier)
SANS_BOLD_EM = 0.68  # an upper bound for a bold sans-serif character, for the legend title's room
TICKS = PLOT_WIDTH // 50  # about one tick per 50 px: round steps, labels that never crowd
MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace"
SANS = "sans-serif"
# A point links to its record (or its row) as Vega's charts did, by xlink:href: the chart is an
# image (role="img") whose parts screen readers do not enter, and the same links are in the
# page's tables for the keyboard.
XLINK = "http://www.w3.org/1999/xlink"
XLINK_HREF = f"{{{XLINK}}}href"
ET.register_namespace("xlink", XLINK)


def draw(chart: BarChart, rows: list[dict[str, Any]]) -> str:
    """The SVG of ``chart`` showing ``rows`` (each with a "label", the chart's value and, for a
    chart of series, its series)."""
    labels = list(dict.fromkeys(r["label"] for r in rows))
    series = _series(chart, rows)
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(series)}
    lo, hi, ticks = _scale(chart, rows, labels)
    x = _x_of(lo, hi)
    grouped = chart.series is not None and not chart.stacked
    inner = chart.step * (len(series) if grouped else 1)  # a label's bars
    band = inner + (chart.step // 2 if grouped else 0)  # and the gap that sets a group apart
    left = math.ceil(max(len(label) for label in labels) * LABEL_PX * MONO_EM) + 7 + PAD
    height = band * len(labels)
    legend_w = _legend_width(chart, series)
    width = left + PLOT_WIDTH + (18 + legend_w if legend_w else 0) + PAD
    total_h = max(PAD + height + 42, PAD + 16 + 13 * len(series) + PAD if legend_w else 0)

    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": str(width), "height": str(total_h),
                             "viewBox": f"0 0 {width} {total_h}", "class": "bars"})
    ET.SubElement(svg, "rect", {"width": str(width), "height": str(total_h), "fill": "white"})
    plot = ET.SubElement(svg, "g", {"transform": f"translate({left},{PAD})"})
    _x_axis(plot, chart, rows, ticks, x, height)
    bars = ET.SubElement(plot, "g", {"class": "bars"})
    for i, label in enumerate(labels):
        top = i * band
        mine = [r for r in rows if r["label"] == label]
        if chart.stacked:
            mine.sort(key=lambda r: -r[chart.value])
        start = lo
        for r in mine:
            value = r[chart.value]
            if grouped:
                y, end, begin = top + series.index(r[cast(str, chart.series)]) * chart.step, value, lo
            else:
                y, begin, end = top, start, start + value
                start = end if chart.stacked else lo
            name = colour[r[chart.series]] if chart.series else PALETTE[0]
            rect = ET.SubElement(bars, "rect", {
                "x": _n(x(begin)), "y": _n(y + chart.step * 0.05), "width": _n(max(x(end) - x(begin), 0)),
                "height": _n(chart.step * 0.9), "fill": name})
            ET.SubElement(rect, "title").text = _xml_text(_tooltip(chart, r))
        _text(plot, label, -7, top + inner / 2 + 3.5, "end", LABEL_PX, MONO)
        _line(plot, 0, top + inner / 2, -5, top + inner / 2)
    _line(plot, 0, 0, 0, height)  # the label axis
    if legend_w:
        _legend(svg, chart, series, colour, left + PLOT_WIDTH + 18)
    return ET.tostring(svg, encoding="unicode")


def _series(chart: BarChart, rows: list[dict[str, Any]]) -> list[str]:
    if chart.series is None:
        return []
    present = {r[chart.series] for r in rows}
    ordered = [s for s in chart.series_order if s in present]
    return ordered + sorted(present - set(ordered))


def _scale(chart: BarChart, rows: list[dict[str, Any]], labels: list[str]) -> tuple[float, float, list[float]]:
    """The value axis's range and ticks: the chart's fixed domain, or 0 to a round number at or
    past the longest bar (a stack's whole length)."""
    if chart.domain is not None:
        lo, hi = chart.domain
    else:
        lo = 0.0
        if chart.stacked:
            hi = max(sum(r[chart.value] for r in rows if r["label"] == label) for label in labels)
        else:
            hi = max(r[chart.value] for r in rows)
        hi = hi if hi > 0 else 1.0
        for _ in range(10):  # a rounder end can call for a coarser step (2.21 -> 2.4 -> steps of 0.5): again
            step = tick_step(lo, hi, TICKS)
            rounder = math.ceil(hi / step - 1e-9) * step
            if math.isclose(rounder, hi):
                break
            hi = rounder
    step = tick_step(lo, hi, TICKS)
    count = int(round((hi - lo) / step))
    return lo, lo + count * step, [lo + i * step for i in range(count + 1)]


def tick_step(lo: float, hi: float, count: int) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about ``count`` ticks between
    ``lo`` and ``hi`` (the rule d3's and Vega's linear scales use)."""
    raw = (hi - lo) / max(count, 1)
    power = math.floor(math.log10(raw))
    error = raw / 10 ** power
    factor = 10 if error >= math.sqrt(50) else 5 if error >= math.sqrt(10) else 2 if error >= math.sqrt(2) else 1
    return factor * 10.0 ** power


def _x_of(lo: float, hi: float) -> Any:
    return lambda v: (v - lo) / (hi - lo) * PLOT_WIDTH


def _x_axis(plot: ET.Element, chart: BarChart, rows: list[dict[str, Any]], ticks: list[float], x: Any,
            height: float) -> None:
    """Grid lines, ticks and their values under the plot, and the axis title."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    digits = max(0, math.ceil(-math.log10(step) - 1e-9))
    for i, value in enumerate(ticks):
        at = x(value)
        _line(plot, at, 0, at, height, "#ddd")
        _line(plot, at, height, at, height + 5)
        anchor = "start" if i == 0 else "end" if i == len(ticks) - 1 else "middle"
        _text(plot, f"{value:,.{digits}f}", at, height + 15, anchor, LABEL_PX, SANS)
    _line(plot, 0, height, PLOT_WIDTH, height)
    title = _text(plot, chart.axis_title.format(unit=rows[0].get("unit", "")), PLOT_WIDTH / 2, height + 30,
                  "middle", TITLE_PX, SANS)
    title.set("font-weight", "bold")


def _legend_width(chart: BarChart, series: list[str]) -> int:
    if not series:
        return 0
    entries = 16 + max(len(s) for s in series) * LABEL_PX * MONO_EM
    return math.ceil(max(entries, len(chart.legend_title) * TITLE_PX * SANS_BOLD_EM))


def _legend(svg: ET.Element, chart: BarChart, series: list[str], colour: dict[str, str], left: int) -> None:
    legend = ET.SubElement(svg, "g", {"transform": f"translate({left},{PAD})"})
    _text(legend, chart.legend_title, 0, 9, "start", TITLE_PX, SANS).set("font-weight", "bold")
    for i, name in enumerate(series):
        top = 16 + 13 * i
        ET.SubElement(legend, "rect", {"x": "1", "y": str(top + 1), "width": "10", "height": "10",
                                       "fill": colour[name]})
        _text(legend, name, 16, top + 9, "start", LABEL_PX, MONO)


def _tooltip(chart: BarChart, row: dict[str, Any]) -> str:
    part = f" {row[chart.series]}" if chart.series else ""
    unit = chart.value_unit.format(unit=row.get("unit", ""))
    return f"{row['label']}{part}: {row[chart.value]:g}{'' if unit == '%' else ' '}{unit}"


def _line(parent: ET.Element, x1: float, y1: float, x2: float, y2: float, stroke: str = "#888") -> None:
    ET.SubElement(parent, "line", {"x1": _n(x1 + 0.5), "y1": _n(y1 + 0.5), "x2": _n(x2 + 0.5), "y2": _n(y2 + 0.5),
                                   "stroke": stroke})


def _text(parent: ET.Element, text: str, x: float, y: float, anchor: str, size: int, family: str) -> ET.Element:
    element = ET.SubElement(parent, "text", {"x": _n(x), "y": _n(y), "text-anchor": anchor, "font-family": family,
                                             "font-size": f"{size}px", "fill": "#000"})
    element.text = _xml_text(text)
    return element


# characters XML 1.0 does not allow, which a kernel name may hold: a chart must stay a file
# a browser and GitHub can open
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _n(value: float) -> str:
    """A coordinate to two decimals, without trailing zeros (the SVG stays small and stable)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")
