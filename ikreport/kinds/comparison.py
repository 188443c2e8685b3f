"""The ``comparison`` kind: two profiles compared kernel by kernel (commands/compare.py writes
it) — its claims (the overall count and each kernel's verdict, citing the comparison and both
profiles), its page and its ratio chart."""

from __future__ import annotations

from typing import Any

from ikreport.claims.kernel_names import distinct_kernel_labels, short_kernel, short_title
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import distinct_digits, fmt_duration_us, plural
from ikreport.kinds.base import MAX_CHART_KERNELS, Facts, Kind, PageContext, Tables, na, rows_data

NAME = "comparison"

CAVEAT_VERDICT = ("B is compared with A. FASTER or SLOWER needs a median change beyond the threshold and no "
                  "overlap between the two sets of launch durations; otherwise the verdict stays UNDECIDED.")
MAX_KERNEL_CLAIMS = 10
SIDE_TITLE = 60  # each side's title in the heading "B against A"


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
    us = _digits(data)
    for k in [k for k in data["kernels"] if k["ratio"] is not None][:MAX_KERNEL_CLAIMS]:
        text = (f"{short_kernel(k['kernel'])}: {fmt_duration_us(k['b_median_us'], us)} in B against "
                f"{fmt_duration_us(k['a_median_us'], us)} in A "
                f"(median of {plural(k['launches'], 'matched launch', 'matched launches')}, "
                f"B/A {k['ratio']:.3f}): {k['verdict']}, {k['reason']}.")
        claims.append(make_claim("comparison-kernel", k["kernel"], record_id, text, cites, [CAVEAT_VERDICT],
                                 records, k["kernel"]))
    return claims


def comparison_view(record: Record, page: PageContext) -> tuple[Facts, Tables]:
    """The page's facts (A, B, threshold) and tables (what differs, each kernel's verdict)."""
    d = record["data"]
    us = _digits(d)
    facts: Facts = [  # A and B are linked under the heading (view)
        ("verdict rule", f"a median change beyond {d['threshold_pct']:g}%, at least {d['min_samples']} matched launches "
                         "per side"),
        ("like-for-like", "yes" if d["like_for_like"] else "no: no difference is called"),
    ]
    tables: Tables = []
    if d["differences"]:
        tables.append({"title": "What differs between A and B", "note": "Each of these must be recorded and equal "
                       "for a comparison to be like-for-like.", "columns": ["field", "A", "B", "why"],
                       "rows": [[x["field"], na(x["a"]), na(x["b"]), x["why"]] for x in d["differences"]]})
    matched = [k for k in d["kernels"] if k["ratio"] is not None]
    rank = {id(k): str(i + 1) for i, k in enumerate(matched)}  # the chart draws them in this order
    tables.append({"title": "Kernels", "note": "", "columns": ["#", "kernel", "launches", "A median", "B median", "B/A",
                                                              "verdict"],
                   "rows": [[rank.get(id(k), ""), k["kernel"], str(k["launches"]), fmt_duration_us(k["a_median_us"], us),
                             fmt_duration_us(k["b_median_us"], us), "n/a" if k["ratio"] is None else f"{k['ratio']:.3f}",
                             k["verdict"]] for k in d["kernels"]]})
    return facts, tables


def _digits(data: dict[str, Any]) -> int | None:
    """The precision at which no two different medians on the page read the same."""
    return distinct_digits([m for k in data["kernels"] for m in (k["a_median_us"], k["b_median_us"])], fmt_duration_us)


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """Facts, tables and the B/A ratio chart, under the heading "B against A" by their short
    titles, each linked (issue 16 item 10)."""
    facts, tables = comparison_view(record, page)
    a, b = page.ref(record["data"]["a"]), page.ref(record["data"]["b"])
    return {"facts": facts, "tables": tables, "charts": _ratio_chart(record, page),
            "heading": f"{short_title(b['title'], SIDE_TITLE)} against {short_title(a['title'], SIDE_TITLE)}",
            "versus": {"a": {**a, "title": short_title(a["title"], SIDE_TITLE)},
                       "b": {**b, "title": short_title(b["title"], SIDE_TITLE)}}}


def _ratio_chart(record: Record, page: PageContext) -> list[Any]:
    matched = [k for k in record["data"]["kernels"] if k["ratio"] is not None][:MAX_CHART_KERNELS]
    if not matched:
        return []
    rows = [{"label": label, "ratio": k["ratio"], "verdict": k["verdict"]}
            for label, k in zip(distinct_kernel_labels([k["kernel"] for k in matched]), matched)]
    alt = (f"Bar chart of the B/A ratio of median kernel durations for {plural(len(rows), 'kernel', 'kernels')}; "
           "below 1 is faster in B.")
    return [page.charts.render("comparison-ratio", "B/A median duration by kernel", alt, rows)]


def _comparison_ratio() -> dict[str, Any]:
    import altair as alt

    bars = alt.Chart(alt.Data(name="rows")).mark_bar().encode(
        x=alt.X("ratio:Q", title="B/A median duration (below 1: faster in B)"),
        y=alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=360)),
        color=alt.Color("verdict:N", sort=["FASTER", "SAME", "SLOWER", "UNDECIDED"]),
    )
    # the reference at 1.0, labelled, so that a bar reads as faster or slower at a glance
    same = alt.Chart(alt.Data(values=[{"x": 1, "text": "1.0 = no change"}]))
    one = same.mark_rule(color="#555", strokeDash=[4, 4]).encode(x="x:Q")
    label = same.mark_text(align="left", baseline="bottom", dx=3, dy=-2, color="#555").encode(
        x="x:Q", y=alt.value(0), text="text:N")
    return alt.layer(bars, one, label).properties(width=420, height=alt.Step(18)).to_dict(validate=False)


KIND = Kind(NAME, rules=(comparison_claims,), view=view,
            charts={"comparison-ratio": (_comparison_ratio, rows_data)})
