"""The ``ncu-profile`` kind's per-kernel charts: profiled time, speed of light (SM, memory, L1,
L2, DRAM as % of peak), warp stalls, and memory against SM throughput; each kernel named by its
short name (claims/kernel_names.py), as text in the SVG. The kind's page (kind.py)
puts them on its page, beside its roofline."""

from __future__ import annotations

from typing import Any

from ikreport.analysis.ncu.summary import HIGH_PCT, LATENCY_PCT, bound_label
from ikreport.claims.kernel_names import distinct_kernel_labels, short_kernel
from ikreport.formatting import fmt_duration_us, plural
from ikreport.kinds.base import MAX_CHART_KERNELS, MAX_TABLE_KERNELS, BarChart, ChartMakers, PageContext, XYChart
from ikreport.kinds.ncu_profile.measured_peak import memory_pct
from ikreport.kinds.ncu_profile.stalls import stall_shares
from ikreport.kinds.ncu_profile.data import first_launch

# (scale from µs, unit): the time chart's unit is the largest that keeps its longest bar at 1 or more
TIME_UNITS = ((1e6, "s"), (1e3, "ms"), (1.0, "µs"))
# ncu's speed-of-light section: compute (SM), memory (its busiest memory unit), then each level
# L1 is read as ncu's section gives it: % of peak over the cycles L1/TEX was active, not over all
# elapsed cycles as the others are, so its bar says so and the chart notes why
L1_ACTIVE = "L1 (active cycles)"
SOL_UNITS = (("SM", "sm_pct"), ("memory", "memory_pct"), (L1_ACTIVE, "l1_pct"), ("L2", "l2_pct"),
             ("DRAM", "dram_pct"))
L1_NOTE = ("L1 is % of its peak over the cycles L1/TEX was active (l1tex__throughput"
           ".avg.pct_of_peak_sustained_active, as ncu's speed-of-light section gives it); SM, memory, L2 and DRAM are "
           "over all elapsed cycles (pct_of_peak_sustained_elapsed). A unit busy for part of the kernel reads higher on "
           "the active basis than it would on the elapsed one.")


def profile_charts(data: dict[str, Any], page: PageContext, us: int | None,
                   peak_gbs: float | None = None) -> list[Any]:
    """Time by kernel, speed of light by kernel, stalls by kernel, memory against SM; ``us`` is
    the precision of the page's durations; ``peak_gbs``, a measured peak of the GPU model that
    judges a launch with DRAM bytes/s but no memory % (measured_peak.py). A chart of
    one bar or one point is not drawn: the tables say it better."""
    out = []
    timed = [k for k in data["kernels"] if k["total_us"]][:MAX_CHART_KERNELS]
    if len(timed) > 1:
        scale, unit = next((s, u) for s, u in TIME_UNITS if timed[0]["total_us"] >= s or u == "µs")
        labels = distinct_kernel_labels([k["kernel"] for k in timed])
        rows = [{"label": label, "total": round(k["total_us"] / scale, 6), "unit": unit, "launches": k["launches"]}
                for label, k in zip(labels, timed)]
        out.append(page.charts.render(
            "time-by-kernel", "Profiled GPU time by kernel",
            f"Bar chart of profiled GPU time in {unit} for the "
            f"{plural(len(rows), 'longest-running kernel', 'longest-running kernels')}; "
            f"the longest is {labels[0]} at {fmt_duration_us(timed[0]['total_us'], us)}.",
            rows))
    out += _speed_of_light(data, page) + _stalls(data, page)
    points = []
    for s in (first_launch(data, k) for k in data["kernels"][:MAX_TABLE_KERNELS]):
        mem = memory_pct(s, peak_gbs)
        if mem is None or s.get("sm_pct") is None:
            continue
        points.append({"label": short_kernel(s["kernel"]), "memory_pct": mem,
                       "sm_pct": s["sm_pct"], "bound": bound_label(mem, s["sm_pct"])})
    if len(points) > 1:
        out.append(page.charts.render(
            "throughput", "Memory vs SM throughput",
            f"Scatter plot of memory against SM throughput (% of peak) for the first launch of "
            f"{plural(len(points), 'kernel', 'kernels')}, with the {LATENCY_PCT:g}% and {HIGH_PCT:g}% lines of "
            "ncu's SOLBottleneck thresholds.", points))
    return out


def _speed_of_light(data: dict[str, Any], page: PageContext) -> list[Any]:
    """Per kernel, the first launch's SM, memory, L1, L2 and DRAM throughput as % of peak: the first
    thing an engineer reads in ncu. A unit the export lacks is left out, never drawn as 0."""
    kernels = [k for k in data["kernels"][:MAX_CHART_KERNELS]
               if any(first_launch(data, k).get(key) is not None for _, key in SOL_UNITS)]
    if not kernels:
        return []
    labels = distinct_kernel_labels([k["kernel"] for k in kernels])
    rows = [{"label": label, "unit": name, "pct": first_launch(data, k)[key]}
            for label, k in zip(labels, kernels) for name, key in SOL_UNITS
            if first_launch(data, k).get(key) is not None]
    units = [name for name, _ in SOL_UNITS if any(r["unit"] == name for r in rows)]
    missing = [name for name, _ in SOL_UNITS if name not in units]
    alt = (f"Bar chart of {', '.join(units)} throughput as % of peak for the first launch of "
           f"{plural(len(kernels), 'kernel', 'kernels')}"
           + (f"; {', '.join(missing)} not in the export." if missing else "."))
    notes = ({"text": L1_NOTE},) if L1_ACTIVE in units else ()
    if notes:
        alt = alt[:-1] + "; L1 over its active cycles, the others over elapsed cycles."
    return [page.charts.render("speed-of-light", "Speed of light by kernel (first launch, % of peak)", alt, rows,
                               notes)]


def _stalls(data: dict[str, Any], page: PageContext) -> list[Any]:
    """Per kernel whose export gives stall shares, the first launch's top stalls as % of
    warp-active cycles (stalls.stall_shares, which the stall claim reads too)."""
    shares = [(k, stall_shares(first_launch(data, k))) for k in data["kernels"]]
    kernels = [(k, top) for k, top in shares if top][:MAX_CHART_KERNELS]
    if not kernels:
        return []
    labels = distinct_kernel_labels([k["kernel"] for k, _ in kernels])
    rows = [{"label": label, "reason": s["reason"], "share": s["share_pct"]}
            for label, (_, top) in zip(labels, kernels) for s in top]
    sampled = {(first_launch(data, k).get("stall_states") or {}).get("source") == "pcsamp" for k, _ in kernels}
    whole = {frozenset({True}): "PC samples", frozenset({False}): "warp-active cycles"}.get(
        frozenset(sampled), "warp-active cycles or PC samples")
    alt = (f"Stacked bar chart of the top warp-stall reasons, as % of {whole}, for the first launch "
           f"of {plural(len(kernels), 'kernel', 'kernels')}.")
    chart = "stalls-sampled" if whole == "PC samples" else "stalls"
    return [page.charts.render(chart, f"Warp-stall reasons by kernel (first launch, % of {whole})", alt, rows)]


# Each chart's spec is made by altair from its shape alone (data is referenced by name): see charts/render.py.

# The bar charts are drawn by charts/bars.py from these declarations; kernel names come cut in
# Python (distinct_kernel_labels, at most 48 characters, at a boundary), so the SVG holds each
# whole label as text a screen reader and grep can find.
TIME_BY_KERNEL = BarChart(value="total", axis_title="profiled GPU time ({unit})", value_unit="{unit}")
SPEED_OF_LIGHT = BarChart(value="pct", axis_title="% of peak (first launch)", value_unit="%", series="unit",
                          series_order=tuple(name for name, _ in SOL_UNITS), domain=(0.0, 100.0), step=10,
                          legend_title="unit")
STALLS = BarChart(value="share", axis_title="% of warp-active cycles", value_unit="%", series="reason",
                  stacked=True, legend_title="stall reason")
STALLS_SAMPLED = BarChart(value="share", axis_title="% of PC samples", value_unit="%", series="reason",
                          stacked=True, legend_title="stall reason")


THROUGHPUT = XYChart(x="memory_pct", y="sm_pct", x_title="memory throughput (% of peak)",
                     y_title="SM throughput (% of peak)", domain=(0.0, 100.0), colour="bound",
                     colour_order=("memory-bound", "compute-bound", "balanced", "latency-bound"), legend_title="label",
                     rules=(LATENCY_PCT, HIGH_PCT))


CHARTS: ChartMakers = {"time-by-kernel": TIME_BY_KERNEL, "throughput": THROUGHPUT,
                       "speed-of-light": SPEED_OF_LIGHT, "stalls": STALLS, "stalls-sampled": STALLS_SAMPLED}
