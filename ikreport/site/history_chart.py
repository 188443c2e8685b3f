"""The chart of a history page (site/history.py): each profile's median duration of a kernel
with its interval bar, in order of collection, changes coloured and each point linking to its
record. Kept apart from history.py so that site/charts.py can list it without a cycle."""

from __future__ import annotations

from typing import Any

from ikreport.kinds.base import rows_data


def _history() -> dict[str, Any]:
    import altair as alt

    base = alt.Chart(alt.Data(name="rows")).encode(
        x=alt.X("label:N", sort=None, title="profile, in order of collection"))
    bars = base.mark_rule(strokeWidth=2, color="#888").encode(
        y=alt.Y("low_us:Q", title="median duration (µs), 95% interval", scale=alt.Scale(zero=False)), y2="high_us:Q")
    points = base.mark_point(filled=True, size=60).encode(
        y="median_us:Q", href="href:N",
        color=alt.Color("change:N", sort=["no change", "FASTER", "SLOWER"], title="change from the one before"))
    return alt.layer(bars, points).properties(width=alt.Step(28), height=220).to_dict(validate=False)


CHARTS = {"history": (_history, rows_data)}
