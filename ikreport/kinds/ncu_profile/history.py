"""The ``ncu-profile`` kind's history (the regression tracking asv gives benchmark suites, for ncu
evidence): per kernel, each profile's median duration with its 95% interval, in order of
collection, and the points where the time changed: between neighbours the same rule as
``compare`` (analysis/ratio_interval.py, launches as the unit), naming the first record after a
change. Profiles of the same time are each compared with every profile of the time before, a
change marked only when it is one against every one of them (site/history.py orders them)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

from ikreport import links
from ikreport.analysis.ratio_interval import (DEFAULT_MIN_SAMPLES, DEFAULT_THRESHOLD_PCT, beyond, call, median_interval,
                                              ratio_interval)
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import RecordSet
from ikreport.formatting import distinct_digits, fmt_duration_us, plural, short
from ikreport.kinds.base import History, SeriesContext
from ikreport.kinds.ncu_profile.data import durations_by_kernel
from ikreport.store.cache import Cache, loads

HISTORY_VERSION = "3"  # bump when what kernel_history computes changes, to drop kept histories
MAX_KERNELS = 8  # the kernels taking the most time over the series
THRESHOLD_PCT = DEFAULT_THRESHOLD_PCT  # as 'ikreport compare' calls a change
MIN_LAUNCHES = DEFAULT_MIN_SAMPLES
NOTE = ("Each point is a profile's median duration of the kernel with its distribution-free 95% interval (order "
        "statistics) over that profile's launches; with fewer than six launches the interval is their whole range. "
        "A change is marked where the interval of the B/A ratio between a profile and the one "
        f"before lies wholly beyond {THRESHOLD_PCT:g}%, as 'ikreport compare' calls FASTER or SLOWER with one run a "
        "side: launches within a run are the unit, so run-to-run variance can look like a change.")
COLUMNS = [{"name": "median", "num": True}, {"name": "95% interval", "num": True}, {"name": "launches", "num": True},
           {"name": "change from the one before", "num": False}]


def kernel_history(ids: tuple[str, ...], when: tuple[str, ...], records: RecordSet, read_blob: Callable[[str], bytes],
                   cache: Cache | None = None) -> list[dict[str, Any]]:
    """Per kernel (most total time first): each profile's median and interval, and the changes.
    What follows from one profile (each kernel's total, launches, median and interval) and what
    follows from a pair (the change between them) is kept in the build ``cache`` by their ids, so
    a profile that joins a series costs its own launch table and its own change, not the series'.
    ``when``: each profile's place in time, as the series orders them ('' when unknown)."""
    cache = cache or Cache(None)
    durations = _Durations(records, read_blob)
    stats = _profile_stats(ids, durations, cache)
    totals: dict[str, float] = {}
    for by_kernel in stats:
        for kernel, (total, *_rest) in by_kernel.items():
            totals[kernel] = totals.get(kernel, 0.0) + total
    top = sorted(totals, key=lambda k: (-totals[k], k))[:MAX_KERNELS]
    out = []
    for kernel in top:
        points: list[dict[str, Any]] = []
        groups: list[list[tuple[str, int, float]]] = []  # (id, launches, median) of the profiles of each time, in time order
        for order, by_kernel in enumerate(stats):
            if kernel not in by_kernel:
                continue
            _total, launches, median, low, high = by_kernel[kernel]
            at = when[order] if when else ""
            point = {"order": order, "id": ids[order], "median_us": median, "low_us": low,
                     "high_us": high, "launches": launches, "change": "", "ratio": None, "ratio_ci": None,
                     "since": None}
            if groups and points[-1]["when"] == at:
                groups[-1].append((point["id"], launches, median))
            else:
                groups.append([(point["id"], launches, median)])
            if len(groups) > 1:
                point.update(_change_from(kernel, groups[-2], (point["id"], launches, median), durations, cache))
            points.append({**point, "when": at})
        out.append({"kernel": kernel, "points": [{k: v for k, v in p.items() if k != "when"} for p in points]})
    return out


class _Durations:
    """Each profile's launch durations by kernel, read once (from its launch table if it has one)."""

    def __init__(self, records: RecordSet, read_blob: Callable[[str], bytes]) -> None:
        self.records, self.read_blob = records, read_blob
        self.read: dict[str, dict[str, list[float]]] = {}

    def __call__(self, rid: str) -> dict[str, list[float]]:
        if rid not in self.read:
            complete = self.records.facts(rid).get("launches_complete")
            self.read[rid] = durations_by_kernel(self.records.records[rid], self.read_blob, complete)
        return self.read[rid]


def _profile_stats(ids: tuple[str, ...], durations: _Durations, cache: Cache) -> list[dict[str, list[Any]]]:
    """Per profile, kernel -> [total µs, launches, median, low, high]; kept by the profile's id."""
    space = f"kernel stats {HISTORY_VERSION}"
    kept = {rid: value for rid, raw in cache.get_many(space, ids).items() if isinstance(value := loads(raw), dict)}
    new = {}
    for rid in ids:
        if rid not in kept:
            new[rid] = {kernel: [math.fsum(values), len(values), *median_interval(values)]
                        for kernel, values in durations(rid).items()}
    cache.put_many(space, new.items())
    return [kept[rid] if rid in kept else new[rid] for rid in ids]


def _change_from(kernel: str, before: list[tuple[str, int, float]], this: tuple[str, int, float],
                 durations: _Durations, cache: Cache) -> dict[str, Any]:
    """The change from the profiles of the time before: one only when the rule calls the same
    change against each of them (their order among themselves is unknown). The bootstrap runs
    only where the medians say a change is possible, and its answer is kept by the ids."""
    rid, launches, median = this
    if not all(beyond(n, m, launches, median, THRESHOLD_PCT, MIN_LAUNCHES) for _, n, m in before):
        return {}  # SAME or UNDECIDED against one of them, whatever the interval: no change
    space = f"kernel change {HISTORY_VERSION} {THRESHOLD_PCT:g} {MIN_LAUNCHES}"
    key = hashlib.sha256(repr((kernel, [b for b, _, _ in before], rid)).encode()).hexdigest()
    kept = loads(cache.get(space, key))
    if isinstance(kept, dict):
        return kept
    verdicts = set()
    for earlier, _, _ in before:
        interval = ratio_interval(durations(earlier)[kernel], durations(rid)[kernel])
        verdicts.add(call(interval, THRESHOLD_PCT, MIN_LAUNCHES, "launches")[0])
    (verdict,) = verdicts if len(verdicts) == 1 else ("",)
    change = {} if verdict not in ("FASTER", "SLOWER") else {
        "change": verdict, "ratio": interval.ratio, "ratio_ci": [interval.low, interval.high], "since": earlier}
    cache.put_many(space, [(key, change)])
    return change


def kept_history(series: SeriesContext) -> list[dict[str, Any]]:
    """``kernel_history``, kept in the build cache: records never change, so the history of the
    same records at the same times (a correction moves one) is the same, and a rebuild need not
    bootstrap every profile again."""
    key = hashlib.sha256(json.dumps([HISTORY_VERSION, THRESHOLD_PCT, MIN_LAUNCHES, MAX_KERNELS,
                                     series.ids, series.when]).encode()).hexdigest()
    found = loads(series.cache.get("history", key))
    if isinstance(found, list):
        return found
    history = kernel_history(series.ids, series.when, series.records, series.read_blob, series.cache)
    series.cache.put("history", key, json.dumps(history, sort_keys=True).encode())
    return history


def sections(series: SeriesContext) -> list[dict[str, Any]]:
    """The page's sections, one per kernel: a chart, a table and the changes found."""
    place = {rid: i for i, rid in enumerate(series.ids)}
    out = []
    for n, k in enumerate(kept_history(series)):
        name = short_kernel(k["kernel"])
        # one precision for the kernel's table, at which different times never read the same
        us = distinct_digits([p[f] for p in k["points"] for f in ("median_us", "low_us", "high_us")], fmt_duration_us)
        rows = [{"label": f"#{p['order'] + 1}", "median_us": p["median_us"],
                 "low_us": p["low_us"] if p["low_us"] is not None else p["median_us"],
                 "high_us": p["high_us"] if p["high_us"] is not None else p["median_us"],
                 "change": p["change"] or "no change", "href": links.url(links.record_file(p["id"]), series.path),
                 "description": f"#{p['order'] + 1}: median {fmt_duration_us(p['median_us'], us)}, 95% interval "
                                f"{_span(p['low_us'], p['high_us'], us)}, {p['change'] or 'no change'}"}
                for p in k["points"]]
        chart = series.charts.render("history", f"{name}: median duration by profile, in order of collection", (
            f"Points with interval bars: the median duration of {name} in each of "
            f"{plural(len(rows), 'profile', 'profiles')}, numbered in order of collection; changes are coloured."), rows)
        table = [[f"#{p['order'] + 1}", series.link(p["id"]), series.records.records[p["id"]]["collected_at"] or "",
                  fmt_duration_us(p["median_us"], us), _span(p["low_us"], p["high_us"], us), str(p["launches"]),
                  _change(p)] for p in k["points"]]
        changes = [{"text": f"{name}: {p['change']} from #{place[p['since']] + 1} to #{p['order'] + 1}, B/A "
                            f"{p['ratio']:.3f} [{p['ratio_ci'][0]:.3f}, {p['ratio_ci'][1]:.3f}]; first record after "
                            "the change:", **series.link(p["id"])} for p in k["points"] if p["change"]]
        out.append({"name": name, "kernel": k["kernel"], "anchor": f"k-{n + 1}", "chart": chart, "columns": COLUMNS,
                    "rows": table, "changes": changes})
    return out


def _span(low: float | None, high: float | None, digits: int | None) -> str:
    return "n/a" if low is None or high is None else f"{fmt_duration_us(low, digits)} – {fmt_duration_us(high, digits)}"


def _change(point: dict[str, Any]) -> str:
    if not point["change"]:
        return ""
    low, high = point["ratio_ci"]
    return f"{point['change']} (B/A {point['ratio']:.3f} [{low:.3f}, {high:.3f}] against {short(point['since'])})"


HISTORY = History(sections=sections, note=NOTE, version=HISTORY_VERSION)
