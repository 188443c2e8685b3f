"""Compare two serving-benchmark records, A (before) and B (after), latency by latency (pure,
except ``compare_serving_records``).

Time to first token and time per output token are compared through the 95% interval of the B/A
ratio of their medians over the requests of each run, by the rule kernels are compared by
(analysis/ratio_interval.py): the requests are the unit, one run a side. That needs each
request's latency, which a load generator keeps only when asked (vLLM's ``--save-detailed``);
a record without them gives UNDECIDED and says so, since the tool's own percentiles give no
interval. Two runs that differ in GPU, model or load (commands/like_for_like.py
``serving_fields``) give UNDECIDED too.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from ikreport.analysis.ratio_interval import CONFIDENCE, METHOD, call, ratio_interval
from ikreport.commands import like_for_like
from ikreport.commands.like_for_like import number_cell as cell
from ikreport.kinds.comparison import DATA_VERSION, NAME as COMPARISON, ratio_text
from ikreport.kinds.serving_benchmark import NAME as SERVING_BENCHMARK
from ikreport.kinds.serving_history import samples_of
from ikreport.store import records
from ikreport.store.archive import Archive

Record = Mapping[str, Any]
# (key, what it is, the per-request samples in data.samples)
METRICS = (("ttft", "time to first token", "ttft_ms"), ("tpot", "time per output token", "tpot_ms"))
NOT_LIKE = "the runs are not like-for-like"
LIMIT_ONE_RUN = ("One run a side: the interval is over the requests of one run, which share the server's load and "
                 "state and are not independent, so run-to-run variance is not captured.")
LIMIT_CLIENT = ("Client-side timing: the load generator measured each request from sending it to receiving tokens, "
                "so network, HTTP, queueing and tokenisation are in every latency compared.")
NO_SAMPLES = "{who} kept no per-request latencies; the tool's percentiles cannot give an interval"


def _lacking(records_: list[tuple[str, Record]], key: str, label: str) -> str:
    """Why no interval: 'record 1a2b3c4d5e6f kept no per-request latencies; …' ('' when both kept them)."""
    none = [rid[:12] for rid, r in records_ if not r["data"].get("samples")]
    empty = [rid[:12] for rid, r in records_ if r["data"].get("samples") and not samples_of(r, key)]
    if none:
        who = f"record {none[0]}" if len(none) == 1 else f"records {none[0]} and {none[1]}"
        return NO_SAMPLES.format(who=who)
    if empty:
        who = f"record {empty[0]}" if len(empty) == 1 else f"records {empty[0]} and {empty[1]}"
        return f"{who} kept no per-request {label}; the tool's percentiles cannot give an interval"
    return ""


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def compare_serving(a_id: str, a: Record, b_id: str, b: Record, threshold_pct: float,
                    min_samples: int) -> dict[str, Any]:
    """Each latency's medians, B/A ratio, interval and verdict of run B against run A."""
    names = like_for_like.SERVING_FIELDS
    fields, diffs = like_for_like.compare_fields(
        like_for_like.side([like_for_like.serving_fields(a)], names),
        like_for_like.side([like_for_like.serving_fields(b)], names), names, like_for_like.SERVING_LENIENT)
    metrics = []
    for key, label, sample_key in METRICS:
        va, vb = samples_of(a, sample_key), samples_of(b, sample_key)
        why = _lacking([(a_id, a), (b_id, b)], sample_key, label)
        if why:
            # the tool's own medians, shown beside the reason: no interval, so no verdict
            ma, mb = a["data"].get(f"median_{key}_ms"), b["data"].get(f"median_{key}_ms")
            ratio = round(mb / ma, 4) if isinstance(ma, (int, float)) and isinstance(mb, (int, float)) and ma > 0 \
                else None
            metrics.append({"metric": key, "label": label, "n_a": len(va), "n_b": len(vb), "a_median_ms": ma,
                            "b_median_ms": mb, "median_of": "tool", "ratio": ratio, "ratio_ci": None,
                            "interval_method": "none", "verdict": "UNDECIDED", "reason": why})
            continue
        interval = ratio_interval(va, vb)
        verdict, reason = call(interval, threshold_pct, min_samples, "requests")
        if diffs:
            verdict, reason = "UNDECIDED", NOT_LIKE
        ci = None if interval.low is None or interval.high is None else [round(interval.low, 4), round(interval.high, 4)]
        metrics.append({"metric": key, "label": label, "n_a": interval.n_a, "n_b": interval.n_b,
                        "a_median_ms": _median(va), "b_median_ms": _median(vb), "median_of": "requests",
                        "ratio": round(interval.ratio, 4), "ratio_ci": ci, "interval_method": interval.method,
                        "verdict": verdict, "reason": reason})
    counts: dict[str, int] = {}
    for m in metrics:
        counts[m["verdict"]] = counts.get(m["verdict"], 0) + 1
    return {"version": DATA_VERSION, "compared": SERVING_BENCHMARK, "unit": "request",
            "confidence_pct": round(CONFIDENCE * 100), "interval": METHOD, "threshold_pct": threshold_pct,
            "min_samples": min_samples, "like_for_like": not diffs, "method_fields": fields, "differences": diffs,
            "metrics": metrics, "verdicts": dict(sorted(counts.items()))}


def markdown_table(result: dict[str, Any]) -> str:
    """The comparison as ``ikreport compare`` prints it: how each run was made, then one row per latency."""
    lines = [f"A (before) = 1 run ({result['a'][:8]}); B (after) = 1 run ({result['b'][:8]})",
             f"threshold {result['threshold_pct']:g}%; {result['confidence_pct']}% interval of B/A over requests "
             f"({result['interval']}); at least {result['min_samples']} requests a side", "", LIMIT_ONE_RUN, "",
             *like_for_like.method_lines(result, "field")]
    lines += [f"| latency | A latencies kept | B latencies kept | A median (ms) | B median (ms) | B/A [{result['confidence_pct']}% "
              "interval] | verdict |", "|---|---:|---:|---:|---:|---:|---|"]
    for m in result["metrics"]:
        lines.append(f"| {m['label']} | {m['n_a']} | {m['n_b']} | {cell(m['a_median_ms'])} | {cell(m['b_median_ms'])} | "
                     f"{ratio_text(m) if m['ratio'] is not None else ''} | {m['verdict']} |")
    notes = [f"- {m['label']}: UNDECIDED: {m['reason']}" + (" (the medians shown are the tool's own)"
                                                           if m["median_of"] == "tool" else "")
             for m in result["metrics"] if m["verdict"] == "UNDECIDED" and m["reason"] != NOT_LIKE]
    if notes:
        lines += [""] + notes
    return "\n".join(lines) + "\n"


def compare_serving_records(archive: Archive, a_id: str, a: Record, b_id: str, b: Record, threshold_pct: float,
                            min_samples: int, write: bool = True) -> tuple[str | None, dict[str, Any]]:
    """Write the ``comparison`` record of run B against run A (no wall-clock time: same inputs,
    same id); with ``write`` false, only what it would hold (its id None)."""
    result = {"a": a_id, "b": b_id, "a_runs": [a_id], "b_runs": [b_id],
              **compare_serving(a_id, a, b_id, b, threshold_pct, min_samples)}
    limitations = ["A comparison inherits the limitations of every record it cites.",
                   f"A verdict needs at least {min_samples} requests a side with their latencies kept and the "
                   f"{result['confidence_pct']}% interval of the B/A ratio of medians wholly beyond {threshold_pct:g}% "
                   "(FASTER, SLOWER) or wholly within it (SAME); otherwise it is UNDECIDED.",
                   LIMIT_ONE_RUN, LIMIT_CLIENT]
    lacking = sorted({m["reason"] for m in result["metrics"] if m["median_of"] == "tool"})
    limitations += [f"{why[0].upper()}{why[1:]}." for why in lacking]
    if not result["like_for_like"]:
        fields = ", ".join(f"{d['field']} ({d['why']})" for d in result["differences"])
        limitations.append(f"Not like-for-like, so no difference is called: {fields}.")
    record = records.new_record(
        COMPARISON, f"{b['title']} against {a['title']}", collected_at=None, subject=b["subject"],
        method={"tool": "ikreport compare", "tool_version": None, "command": None,
                "options": {"threshold_pct": threshold_pct, "min_samples": min_samples},
                "how": "derived from the cited serving benchmarks"},
        data=result, limitations=limitations, cites=sorted({a_id, b_id}),
    )
    return (archive.put_record(record) if write else None), result
