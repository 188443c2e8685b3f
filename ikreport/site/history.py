"""History pages: one per series of ncu profiles of the same GPU and workload (and engine and
model, where recorded), the regression tracking asv gives benchmark suites, for ncu evidence.

Per kernel, each profile's median duration with its 95% interval, in order of collection,
and the points where the time changed: between neighbours the same rule as ``compare``
(analysis/ratio_interval.py, launches as the unit), naming the first record after a change.
A superseded profile is left out; its successor stands in the series.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ikreport import links
from ikreport.analysis.ratio_interval import call, median_interval, ratio_interval
from ikreport.claims.kernel_names import short_kernel
from ikreport.formatting import fmt_duration_us, plural, short
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE
from ikreport.site.charts import ChartRenderer
from ikreport.site.model import Page
from ikreport.store.cache import keep, recall_json
from ikreport.store.profile_data import launch_rows
from ikreport.store.recordset import RecordSet

HISTORY_VERSION = "1"  # bump when what kernel_history computes changes, to drop kept histories
SERIES_KEYS = ("gpu", "workload", "engine", "model")
MAX_KERNELS = 8  # the kernels taking the most time over the series
THRESHOLD_PCT = 5.0
MIN_LAUNCHES = 3
NOTE = ("Each point is a profile's median duration of the kernel with its 95% bootstrap interval over that "
        "profile's launches. A change is marked where the interval of the B/A ratio between a profile and the one "
        f"before lies wholly beyond {THRESHOLD_PCT:g}%, as 'ikreport compare' calls FASTER or SLOWER with one run a "
        "side: launches within a run are the unit, so run-to-run variance can look like a change.")


@dataclass(frozen=True)
class Series:
    """Profiles sharing GPU, workload, engine and model, in order of collection."""

    subject: dict[str, str]  # the shared subject fields that are recorded
    records: tuple[str, ...]

    @property
    def path(self) -> str:
        """The page's path: a readable slug and a short hash of the subject, unique per series."""
        text = " ".join(self.subject[k] for k in SERIES_KEYS if k in self.subject)
        slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].strip("-")
        digest = hashlib.sha256(repr(sorted(self.subject.items())).encode()).hexdigest()[:8]
        return links.history_page(f"{slug}-{digest}")

    @property
    def title(self) -> str:
        """'decode attention on NVIDIA B200 (PyTorch, Llama)'."""
        extra = ", ".join(self.subject[k] for k in ("engine", "model") if k in self.subject)
        return f"{self.subject['workload']} on {self.subject['gpu']}" + (f" ({extra})" if extra else "")


def find_series(records: RecordSet) -> list[Series]:
    """Every series of two or more current profiles that name their GPU and workload."""
    import pandas as pd

    rows = []
    for rid in records.by_kind.get(NCU_PROFILE, []):
        record = records.records[rid]
        subject = record["subject"]
        if subject.get("gpu") and subject.get("workload") and records.superseded_by(rid) is None:
            rows.append({"id": rid, "when": record["collected_at"] or "",
                         **{k: subject.get(k) or "" for k in SERIES_KEYS}})
    if not rows:
        return []
    frame = pd.DataFrame(rows).sort_values(["when", "id"])
    out = []
    for key, group in frame.groupby(list(SERIES_KEYS), sort=True):
        if len(group) >= 2:
            subject = {k: v for k, v in zip(SERIES_KEYS, key) if v}
            out.append(Series(subject, tuple(group["id"])))
    return out


def _launches(series: Series, records: RecordSet, read_blob: Callable[[str], bytes]) -> Any:
    import pandas as pd

    rows = [{"order": n, "id": rid, "kernel": launch["kernel"], "duration_us": launch["duration_us"]}
            for n, rid in enumerate(series.records) for launch in launch_rows(records.whole(rid), read_blob)]
    return pd.DataFrame(rows, columns=["order", "id", "kernel", "duration_us"])


def kernel_history(series: Series, records: RecordSet, read_blob: Callable[[str], bytes]) -> list[dict[str, Any]]:
    """Per kernel (most total time first): each profile's median and interval, and the changes."""
    launches = _launches(series, records, read_blob)
    totals = launches.groupby("kernel")["duration_us"].sum().reset_index()
    top = totals.sort_values(["duration_us", "kernel"], ascending=[False, True])["kernel"].head(MAX_KERNELS)
    out = []
    for kernel in top:
        samples = launches[launches["kernel"] == kernel].groupby("order")["duration_us"].agg(list)
        points, before = [], None
        for order, durations in samples.items():
            median, low, high = median_interval(durations)
            point = {"order": int(order), "id": series.records[int(order)], "median_us": median, "low_us": low,
                     "high_us": high, "launches": len(durations), "change": "", "ratio": None, "ratio_ci": None,
                     "since": None}
            if before is not None:
                interval = ratio_interval(before["durations"], durations)
                verdict, _ = call(interval, THRESHOLD_PCT, MIN_LAUNCHES, "launches")
                if verdict in ("FASTER", "SLOWER"):
                    point.update(change=verdict, ratio=interval.ratio, ratio_ci=(interval.low, interval.high),
                                 since=before["id"])
            points.append(point)
            before = {"id": point["id"], "durations": durations}
        out.append({"kernel": kernel, "points": points})
    return out


def kept_history(series: Series, records: RecordSet, read_blob: Callable[[str], bytes],
                 cache: Path | None) -> list[dict[str, Any]]:
    """``kernel_history``, kept in ``cache``: records never change, so the history of the same
    records is the same, and a rebuild need not bootstrap every profile again."""
    key = hashlib.sha256(json.dumps([HISTORY_VERSION, THRESHOLD_PCT, MIN_LAUNCHES, MAX_KERNELS,
                                     series.records]).encode()).hexdigest()
    path = cache / f"{key}.json" if cache is not None else None
    found = recall_json(path) if path is not None else None
    if isinstance(found, list):
        return found
    history = kernel_history(series, records, read_blob)
    if path is not None:
        keep(path, json.dumps(history, sort_keys=True))  # if it cannot be kept, the next build recomputes it
    return history


def history_page(series: Series, records: RecordSet, read_blob: Callable[[str], bytes],
                 charts: ChartRenderer, cache: Path | None = None) -> Page:
    """A series' page: its profiles, and per kernel a chart, a table and the changes found."""
    path = series.path

    def link(rid: str) -> dict[str, str]:
        return {"short": short(rid), "title": records.records[rid]["title"],
                "href": links.url(links.record_file(rid), path), "md_href": links.url(links.record_file(rid, "md"), path)}

    kernels = []
    for n, k in enumerate(kept_history(series, records, read_blob, cache)):
        name = short_kernel(k["kernel"])
        rows = [{"label": f"#{p['order'] + 1}", "median_us": p["median_us"],
                 "low_us": p["low_us"] if p["low_us"] is not None else p["median_us"],
                 "high_us": p["high_us"] if p["high_us"] is not None else p["median_us"],
                 "change": p["change"] or "no change", "href": links.url(links.record_file(p["id"]), path)}
                for p in k["points"]]
        chart = charts.render("history", f"{name}: median duration by profile, in order of collection", (
            f"Points with interval bars: the median duration of {name} in each of "
            f"{plural(len(rows), 'profile', 'profiles')}, numbered in order of collection; changes are coloured."), rows)
        table = [[f"#{p['order'] + 1}", link(p["id"]), records.records[p["id"]]["collected_at"] or "",
                  fmt_duration_us(p["median_us"]), _span(p["low_us"], p["high_us"]), str(p["launches"]),
                  _change(p)] for p in k["points"]]
        changes = [{"text": f"{name}: {p['change']} from #{p['order']} to #{p['order'] + 1}, B/A "
                            f"{p['ratio']:.3f} [{p['ratio_ci'][0]:.3f}, {p['ratio_ci'][1]:.3f}]; first record after "
                            "the change:", **link(p["id"])} for p in k["points"] if p["change"]]
        kernels.append({"name": name, "kernel": k["kernel"], "anchor": f"k-{n + 1}", "chart": chart, "rows": table,
                        "changes": changes})
    return Page(path=path, template="history", title=f"History: {series.title}", root="../", context={
        "series": series.title, "note": NOTE,  # subject: field names as readers write them, GPU first
        "subject": [({"gpu": "GPU"}.get(k, k), series.subject[k]) for k in SERIES_KEYS if k in series.subject],
        "records": [{"n": f"#{i + 1}", **link(rid), "when": records.records[rid]["collected_at"] or ""}
                    for i, rid in enumerate(series.records)],
        "kernels": kernels, "changes": [c for k in kernels for c in k["changes"]],
    })


def _span(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"{fmt_duration_us(low)} – {fmt_duration_us(high)}"


def _change(point: dict[str, Any]) -> str:
    if not point["change"]:
        return ""
    low, high = point["ratio_ci"]
    return f"{point['change']} (B/A {point['ratio']:.3f} [{low:.3f}, {high:.3f}] against {short(point['since'])})"


def series_links(series: list[Series], page: str) -> list[dict[str, str]]:
    """The index's list of series: title, profile count and the links to its history page."""
    return [{"title": s.title, "count": str(len(s.records)), "href": links.url(f"{s.path}.html", page),
             "md_href": links.url(f"{s.path}.md", page)} for s in series]
