"""History pages: one per series of ncu profiles of the same GPU and workload (and engine and
model, where recorded), the regression tracking asv gives benchmark suites, for ncu evidence.

Per kernel, each profile's median duration with its 95% interval, in order of collection,
and the points where the time changed: between neighbours the same rule as ``compare``
(analysis/ratio_interval.py, launches as the unit), naming the first record after a change.
Profiles collected in the same second have no known order (records carry collection time to the
second): they are listed by id, no change is marked between two of them, and each is compared with
the profiles of the time before, a change marked only when it is one against every one of them.
A superseded profile is left out; the record that corrects it stands at its place (its collection
time), and the page says so.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ikreport import links
from ikreport.analysis.ratio_interval import (DEFAULT_MIN_SAMPLES, DEFAULT_THRESHOLD_PCT, beyond, call, median_interval,
                                              ratio_interval)
from ikreport.claims.kernel_names import short_kernel
from ikreport.formatting import distinct_digits, fmt_duration_us, plural, short
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE
from ikreport.charts.render import ChartRenderer
from ikreport.site.model import Page
from ikreport.store.cache import Cache, loads
from ikreport.kinds.ncu_profile_data import durations_by_kernel
from ikreport.store.recordset import RecordSet

_SECOND = re.compile(r":(\d\d)Z$")
HISTORY_VERSION = "3"  # bump when what kernel_history computes changes, to drop kept histories
SERIES_KEYS = ("gpu", "workload", "engine", "model")
MAX_KERNELS = 8  # the kernels taking the most time over the series
THRESHOLD_PCT = DEFAULT_THRESHOLD_PCT  # as 'ikreport compare' calls a change
MIN_LAUNCHES = DEFAULT_MIN_SAMPLES
NOTE = ("Each point is a profile's median duration of the kernel with its distribution-free 95% interval (order "
        "statistics) over that profile's launches; with fewer than six launches the interval is their whole range. "
        "A change is marked where the interval of the B/A ratio between a profile and the one "
        f"before lies wholly beyond {THRESHOLD_PCT:g}%, as 'ikreport compare' calls FASTER or SLOWER with one run a "
        "side: launches within a run are the unit, so run-to-run variance can look like a change.")


@dataclass(frozen=True)
class Series:
    """Profiles sharing GPU, workload, engine and model, in order of collection."""

    subject: dict[str, str]  # the shared subject fields that are recorded
    records: tuple[str, ...]
    when: tuple[str, ...] = ()  # each record's place in time: its collection time, or that of what it corrects
    corrects: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (record, the superseded records it stands for)

    def at(self, n: int) -> str:
        """The time the ``n``-th record stands at ('' when unknown)."""
        return self.when[n] if self.when else ""

    @property
    def path(self) -> str:
        """The page's path: a readable slug and a hash of the subject, unique per series."""
        text = " ".join(self.subject[k] for k in SERIES_KEYS if k in self.subject)
        slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].strip("-")
        # The slug is the same for many subjects (punctuation drops out, and it is cut), so the
        # hash alone keeps pages apart. 128 bits: two subjects of one name take a search of 2^64
        # hashes; 32 bits (8 digits) took 85,000 tries, and one such pair stopped every build.
        digest = hashlib.sha256(repr(sorted(self.subject.items())).encode()).hexdigest()[:32]
        return links.history_page(f"{slug}-{digest}")

    @property
    def title(self) -> str:
        """'decode attention on NVIDIA B200 (PyTorch, Llama)'."""
        extra = ", ".join(self.subject[k] for k in ("engine", "model") if k in self.subject)
        return f"{self.subject['workload']} on {self.subject['gpu']}" + (f" ({extra})" if extra else "")


def find_series(records: RecordSet) -> list[Series]:
    """Every series of two or more current profiles that name their GPU and workload."""
    profiles = records.by_kind.get(NCU_PROFILE, [])
    corrects = _corrected(records, profiles)
    rows = []
    for rid in profiles:
        record = records.records[rid]
        subject = record["subject"]
        if subject.get("gpu") and subject.get("workload") and records.superseded_by(rid) is None:
            # a correction stands where the record it corrects stood, not at the later time it was made
            when = min([records.records[r]["collected_at"] or "" for r in (rid, *corrects.get(rid, ()))])
            key = tuple(subject.get(k) or "" for k in SERIES_KEYS)
            # a time to the second sorts before the milliseconds of that second (it was truncated),
            # never after; the id only makes the order of profiles of the same second reproducible
            rows.append((key, _SECOND.sub(r":\1.000Z", when), rid, when))
    out = []
    for key, group in itertools.groupby(sorted(rows), key=lambda row: row[0]):
        members = list(group)
        if len(members) >= 2:
            ids = tuple(row[2] for row in members)
            out.append(Series({k: v for k, v in zip(SERIES_KEYS, key) if v}, ids, tuple(row[3] for row in members),
                              tuple((r, corrects[r]) for r in ids if r in corrects)))
    return out


def _corrected(records: RecordSet, profiles: list[str]) -> dict[str, tuple[str, ...]]:
    """Current profile -> the superseded profiles it finally replaces (following chains)."""
    out: dict[str, list[str]] = {}
    for rid in profiles:
        last, seen = rid, {rid}
        while (new := records.superseded_by(last)) is not None and new not in seen:  # a cycle is IK109's business
            last = new
            seen.add(new)
        if last != rid:
            out.setdefault(last, []).append(rid)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def kernel_history(series: Series, records: RecordSet, read_blob: Callable[[str], bytes],
                   cache: Cache | None = None) -> list[dict[str, Any]]:
    """Per kernel (most total time first): each profile's median and interval, and the changes.
    What follows from one profile (each kernel's total, launches, median and interval) and what
    follows from a pair (the change between them) is kept in the build ``cache`` by their ids, so
    a profile that joins a series costs its own launch table and its own change, not the series'."""
    cache = cache or Cache(None)
    durations = _Durations(records, read_blob)
    stats = _profile_stats(series.records, durations, cache)
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
            when = series.at(order)
            point = {"order": order, "id": series.records[order], "median_us": median, "low_us": low,
                     "high_us": high, "launches": launches, "change": "", "ratio": None, "ratio_ci": None,
                     "since": None}
            if groups and points[-1]["when"] == when:
                groups[-1].append((point["id"], launches, median))
            else:
                groups.append([(point["id"], launches, median)])
            if len(groups) > 1:
                point.update(_change_from(kernel, groups[-2], (point["id"], launches, median), durations, cache))
            points.append({**point, "when": when})
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
    cache.put_many(space, [(rid, orjson.dumps(value)) for rid, value in new.items()])
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
    kept = cache.get_json(space, key)
    if isinstance(kept, dict):
        return kept
    verdicts = set()
    for earlier, _, _ in before:
        interval = ratio_interval(durations(earlier)[kernel], durations(rid)[kernel])
        verdicts.add(call(interval, THRESHOLD_PCT, MIN_LAUNCHES, "launches")[0])
    (verdict,) = verdicts if len(verdicts) == 1 else ("",)
    change = {} if verdict not in ("FASTER", "SLOWER") else {
        "change": verdict, "ratio": interval.ratio, "ratio_ci": [interval.low, interval.high], "since": earlier}
    cache.put_json(space, key, change)
    return change


def kept_history(series: Series, records: RecordSet, read_blob: Callable[[str], bytes],
                 cache: Cache) -> list[dict[str, Any]]:
    """``kernel_history``, kept in the build cache: records never change, so the history of the
    same records is the same, and a rebuild need not bootstrap every profile again."""
    key = hashlib.sha256(json.dumps([HISTORY_VERSION, THRESHOLD_PCT, MIN_LAUNCHES, MAX_KERNELS,
                                     series.records]).encode()).hexdigest()
    found = cache.get_json("history", key)
    if isinstance(found, list):
        return found
    history = kernel_history(series, records, read_blob, cache)
    cache.put("history", key, json.dumps(history, sort_keys=True).encode())
    return history


def history_key(series: Series, records: RecordSet, templates: str) -> str:
    """A digest of everything a series' page shows: the series, the titles and times of its
    profiles and of those they correct, the supersessions that correct them, the templates and
    ikreport's code (its kernel histories follow from the profiles, whose ids name their bytes)."""
    from ikreport.site.page_cache import code_digest  # a leaf module, imported here to keep history.py below it

    olds = [old for _, group in series.corrects for old in group]
    edges = [(old, getattr(records.supersession_of(old), "by", None)) for old in olds]
    deps = (HISTORY_VERSION, series, [(rid, records.records[rid]["title"], records.records[rid]["collected_at"])
                                      for rid in (*series.records, *olds)],
            [(old, by, records.facts(by).get("reason") if by else None) for old, by in edges], templates, code_digest())
    return hashlib.sha256(repr(deps).encode()).hexdigest()


def history_page(series: Series, records: RecordSet, read_blob: Callable[[str], bytes],
                 charts: ChartRenderer, cache: Cache | None = None) -> Page:
    """A series' page: its profiles, and per kernel a chart, a table and the changes found."""
    path = series.path

    def link(rid: str) -> dict[str, str]:
        return {"short": short(rid), "title": records.records[rid]["title"],
                "href": links.url(links.record_file(rid), path), "md_href": links.url(links.record_file(rid, "md"), path)}

    place = {rid: i for i, rid in enumerate(series.records)}
    kernels = []
    for n, k in enumerate(kept_history(series, records, read_blob, cache or Cache(None))):
        name = short_kernel(k["kernel"])
        # one precision for the kernel's table, at which different times never read the same
        us = distinct_digits([p[f] for p in k["points"] for f in ("median_us", "low_us", "high_us")], fmt_duration_us)
        rows = [{"label": f"#{p['order'] + 1}", "median_us": p["median_us"],
                 "low_us": p["low_us"] if p["low_us"] is not None else p["median_us"],
                 "high_us": p["high_us"] if p["high_us"] is not None else p["median_us"],
                 "change": p["change"] or "no change", "href": links.url(links.record_file(p["id"]), path),
                 "description": f"#{p['order'] + 1}: median {fmt_duration_us(p['median_us'], us)}, 95% interval "
                                f"{_span(p['low_us'], p['high_us'], us)}, {p['change'] or 'no change'}"}
                for p in k["points"]]
        chart = charts.render("history", f"{name}: median duration by profile, in order of collection", (
            f"Points with interval bars: the median duration of {name} in each of "
            f"{plural(len(rows), 'profile', 'profiles')}, numbered in order of collection; changes are coloured."), rows)
        table = [[f"#{p['order'] + 1}", link(p["id"]), records.records[p["id"]]["collected_at"] or "",
                  fmt_duration_us(p["median_us"], us), _span(p["low_us"], p["high_us"], us), str(p["launches"]),
                  _change(p)] for p in k["points"]]
        changes = [{"text": f"{name}: {p['change']} from #{place[p['since']] + 1} to #{p['order'] + 1}, B/A "
                            f"{p['ratio']:.3f} [{p['ratio_ci'][0]:.3f}, {p['ratio_ci'][1]:.3f}]; first record after "
                            "the change:", **link(p["id"])} for p in k["points"] if p["change"]]
        kernels.append({"name": name, "kernel": k["kernel"], "anchor": f"k-{n + 1}", "chart": chart, "rows": table,
                        "changes": changes})
    return Page(path=path, template="history", title=f"History: {series.title}", root="../", context={
        "series": series.title, "note": NOTE,  # subject: field names as readers write them, GPU first
        "subject": [({"gpu": "GPU"}.get(k, k), series.subject[k]) for k in SERIES_KEYS if k in series.subject],
        "order_notes": _order_notes(series, records),
        "records": [{"n": f"#{i + 1}", **link(rid), "when": records.records[rid]["collected_at"] or ""}
                    for i, rid in enumerate(series.records)],
        "kernels": kernels, "changes": [c for k in kernels for c in k["changes"]],
    })


def _span(low: float | None, high: float | None, digits: int | None) -> str:
    return "n/a" if low is None or high is None else f"{fmt_duration_us(low, digits)} – {fmt_duration_us(high, digits)}"


def _order_notes(series: Series, records: RecordSet) -> list[str]:
    """What the order of the series rests on: profiles of the same second, and corrections."""
    notes = []
    n = 0
    while n < len(series.records):
        last = max(i for i in range(n, len(series.records)) if series.at(i) == series.at(n))
        if last > n:
            notes.append(f"#{n + 1} to #{last + 1} share the collection time {series.at(n) or '(none)'}: their order "
                         "is not known (they are listed by record id), so no change is marked between them; each is "
                         "compared with every profile of the time before.")
        n = last + 1
    place = {rid: i for i, rid in enumerate(series.records)}
    for rid, olds in series.corrects:
        for old in olds:
            edge = records.supersession_of(old)
            reason = records.facts(edge.by).get("reason") if edge is not None else None
            notes.append(f"#{place[rid] + 1} [{short(rid)}] corrects [{short(old)}], collected "
                         f"{records.records[old]['collected_at'] or '(no time)'}, which is superseded"
                         + (f" ({reason})" if reason else "") + ": it stands at that place in the series, and the "
                         "superseded profile is left out.")
    return notes


def _change(point: dict[str, Any]) -> str:
    if not point["change"]:
        return ""
    low, high = point["ratio_ci"]
    return f"{point['change']} (B/A {point['ratio']:.3f} [{low:.3f}, {high:.3f}] against {short(point['since'])})"


def series_links(series: list[Series], page: str) -> list[dict[str, str]]:
    """The index's list of series: title, profile count and the links to its history page."""
    return [{"title": s.title, "count": str(len(s.records)), "href": links.url(f"{s.path}.html", page),
             "md_href": links.url(f"{s.path}.md", page)} for s in series]
