"""The ``serving-benchmark`` kind's history: runs of one GPU, engine, model and workload under one
load (load generator, dataset, request rate, concurrency, tokens per request) form a series, and
its page shows each run's median time to first token, median time per output token and output
throughput in order of collection, each point linking to its record.

A point is the load generator's own figure (ikreport recomputes none). A change in a latency is
marked where a run and the one before both kept per-request latencies, by the rule ``compare``
uses (analysis/ratio_interval.py, requests as the unit); throughput is one figure a run, so no
change is called for it. Runs of the same time are each compared with every run of the time before,
a change marked only when it is one against every one of them (site/history.py orders them)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from ikreport import links
from ikreport.analysis.ratio_interval import DEFAULT_MIN_SAMPLES, DEFAULT_THRESHOLD_PCT, call, ratio_interval
from ikreport.formatting import distinct_digits, fmt_duration_us, fmt_number, plural, short
from ikreport.kinds.base import History, SeriesContext, na
from ikreport.store.cache import loads

VERSION = "1"  # bump when what sections computes changes, to drop kept changes and pages
THRESHOLD_PCT = DEFAULT_THRESHOLD_PCT  # as 'ikreport compare' calls a change
MIN_REQUESTS = DEFAULT_MIN_SAMPLES
# (anchor, heading, the tool's figure in data, the per-request samples in data.samples, axis title)
FIGURES = (("ttft", "Median time to first token", "median_ttft_ms", "ttft_ms", "median time to first token (ms)"),
           ("tpot", "Median time per output token", "median_tpot_ms", "tpot_ms", "median time per output token (ms)"),
           ("throughput", "Output throughput", "output_throughput", None, "output tokens per second"))
NOTE = ("Each point is a run's figure as the load generator computed it: its median over the requests it counted, "
        "and its output tokens per second over the run. A change in a latency is marked where both runs kept "
        "per-request latencies and the interval of the B/A ratio of their medians between a run and the one before "
        f"lies wholly beyond {THRESHOLD_PCT:g}%, as 'ikreport compare' calls FASTER or SLOWER: requests within a run "
        "are the unit, so run-to-run variance can look like a change. Next to a run without per-request latencies "
        "no change is marked, and throughput, one figure a run, has none. The timing is the load generator's, "
        "client-side.")
NO_CHANGE = ("No change between neighbouring runs: no interval lies wholly beyond the threshold, or the runs kept no "
             "per-request latencies to give one.")
LATENCY_COLUMNS = [{"name": "median", "num": True}, {"name": "requests kept", "num": True},
                   {"name": "change from the one before", "num": False}]
THROUGHPUT_COLUMNS = [{"name": "output tokens/s", "num": True}, {"name": "requests completed", "num": True}]


def shared(record: Mapping[str, Any]) -> dict[str, str]:
    """The load a series' runs share, as the record page names it: a TTFT at another request
    rate is another workload, not a change. Only what the file records (a field one run records
    and another does not puts them in different series)."""
    d = record["data"]
    out = {"load generator": str(d["tool"])}
    if d.get("dataset"):
        out["dataset"] = str(d["dataset"])
    rate = d.get("request_rate")
    if rate is not None:
        out["request rate"] = "every request at once" if rate == "inf" else f"{fmt_number(rate)} requests/s"
    if d.get("max_concurrency") is not None:
        out["max concurrency"] = str(d["max_concurrency"])
    if d.get("input_len") is not None or d.get("output_len") is not None:  # a series' runs share it: no means
        out["tokens per request"] = tokens_per_request(d, means=False, show=fmt_number)  # as series were named
    return out


def tokens_per_request(d: Mapping[str, Any], means: bool = True, show: Callable[[Any], str] = na) -> str:
    """Each request's lengths as the file says them; their most, when SGLang drew them at random
    (length_range_ratio), with the means the run's totals give (``means``)."""
    ratio = d.get("length_range_ratio")
    if ratio is None:
        return f"{show(d.get('input_len'))} in, {show(d.get('output_len'))} out"
    text = (f"up to {show(d.get('input_len'))} in, up to {show(d.get('output_len'))} out (each request's drawn at "
            f"random from {fmt_number(round(100 * ratio, 1))}% of these up")
    done, given, got = d.get("completed"), d.get("total_input_tokens"), d.get("total_output_tokens")
    if means and done and given is not None and got is not None:
        text += f"; {given / done:.0f} in, {got / done:.0f} out on average"
    return text + ")"


def samples_of(record: Mapping[str, Any], key: str) -> list[float]:
    """A run's per-request latencies under ``key`` ("ttft_ms", "tpot_ms"); [] when not kept."""
    return list((record["data"].get("samples") or {}).get(key) or [])


def sections(series: SeriesContext) -> list[dict[str, Any]]:
    """One section per figure that some run of the series records: a chart, a table, the changes."""
    out = []
    for anchor, heading, figure, sample_key, axis in FIGURES:
        points = [(n, rid, v) for n, rid in enumerate(series.ids)
                  if isinstance(v := series.records.records[rid]["data"].get(figure), (int, float))]
        if not points:
            continue
        changes = _changes(series, points, sample_key) if sample_key else {}
        out.append(_section(series, anchor, heading, axis, points, sample_key, changes))
    return out


def _changes(series: SeriesContext, points: list[tuple[int, str, float]], key: str) -> dict[str, dict[str, Any]]:
    """Point id -> its change from the runs of the time before, where the rule calls the same
    change against each of them; each pair's answer kept in the build cache by the ids."""
    groups: list[list[str]] = []
    last_when = None
    found = {}
    for n, rid, _ in points:
        when = series.at(n)
        if groups and when == last_when:
            groups[-1].append(rid)
        else:
            groups.append([rid])
        last_when = when
        if len(groups) > 1:
            change = _change_from(series, key, groups[-2], rid)
            if change:
                found[rid] = change
    return found


def _change_from(series: SeriesContext, key: str, before: list[str], rid: str) -> dict[str, Any]:
    space = f"serving change {VERSION} {THRESHOLD_PCT:g} {MIN_REQUESTS}"
    cache_key = hashlib.sha256(repr((key, before, rid)).encode()).hexdigest()
    kept = loads(series.cache.get(space, cache_key))
    if isinstance(kept, dict):
        return kept
    after = samples_of(series.records.records[rid], key)
    verdicts, change = set(), {}
    for earlier in before:
        values = samples_of(series.records.records[earlier], key)
        if not values or not after:
            verdicts.add("")  # a run without per-request latencies: no interval, so no change
            continue
        interval = ratio_interval(values, after)
        verdict = call(interval, THRESHOLD_PCT, MIN_REQUESTS, "requests")[0]
        verdicts.add(verdict)
        change = {"change": verdict, "ratio": interval.ratio, "ratio_ci": [interval.low, interval.high],
                  "since": earlier}
    if len(verdicts) != 1 or change.get("change") not in ("FASTER", "SLOWER"):
        change = {}
    series.cache.put_many(space, [(cache_key, change)])
    return change


def _section(series: SeriesContext, anchor: str, heading: str, axis: str, points: list[tuple[int, str, float]],
             sample_key: str | None, changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    records = series.records.records
    place = {rid: i for i, rid in enumerate(series.ids)}
    if sample_key:
        digits = distinct_digits([v * 1e3 for _, _, v in points], fmt_duration_us)

        def text(v: float) -> str:
            return fmt_duration_us(v * 1e3, digits)
    else:
        def text(v: float) -> str:
            return f"{fmt_number(v)} tokens/s"
    rows, table, listed = [], [], []
    for n, rid, v in points:
        change = changes.get(rid, {})
        word = change.get("change") or "no change"
        rows.append({"label": f"#{n + 1}", "value": v, "axis": axis, **({"change": word} if sample_key else {}),
                     "href": links.url(links.record_file(rid), series.path),
                     "description": f"#{n + 1}: {text(v)}" + (f", {word}" if sample_key else "")})
        cells = [f"#{n + 1}", series.link(rid), records[rid]["collected_at"] or "", text(v)]
        if sample_key:
            kept = samples_of(records[rid], sample_key)
            cells += [str(len(kept)) if kept else "not kept", _change_text(change)]
        else:
            cells.append(fmt_number(records[rid]["data"].get("completed")))
        table.append(cells)
        if change:
            listed.append({"text": f"{heading.lower()}: {change['change']} from #{place[change['since']] + 1} to "
                                   f"#{n + 1}, B/A {change['ratio']:.3f} [{change['ratio_ci'][0]:.3f}, "
                                   f"{change['ratio_ci'][1]:.3f}] over the requests; first record after the change:",
                           **series.link(rid)})
    what = heading[0].lower() + heading[1:]
    chart = series.charts.render("run-history", f"{heading}: by run, in order of collection", (
        f"Points: the {what} of each of {plural(len(rows), 'run', 'runs')}, numbered in order of collection"
        + ("; changes are coloured." if sample_key else ".")), rows)
    return {"name": heading, "kernel": "", "anchor": anchor, "chart": chart,
            "columns": LATENCY_COLUMNS if sample_key else THROUGHPUT_COLUMNS, "rows": table, "changes": listed}


def _change_text(change: Mapping[str, Any]) -> str:
    if not change:
        return ""
    low, high = change["ratio_ci"]
    return f"{change['change']} (B/A {change['ratio']:.3f} [{low:.3f}, {high:.3f}] against {short(change['since'])})"


HISTORY = History(sections=sections, note=NOTE, member="run", members="runs", shared=shared, no_change=NO_CHANGE,
                  version=VERSION)
