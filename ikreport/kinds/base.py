"""What a record kind gives the generic code (the ``Kind`` value), and the helpers that more
than one kind's view uses (pure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ikreport.claims.model import Record, RecordSet, Rule
from ikreport.formatting import fmt_number

MAX_CHART_KERNELS = 15
MAX_TABLE_KERNELS = 50

Facts = list[tuple[str, str]]
Tables = list[dict[str, Any]]
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class BarChart:
    """A horizontal bar chart, one bar (or one group or stack of bars) per row ``label``, drawn
    straight to SVG by charts/bars.py: what it shows is said here, how it is drawn there."""

    value: str  # the field holding a bar's length
    axis_title: str  # the value axis's title; "{unit}" is filled from the first row's "unit"
    value_unit: str  # what a bar's value is in, as its tooltip says it ("%", or "{unit}" as above)
    series: str | None = None  # the field naming a bar's part: coloured, with a legend
    series_order: tuple[str, ...] = ()  # the legend's order; the series' names sorted if empty
    stacked: bool = False  # a label's parts stacked end to end (largest first); else side by side
    domain: tuple[float, float] | None = None  # a fixed value range (% of peak); else 0 to a round number past the largest
    step: int = 18  # pixels a bar takes across, gap included
    legend_title: str = ""


@dataclass(frozen=True)
class XYChart:
    """Points, and lines between points, on two numeric axes, drawn straight to SVG by
    charts/plot.py: each row is a point unless its ``series`` names a line (rows of one line in
    order), and a point links to its row's "href" and says its "label" when it has them."""

    x: str  # the fields holding a row's place
    y: str
    x_title: str
    y_title: str
    log: bool = False  # both axes logarithmic, from a power of ten below the smallest value
    domain: tuple[float, float] | None = None  # both axes' fixed range (linear); else round numbers past the data
    colour: str | None = None  # the field naming a point's class: coloured, with a legend
    colour_order: tuple[str, ...] = ()
    legend_title: str = ""
    series: str | None = None  # the field naming a row's series: points are those of point_series
    point_series: str = ""
    rules: tuple[float, ...] = ()  # dashed reference lines at these values, across both axes
    width: int = 320
    height: int = 320


# chart name -> a BarChart, or (template maker taking the shape, rows -> (shape, named datasets))
# for a chart that Vega lays out; see charts/render.py
VegaMakers = tuple[Callable[..., dict[str, Any]], Callable[[Rows], tuple[tuple[Any, ...], dict[str, Rows]]]]
ChartMakers = dict[str, BarChart | XYChart | VegaMakers]


class PageContext(Protocol):
    """What a kind's view may ask of the record page it fills (site/pages.py gives it)."""

    records: RecordSet
    charts: Any  # a site.charts.ChartRenderer: render(chart, title, alt, rows, notes) -> Chart

    def ref(self, record_id: str) -> dict[str, str]:
        """The short id, title and links of another record, as the page shows it."""

    def record_link(self, record_id: str) -> dict[str, str]:
        """{"href", "md_href", "short"} of another record's page, from this page."""

    def blob_href(self, source: Mapping[str, Any]) -> str:
        """Where the site offers one of this record's blobs, from this page."""

    def anchor(self, name: str) -> str:
        """A link to a place on this page ("#k-1")."""


def _no_lines(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    return []


def _nothing_shared(record: Mapping[str, Any]) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class SeriesContext:
    """A series as a kind's history hook sees it (site/history.py gives it): its records in
    order of collection, the time each stands at, and what its page may use."""

    records: RecordSet
    ids: tuple[str, ...]
    when: tuple[str, ...]  # each record's place in time ('' when unknown); equal times have no known order
    path: str  # the page's path, for cache keys and links
    read_blob: Callable[[str], bytes]
    cache: Any  # a store.cache.Cache: what follows from a record, or a pair, is kept by their ids
    charts: Any  # a charts.render.ChartRenderer: render(chart, title, alt, rows) -> Chart
    link: Callable[[str], dict[str, str]]  # a record's short id, title and links, from the page

    def at(self, n: int) -> str:
        """The time the ``n``-th record stands at ('' when unknown)."""
        return self.when[n] if self.when else ""


@dataclass(frozen=True)
class History:
    """How records of a kind form series on history pages: site/history.py finds the series
    (current records sharing GPU and workload, and engine and model where recorded, two or
    more) and orders them; this says what else they must share and what the page shows."""

    # the page's sections, each {"name", "kernel", "anchor", "chart", "columns", "rows",
    # "changes"}: a chart and a table of one measure over the series
    sections: Callable[[SeriesContext], list[dict[str, Any]]]
    note: str  # what a point is and how a change is called
    member: str = "profile"  # what one record of a series is called
    members: str = "profiles"
    # fields beyond the subject that a series' records share, as readers write them (a serving
    # run's load): records that differ in one are in different series
    shared: Callable[[Mapping[str, Any]], dict[str, str]] = _nothing_shared
    no_change: str = "No change between neighbouring profiles: no interval lies wholly beyond the threshold."
    version: str = "1"  # bump when what ``sections`` computes changes, to drop kept pages


@dataclass(frozen=True)
class Kind:
    """Everything specific to one record kind but its data part (its schema, data links and
    facts: kinds/<kind>.schema.json); the registry maps each kind's name to one."""

    name: str
    # lines `ikreport show` adds, from the record and the archive's others (a profile's labels
    # judge a missing memory side against the measured peak, as its page does)
    show: Callable[[Mapping[str, Any], RecordSet], list[str]] = _no_lines
    rules: tuple[Rule, ...] = ()  # claim rules, run in this order on a record of this kind
    # the page context this kind adds (facts, tables, charts, profile) to a record page
    view: Callable[[Record, PageContext], dict[str, Any]] | None = None
    template: str = "record"  # its page's template: <template>.html and <template>.md
    charts: ChartMakers = field(default_factory=dict)
    # what else a page of this kind depends on, beyond its references: ids and text, which
    # page_cache.py keys the page by
    page_inputs: Callable[[Record, RecordSet], Any] | None = None
    # the index's profile-table cells {"launches", "time", "top"} from facts; None: the other table
    index_row: Callable[[Mapping[str, Any]], dict[str, str]] | None = None
    # the GPU `list` and the index name, from the facts and the subject's GPU (a comparison across GPUs names both)
    gpu_shown: Callable[[Mapping[str, Any], str | None], str | None] = lambda facts, gpu: gpu
    history: History | None = None  # how its records form series on history pages; None: they form none


def na(value: Any, unit: str = "") -> str:
    """A value as a page shows it: 'n/a' when missing, floats formatted, then the unit."""
    if value is None or value == "":
        return "n/a"
    if isinstance(value, float):
        value = fmt_number(value)
    return f"{value}{unit}"


def rows_data(rows: Rows) -> tuple[tuple[Any, ...], dict[str, Rows]]:
    """A chart of one dataset named "rows" has one shape."""
    return (), {"rows": rows}


def record_times(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The record's moments as a reader must read them: an import's time is when it was
    imported, not when the profile was taken; that is the export's own time, where it has one."""
    when = record["collected_at"]
    if when is None:
        return [("collected", "derived record (no time)")]
    imported = record["method"].get("how", "").startswith("imported")
    out = [("imported" if imported else "collected", when)]
    taken = (record.get("data") or {}).get("profiled_at")
    if isinstance(taken, dict) and taken.get("first"):
        span = taken["first"] if taken.get("last") in (None, taken["first"]) else f"{taken['first']} to {taken['last']}"
        out.append(("profiled", f"{span} ({taken.get('source', 'the export')})"))
    return out
