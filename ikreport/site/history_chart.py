"""The chart of a history page (site/history.py): each profile's median duration of a kernel
with its interval bar, in order of collection, changes coloured and each point linking to its
record. Kept apart from history.py so that site/charts.py can list it without a cycle."""

from __future__ import annotations

from typing import Any

from ikreport.kinds.base import rows_data


def _history() -> dict[str, Any]:
    import altair as alt

    # each mark's aria-label is its row's sentence (units, interval ends named), not raw field names
    base = alt.Chart(alt.Data(name="rows")).encode(
        x=alt.X("label:N", sort=None, title="profile, in order of collection"), description="description:N")
    bars = base.mark_rule(strokeWidth=2, color="#888").encode(
        y=alt.Y("low_us:Q", title="95% interval, low end (µs)", scale=alt.Scale(zero=False),
                axis=alt.Axis(title="median duration (µs), 95% interval")),
        y2=alt.Y2("high_us:Q", title="95% interval, high end (µs)"))
    points = base.mark_point(filled=True, size=60).encode(
        # the same axis title as the bars' layer: layers with different ones get them joined
        y=alt.Y("median_us:Q", title="median duration (µs)", axis=alt.Axis(title="median duration (µs), 95% interval")),
        href=alt.Href("href:N", title="record page"),
        color=alt.Color("change:N", sort=["no change", "FASTER", "SLOWER"], title="change from the one before"))
    return alt.layer(bars, points).properties(width=alt.Step(28), height=220).to_dict(validate=False)


CHARTS = {"history": (_history, rows_data)}
