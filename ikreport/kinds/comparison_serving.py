"""A comparison of two serving benchmarks (commands/compare_serving.py writes it, a ``comparison``
record whose data has ``metrics``): its claims, the page's facts and tables, the rows of its ratio
chart and the lines ``show`` prints, latency by latency. kinds/comparison.py hands such records
here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import distinct_digits, fmt_duration_us
from ikreport.kinds.base import Facts, Tables
from ikreport.kinds.comparison_text import field_text, ratio_text, summary_text
from ikreport.terminal import safe_text as t

CAVEAT_VERDICT = ("Run B is compared with run A through the 95% interval of the B/A ratio of median latencies over "
                  "each run's requests: FASTER or SLOWER when the whole interval lies beyond the threshold, SAME when "
                  "it lies wholly within it, UNDECIDED otherwise, and whenever a run kept no per-request latencies.")


def _digits(data: Mapping[str, Any]) -> int | None:
    """The precision at which no two different medians (µs) on the page read the same."""
    return distinct_digits([m[f] * 1e3 for m in data["metrics"] for f in ("a_median_ms", "b_median_ms")
                            if m[f] is not None], fmt_duration_us)


def _ms(value: float | None, digits: int | None) -> str:
    return fmt_duration_us(value * 1e3, digits) if value is not None else "n/a"


def claims(record_id: str, record: Record, records: RecordSet, cites: list[str]) -> list[Claim]:
    """The verdicts, then one claim per latency: medians, B/A with its interval, the verdict and why."""
    data = record["data"]
    text = summary_text(data, f"{len(data['metrics'])} latencies of the two serving runs", "runs")
    out = [make_claim("comparison-summary", "", record_id, text, cites, [CAVEAT_VERDICT], records)]
    digits = _digits(data)
    for m in data["metrics"]:
        of = (f"median of {m['n_a']} requests in A and {m['n_b']} in B" if m["median_of"] == "requests"
              else "the load generator's own medians")
        ratio = f", B/A {ratio_text(m)}" + (f", {data['confidence_pct']}% interval" if m["ratio_ci"] else "") \
            if m["ratio"] is not None else ""
        text = (f"{m['label'].capitalize()}: {_ms(m['b_median_ms'], digits)} in B against "
                f"{_ms(m['a_median_ms'], digits)} in A ({of}{ratio}): {m['verdict']}, {m['reason']}.")
        out.append(make_claim("comparison-latency", m["metric"], record_id, text, cites, [CAVEAT_VERDICT], records))
    return out


def facts_tables(data: Mapping[str, Any]) -> tuple[Facts, Tables]:
    """The page's facts (the rule, the unit) and tables (how each run was made, each latency's verdict)."""
    facts: Facts = [
        ("verdict rule", f"{data['confidence_pct']}% interval of the B/A ratio of median latencies over requests "
                         f"({data['interval']}): beyond {data['threshold_pct']:g}% FASTER or SLOWER, within it SAME, "
                         f"else UNDECIDED; at least {data['min_samples']} requests a side, their latencies kept"),
        ("unit of the interval", "the request: one run a side, so run-to-run variance is not captured"),
        ("like-for-like", "yes" if data["like_for_like"] else "no: no difference is called")]
    digits = _digits(data)
    tables: Tables = [
        {"title": "How each run was made", "note": "observed: the load generator's file says it; stated: the "
         "importer gave it; missing: not recorded. GPU and model must be recorded and equal, the load equal where "
         "either file records it.", "columns": ["field", "A", "B"],
         "rows": [[f["field"], field_text(f["a"], f["a_source"]), field_text(f["b"], f["b_source"])]
                  for f in data["method_fields"]]},
        {"title": "Latencies", "note": "; ".join(f"{m['label']}: {m['reason']}" for m in data["metrics"]
                                                 if m["median_of"] == "tool"),
         "columns": ["latency", "A latencies kept", "B latencies kept", "A median", "B median",
                     f"B/A [{data['confidence_pct']}% interval]", "verdict"],
         "rows": [[m["label"], str(m["n_a"]), str(m["n_b"]), _ms(m["a_median_ms"], digits),
                   _ms(m["b_median_ms"], digits), ratio_text(m), m["verdict"]] for m in data["metrics"]]}]
    return facts, tables


def chart_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ratio chart's rows: each latency with a ratio, its interval where there is one."""
    return [{"label": m["label"], "ratio": m["ratio"], "verdict": m["verdict"],
             "low": (m["ratio_ci"] or [m["ratio"]] * 2)[0], "high": (m["ratio_ci"] or [m["ratio"]] * 2)[1]}
            for m in data["metrics"] if m["ratio"] is not None]


def show(data: Mapping[str, Any]) -> list[str]:
    """``ikreport show``'s lines: the runs, the rule, the verdicts, then each latency."""
    lines = [f"  A (before): 1 run: {data['a'][:12]}", f"  B (after):  1 run: {data['b'][:12]}",
             f"  rule:      threshold {data['threshold_pct']:g}%, at least {data['min_samples']} requests a side"
             + ("" if data["like_for_like"] else "; not like-for-like, so no difference is called"),
             "  verdicts:  " + ", ".join(f"{n} {t(v)}" for v, n in data["verdicts"].items()),
             f"  latencies: B/A [{data['confidence_pct']}% interval], latencies kept in A and B, verdict"]
    for m in data["metrics"]:
        counts = f"{m['n_a']}/{m['n_b']}"
        lines.append(f"    {ratio_text(m):<24} {counts:>9}  {t(m['verdict']):<10} {m['label']}")
    return lines
