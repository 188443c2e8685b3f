"""The ``ncu-profile`` kind: kernels profiled by Nsight Compute (collect ncu, import ncu) — its
facts for ``show``/``list`` and the index, its page and its charts (time by kernel, throughput,
roofline), and its ``Kind``; its claims are claims.py's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.analysis.ncu.summary import FULL_OCCUPANCY_PCT, bound_label
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Record, RecordSet
from ikreport.formatting import fmt_duration_us, fmt_gbs, fmt_number, fmt_pct, plural
from ikreport.kinds.base import MAX_TABLE_KERNELS, Kind, PageContext, Tables
from ikreport.kinds.ncu_profile.charts import CHARTS, profile_charts
from ikreport.kinds.ncu_profile.claims import (MAX_TABLE_LAUNCHES, clock_claims, duration_digits, judged_launches,
                                               kernel_label, of_peak_claims, profile_claims, rate_digits)
from ikreport.kinds.ncu_profile.data import LAUNCH_TABLE_ROLE
from ikreport.kinds.ncu_profile.history import HISTORY
from ikreport.kinds.ncu_profile.measured_peak import measured_fill, measured_peak, memory_pct
from ikreport.kinds.ncu_profile.roofline import ROOFLINE, roofline_chart
from ikreport.kinds.peak_bandwidth import measured_peak_for
from ikreport.terminal import safe_text as t

NAME = "ncu-profile"
# an imported profile's limitation that a comparison of several runs a side answers (kinds/comparison.py)
ONE_RUN = "One profile of one run: it shows no run-to-run variance."

DERIVED = " (derived)"  # a duration from elapsed cycles over their clock, not measured (analysis/ncu/clocks.py)


def show(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: the profile's size, then its ten longest kernels, each labelled
    as its page labels it: a launch without memory % judged by its DRAM bytes/s over the
    archive's measured peak of the GPU model, when there is one (then a line names it)."""
    data = record["data"]
    peak_id, peak_gbs = measured_peak(record, records)
    lines = [
        f"  profile:   {plural(data['launch_count'], 'launch', 'launches')} of "
        f"{plural(data['kernel_count'], 'kernel', 'kernels')}, "
        f"{fmt_duration_us(data['profiled_time_us'])} profiled GPU time"
    ]
    kernels = data["kernels"][:10]
    if peak_id and any(measured_fill(s, peak_gbs) is not None for k in kernels for s in judged_launches(data, k)):
        lines.append(f"  memory side, where the export has no memory %: DRAM bytes/s over the measured peak "
                     f"{fmt_gbs(peak_gbs)} ({peak_id[:12]})")
    for k in kernels:
        lines.append(
            f"    {fmt_pct(k['share_pct']):>7}  {fmt_duration_us(k['total_us']):>10}  x{k['launches']:<5} "
            f"{t(kernel_label(data, k, peak_gbs)[0]):<14} {t(k['kernel'][:70])}"
        )
    return lines


def index_row(facts: Mapping[str, Any]) -> dict[str, str]:
    """The index's profile-table cells: launches, profiled time, longest kernel (the facts named
    in ncu_profile.schema.json). Kernels are ranked by time, so a profile without durations
    names none as the longest."""
    longest = facts["top_kernel"] if facts["top_kernel"] and facts.get("top_kernel_us") is not None else None
    return {"launches": str(facts["launch_count"]) if facts["launch_count"] is not None else "",
            "time": fmt_duration_us(facts["profiled_time_us"]),
            "top": short_kernel(longest) if longest else ""}


def _limiter_cell(launch: dict) -> str:
    """The limiter as a table cell: "none" at full theoretical occupancy (a record imported
    before that rule may still name "warps" there), "n/a" when unknown."""
    theoretical = launch.get("occupancy_theoretical_pct")
    if theoretical is not None and theoretical >= FULL_OCCUPANCY_PCT:
        return "none (full occupancy)"
    return launch["occupancy_limiter"] or "n/a"


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """The profile's tables, its charts (time, throughput, roofline) and what changed in its environment."""
    us, peak_gbs = duration_digits(record["data"]), measured_peak(record, page.records)[1]
    return {"profile": _profile_view(record, page, us, peak_gbs),
            "charts": profile_charts(record["data"], page, us, peak_gbs) + roofline_chart(record, page),
            "tables": _environment_changes(record)}


def _profile_view(record: Record, page: PageContext, us: int | None, peak_gbs: float | None) -> dict[str, Any]:
    data = record["data"]
    gbs = rate_digits(data, peak_gbs)
    kernels = [{
        "short": short_kernel(k["kernel"]), "name": k["kernel"], "launches": k["launches"],
        "total": fmt_duration_us(k["total_us"], us) + (DERIVED if k.get("duration_derived") else ""),
        "mean": fmt_duration_us(k["mean_us"], us) + (DERIVED if k.get("duration_derived") else ""),
        "share": fmt_pct(k["share_pct"]), "bound": kernel_label(data, k, peak_gbs)[0],
    } for k in data["kernels"][:MAX_TABLE_KERNELS]]
    table = next((page.blob_href(s) for s in record["sources"] if s["role"] == LAUNCH_TABLE_ROLE), None)
    launches = [{
        "id": s["id"], "short": short_kernel(s["kernel"]), "name": s["kernel"],
        "duration": fmt_duration_us(s["duration_us"], us) + (DERIVED if s.get("duration_derived") else ""),
        "dram_gbs": fmt_gbs(s["dram_gbs"], min(gbs or 3, 3)) + DERIVED if s.get("dram_gbs_derived")
        else fmt_gbs(s["dram_gbs"], gbs),
        "memory": fmt_pct(s["memory_pct"]), "sm": fmt_pct(s["sm_pct"]),
        "occupancy": fmt_pct(s["occupancy_achieved_pct"]), "limiter": _limiter_cell(s),
        "registers": fmt_number(s["registers"]), "grid": s["grid_dims"] or fmt_number(s["grid"]),
        # labels from the launch's own numbers under today's rules: a record imported before a
        # missing side counted as unknown may hold "latency-bound" for it
        "block": s["block_dims"] or fmt_number(s["block"]), "bound": bound_label(memory_pct(s, peak_gbs), s["sm_pct"]),
    } for s in data["launches"][:MAX_TABLE_LAUNCHES]]
    shown = len(launches)
    complete = data.get("launches_complete", True)
    return {
        "size": (f"{plural(data['launch_count'], 'launch', 'launches')} of "
                 f"{plural(data['kernel_count'], 'kernel', 'kernels')}"),
        "time": fmt_duration_us(data["profiled_time_us"], us), "pages": ", ".join(data["pages"]),
        "devices": ", ".join(data["devices"]) or "not named in the export",
        "cc": ", ".join(data["compute_capabilities"]) or "n/a",
        "kernels": kernels, "kernels_more": max(0, data["kernel_count"] - MAX_TABLE_KERNELS),
        # the schema cannot tie launch_count to the table's length: never "-3 more launches"
        "launches": launches, "launches_more": max(0, data["launch_count"] - shown),
        "launches_title": "Launches" if complete else f"The {shown} longest launches",
        "launch_table": table,
        "launch_table_format": "CSV, gzip" if table and table.endswith(".gz") else "CSV",
    }


def _environment_changes(record: Record) -> Tables:
    changes = record["data"].get("environment_changes")
    if not changes:
        return []
    return [{"title": "Environment before and after profiling", "note": "These differ between the two snapshots.",
             "columns": ["GPU", "field", "before", "after"],
             "rows": [[str(c["gpu"]), c["field"], str(c["before"]), str(c["after"])] for c in changes]}]


KIND = Kind(NAME, show=show, rules=(profile_claims, clock_claims, of_peak_claims), view=view,
            charts={"roofline": ROOFLINE, **CHARTS},
            page_inputs=measured_peak_for, index_row=index_row, history=HISTORY)
