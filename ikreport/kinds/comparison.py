"""The ``comparison`` kind: two profiles compared kernel by kernel (commands/compare.py writes
it) — its claims (the overall count and each kernel's verdict, citing the comparison and both
profiles), its page and its ratio chart."""

from __future__ import annotations

from typing import Any

from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import fmt_duration_us, plural
from ikreport.kinds.base import MAX_CHART_KERNELS, Facts, Kind, PageContext, Tables, chart_label, na, rows_data

NAME = "comparison"

CAVEAT_VERDICT = ("B is compared with A. FASTER or SLOWER needs a median change beyond the threshold and no "
                  "overlap between the two sets of launch durations; otherwise the verdict stays UNDECIDED.")
MAX_KERNEL_CLAIMS = 10


def comparison_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """The count of verdicts, then one claim per matched kernel (the first MAX_KERNEL_CLAIMS)."""
    data = record["data"]
    cites = [record_id, data["a"], data["b"]]
    counts = ", ".join(f"{n} {v}" for v, n in data["verdicts"].items()) or "no kernels"
    text = f"Of {plural(len(data['kernels']), 'kernel', 'kernels')}: {counts}."
    if not data["like_for_like"]:
        fields = ", ".join(f"{d['field']} ({d['why']})" for d in data["differences"])
        text += f" The profiles are not like-for-like ({fields}), so no difference is called."
    claims = [make_claim("comparison-summary", "", record_id, text, cites, [CAVEAT_VERDICT], records)]
    for k in [k for k in data["kernels"] if k["ratio"] is not None][:MAX_KERNEL_CLAIMS]:
        text = (f"{short_kernel(k['kernel'])}: {fmt_duration_us(k['b_median_us'])} in B against "
                f"{fmt_duration_us(k['a_median_us'])} in A (median of {plural(k['launches'], 'matched launch', 'matched launches')}, "
                f"B/A {k['ratio']:.3f}): {k['verdict']}, {k['reason']}.")
        claims.append(make_claim("comparison-kernel", k["kernel"], record_id, text, cites, [CAVEAT_VERDICT],
                                 records, k["kernel"]))
    return claims


def comparison_view(record: Record, page: PageContext) -> tuple[Facts, Tables]:
    """The page's facts (A, B, threshold) and tables (what differs, each kernel's verdict)."""
    d = record["data"]
    facts: Facts = [
        ("A (before)", f"[{d['a'][:8]}] {page.ref(d['a'])['title']}"),
        ("B (after)", f"[{d['b'][:8]}] {page.ref(d['b'])['title']}"),
        ("threshold", f"{d['threshold_pct']:g}% median change, at least {d['min_samples']} matched launches per side"),
        ("like-for-like", "yes" if d["like_for_like"] else "no: no difference is called"),
    ]
    tables: Tables = []
    if d["differences"]:
        tables.append({"title": "What differs between A and B", "note": "Each of these must be recorded and equal "
                       "for a comparison to be like-for-like.", "columns": ["field", "A", "B", "why"],
                       "rows": [[x["field"], na(x["a"]), na(x["b"]), x["why"]] for x in d["differences"]]})
    matched = [k for k in d["kernels"] if k["ratio"] is not None]
    rank = {id(k): str(i + 1) for i, k in enumerate(matched)}  # as the chart numbers its bars
    tables.append({"title": "Kernels", "note": "", "columns": ["#", "kernel", "launches", "A median", "B median", "B/A",
                                                              "verdict"],
                   "rows": [[rank.get(id(k), ""), k["kernel"], str(k["launches"]), fmt_duration_us(k["a_median_us"]),
                             fmt_duration_us(k["b_median_us"]), "n/a" if k["ratio"] is None else f"{k['ratio']:.3f}",
                             k["verdict"]] for k in d["kernels"]]})
    return facts, tables


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """Facts, tables and the B/A ratio chart."""
    facts, tables = comparison_view(record, page)
    return {"facts": facts, "tables": tables, "charts": _ratio_chart(record, page)}


def _ratio_chart(record: Record, page: PageContext) -> list[Any]:
    rows = [{"label": chart_label(i), "ratio": k["ratio"], "verdict": k["verdict"]}
            for i, k in enumerate(k for k in record["data"]["kernels"] if k["ratio"] is not None)][:MAX_CHART_KERNELS]
    if not rows:
        return []
    alt = (f"Bar chart of the B/A ratio of median kernel durations for {plural(len(rows), 'kernel', 'kernels')}; "
           "below 1 is faster in B.")
    return [page.charts.render("comparison-ratio", "B/A median duration by kernel (bars numbered as in the kernels table)",
                               alt, rows)]


def _comparison_ratio() -> dict[str, Any]:
    import altair as alt

    bars = alt.Chart(alt.Data(name="rows")).mark_bar().encode(
        x=alt.X("ratio:Q", title="B/A median duration (below 1: faster in B)"),
        y=alt.Y("label:N", sort=None, title=None),
        color=alt.Color("verdict:N", sort=["FASTER", "SAME", "SLOWER", "UNDECIDED"]),
    )
    one = alt.Chart(alt.Data(values=[{"x": 1}])).mark_rule(color="#888", strokeDash=[4, 4]).encode(x="x:Q")
    return alt.layer(bars, one).properties(width=420, height=alt.Step(18)).to_dict(validate=False)


KIND = Kind(NAME, rules=(comparison_claims,), view=view,
            charts={"comparison-ratio": (_comparison_ratio, rows_data)})
