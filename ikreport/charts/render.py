"""Charts: static SVG made at build time, cached by content hash. The simple bar charts a
kind declares (kinds/base.py ``BarChart``) are drawn by charts/bars.py; the last few (a bandwidth
record's samples, a comparison's intervals) are altair specs that vl-convert lays out.

The scatter and roofline charts (``XYChart``) are drawn by charts/plot.py, the history chart by
charts/history.py. A chart is a pure function of the rows it shows, so its SVG is kept in the build cache under the
sha256 of (kind, rows, renderer version): an unchanged chart is never rendered twice, and a warm
cache needs neither altair nor vl-convert to be imported. altair's specs are kept too, as
data-free templates (see KINDS), so a new chart costs vl-convert but not an altair import.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ikreport.bidi import BIDI_CONTROLS, show_bidi_in
from ikreport.kinds.base import BarChart, XYChart
from ikreport.kinds.registry import chart_makers
from ikreport.charts.bars import draw as draw_bars
from ikreport.charts.plot import draw as draw_plot
from ikreport.charts.history import CHARTS as HISTORY_CHARTS
from ikreport.store.cache import Cache, loads

CHART_VERSION = "7"  # bump when a chart's look changes, to drop cached SVGs
SVG, TEMPLATE = "chart", "chart-template"  # the cache's spaces
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Chart:
    """A chart rendered to SVG, with its title and a sentence saying what it shows."""

    key: str  # sha256 of what the chart shows
    title: str
    alt: str  # a sentence saying what the chart shows, for screen readers and the Markdown twin
    svg: str
    notes: tuple[dict[str, str], ...] = ()  # where the chart's reference lines come from: {"text", "href"?, "short"?}


def _payload(kind: str, rows: Rows) -> str:
    return json.dumps([CHART_VERSION, kind, rows], sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class ChartRenderer:
    """Renders charts, reading and filling the build cache when given one."""

    def __init__(self, cache: Cache | None) -> None:
        self.cache = cache or Cache(None)

    def render(self, kind: str, title: str, alt: str, rows: Rows,
               notes: tuple[dict[str, str], ...] = ()) -> Chart:
        """The chart of ``rows`` as SVG, from the cache when it was rendered before. Its text
        shows bidirectional controls as escapes (ikreport/bidi.py), before it is laid out, so
        that labels are measured as they are shown."""
        payload = _payload(kind, rows)
        if BIDI_CONTROLS.search(payload):  # one scan of the text; only then a walk through the rows
            rows = show_bidi_in(rows)
            payload = _payload(kind, rows)
        key = hashlib.sha256(payload.encode("utf-8")).hexdigest()
        kept = self.cache.get(SVG, key)
        if kept is not None:
            try:
                return Chart(key, title, alt, kept.decode("utf-8"), notes)
            except UnicodeDecodeError:
                pass  # damaged: rendered again
        maker = KINDS[kind]
        if isinstance(maker, BarChart):
            svg = draw_bars(maker, rows)
        elif isinstance(maker, XYChart):
            svg = draw_plot(maker, rows)
        elif callable(maker):  # a chart that draws itself (charts/history.py)
            svg = maker(rows)
        else:
            svg = _to_svg(chart_spec(kind, rows, self._template))
        self.cache.put(SVG, key, svg.encode("utf-8"))
        return Chart(key, title, alt, svg, notes)

    def _template(self, kind: str, shape: Shape) -> dict[str, Any]:
        """The kept template for this chart's kind and shape; made (and kept) when missing."""
        name = hashlib.sha256(json.dumps([CHART_VERSION, _altair_version(), kind, shape]).encode()).hexdigest()[:32]
        if (self.cache.folder, name) in _TEMPLATES:  # a worker renders hundreds of pages from a handful
            return _TEMPLATES[self.cache.folder, name]
        kept = loads(self.cache.get(TEMPLATE, name))
        template = kept if isinstance(kept, dict) else make_template(kind, shape)
        if not isinstance(kept, dict):
            self.cache.put(TEMPLATE, name, json.dumps(template, sort_keys=True).encode())
        _TEMPLATES[self.cache.folder, name] = template
        return template


# kept templates read in this process, by cache and name; chart_spec copies the top level, never changes one
_TEMPLATES: dict[tuple[Path | None, str], dict[str, Any]] = {}


@lru_cache(maxsize=1)  # importlib.metadata scans every installed distribution: once a build
def _altair_version() -> str:
    from importlib.metadata import version

    return version("altair")


# vl-convert resolves a mark's relative href against this base; the site's links stay relative.
VEGA_BASE = 'xlink:href="https://vega.github.io/vega-datasets/'


def _to_svg(spec: dict[str, Any]) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(spec).replace(VEGA_BASE, 'xlink:href="')


# Each chart's spec is made by altair from its shape alone (data is referenced by name), and
# its rows go into the spec's top-level "datasets". A template depends only on (kind, shape),
# so it is made once and kept beside the SVG cache: a rebuild that renders one new chart
# fills a kept template and never imports altair.

Shape = tuple[Any, ...]
Datasets = dict[str, Rows]

# chart kind -> a BarChart, or (template maker taking the shape, rows -> (shape, named datasets));
# each record kind's module (ikreport/kinds/) makes its own charts; history pages have theirs
KINDS: dict[str, Any] = {**chart_makers(), **HISTORY_CHARTS}
VEGA_KINDS = sorted(kind for kind, maker in KINDS.items() if isinstance(maker, tuple))


def make_template(kind: str, shape: Shape) -> dict[str, Any]:
    """The spec of a ``kind`` chart of this shape, with no data in it (made by altair)."""
    return KINDS[kind][0](*shape)


def chart_spec(kind: str, rows: Rows,
               template: Callable[[str, Shape], dict[str, Any]] = make_template) -> dict[str, Any]:
    """The whole Vega-Lite spec of a chart: its template (made, or kept one) with the rows as
    named datasets."""
    shape, datasets = KINDS[kind][1](rows)
    return {**template(kind, shape), "datasets": datasets}
