"""Gather the pages of a site from the records and their claims (pure: no files)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ikreport.claims.engine import claims_for
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.datasheet import compute_peak_tflops
from ikreport.claims.gpus import measured_peak_for
from ikreport.claims.model import Record, RecordSet
from ikreport.reports.render import RenderedReport
from ikreport.store.profile_data import LAUNCH_TABLE_ROLE, first_launch
from ikreport.formatting import fmt_duration_us, fmt_gbs, fmt_number, fmt_pct, plural, short
from ikreport.site.charts import Chart, ChartRenderer
from ikreport.site.model import Page, claim_view
from ikreport.site.record_views import bandwidth_view, comparison_view, environment_view

MAX_CHART_KERNELS = 15
MAX_TABLE_KERNELS = 50
MAX_TABLE_LAUNCHES = 200
MEDIA_EXT = {"text/csv": ".csv", "text/plain": ".txt", "application/json": ".json"}
AS_TEXT_NOTE = "offered as .txt: a spreadsheet would run some of its cells as formulas"


def chart_label(i: int) -> str:
    """'#3': the kernel's rank, as numbered in the kernels table beside the chart. Names on
    the axis would cost most of a chart's rendering time (vl-convert measures every glyph)."""
    return f"#{i + 1}"


def blob_href(source: dict[str, Any], root: str, published: Mapping[str, str] | None = None) -> str:
    """Where the site offers a blob; ``published`` maps each published blob to its file name
    suffix (site.build decides it), else the suffix of its media type."""
    suffix = published.get(source["id"]) if published else None
    return f"{root}b/{source['id']}{MEDIA_EXT.get(source['media_type'], '') if suffix is None else suffix}"


def _source_note(source: dict[str, Any], published: Mapping[str, str] | None) -> str:
    suffix = published.get(source["id"]) if published else None
    return AS_TEXT_NOTE if suffix is not None and suffix != MEDIA_EXT.get(source["media_type"], "") else ""


def record_page(record_id: str, records: RecordSet, cited_by: dict[str, list[str]],
                charts: ChartRenderer, record_bytes: bytes = b"", published: Mapping[str, str] | None = None) -> Page:
    record = records.whole(record_id)
    root = "../"
    titles = {rid: r["title"] for rid, r in records.records.items()}
    claims = [claim_view(c, root, titles) for c in claims_for(record_id, record, records)]

    def ref(rid: str) -> dict[str, str]:
        known = rid in records.records
        return {"short": short(rid), "id": rid, "title": titles.get(rid, "(not in this archive)"),
                "href": f"{rid}.html" if known else "", "md_href": f"{rid}.md" if known else ""}

    context: dict[str, Any] = {
        "id": record_id,
        "short": short(record_id),
        "record": _record_view(record),
        "claim_groups": _groups(claims),
        "limitations": record["limitations"],
        "sources": [{**s, "short": short(s["id"]), "note": _source_note(s, published),
                     "href": blob_href(s, root, published) if published is None or s["id"] in published else ""}
                    for s in record["sources"]],
        # the exact bytes, for the in-browser hash check where the JSON file cannot be fetched (file://)
        "record_b64": base64.b64encode(record_bytes).decode("ascii"),
        "environment": ref(record["environment"]) if record.get("environment") else None,
        "cites": [ref(c) for c in record["cites"]],
        "supersedes": [{**ref(s["id"]), "reason": s["reason"]} for s in record["supersedes"]],
        "cited_by": [ref(c) for c in cited_by.get(record_id, [])],
        "json_href": f"{record_id}.json",
        "charts": [],
        "profile": None,
        "facts": [],
        "tables": [],
        "superseded_by": None,
    }
    if record["kind"] == "ncu-profile":
        context["profile"] = _profile_view(record, published)
        context["charts"] = _profile_charts(record, charts) + _roofline(record, records, charts)
        context["tables"] = _environment_changes(record)
    elif record["kind"] == "peak-bandwidth":
        context["facts"], context["tables"] = bandwidth_view(record)
        context["charts"] = _bandwidth_charts(record, charts)
    elif record["kind"] == "environment":
        context["facts"], context["tables"] = environment_view(record)
    elif record["kind"] == "comparison":
        context["facts"], context["tables"] = comparison_view(record, ref)
        context["charts"] = _comparison_charts(record, charts)
    newer = _superseded_by(record_id, records)
    if newer:
        context["superseded_by"] = {**ref(newer["data"]["new"]), "reason": newer["data"]["reason"],
                                    "when": newer["collected_at"]}
    return Page(path=f"e/{record_id}", template="record", title=record["title"], root=root, context=context)


def _groups(claims: list[Any]) -> list[dict[str, Any]]:
    """Claims that cite the same records share one list of those records' limitations."""
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for claim in claims:
        key = tuple(c["id"] for c in claim.citations)
        group = groups.setdefault(key, {"limitations": claim.limitations, "claims": []})
        group["claims"].append(claim)
    return list(groups.values())


def _record_view(record: Record) -> dict[str, Any]:
    subject = [(k, v) for k, v in record["subject"].items() if v]
    method = record["method"]
    method_rows = [("tool", method["tool"] + (f" {method['tool_version']}" if method.get("tool_version") else "")),
                   ("how", method["how"])]
    if method.get("command"):
        method_rows.append(("command", " ".join(method["command"])))
    method_rows.extend((k, str(v)) for k, v in sorted(method.get("options", {}).items()))
    return {"title": record["title"], "kind": record["kind"],
            "collected_at": record["collected_at"] or "derived record (no time)",
            "subject": subject, "method": method_rows}


def _profile_view(record: Record, published: Mapping[str, str] | None = None) -> dict[str, Any]:
    data = record["data"]
    kernels = [{
        "short": short_kernel(k["kernel"]), "name": k["kernel"], "launches": k["launches"],
        "total": fmt_duration_us(k["total_us"]), "mean": fmt_duration_us(k["mean_us"]),
        "share": fmt_pct(k["share_pct"]), "bound": k["bound"],
    } for k in data["kernels"][:MAX_TABLE_KERNELS]]
    launches = [{
        "id": s["id"], "short": short_kernel(s["kernel"]), "name": s["kernel"],
        "duration": fmt_duration_us(s["duration_us"]), "dram_gbs": fmt_gbs(s["dram_gbs"]),
        "memory": fmt_pct(s["memory_pct"]), "sm": fmt_pct(s["sm_pct"]),
        "occupancy": fmt_pct(s["occupancy_achieved_pct"]), "limiter": s["occupancy_limiter"] or "n/a",
        "registers": fmt_number(s["registers"]), "grid": s["grid_dims"] or fmt_number(s["grid"]),
        "block": s["block_dims"] or fmt_number(s["block"]), "bound": s["bound"],
    } for s in data["launches"][:MAX_TABLE_LAUNCHES]]
    shown = len(launches)
    complete = data.get("launches_complete", True)
    return {
        "size": (f"{plural(data['launch_count'], 'launch', 'launches')} of "
                 f"{plural(data['kernel_count'], 'kernel', 'kernels')}"),
        "time": fmt_duration_us(data["profiled_time_us"]), "pages": ", ".join(data["pages"]),
        "devices": ", ".join(data["devices"]) or "not named in the export",
        "cc": ", ".join(data["compute_capabilities"]) or "n/a",
        "kernels": kernels, "kernels_more": max(0, data["kernel_count"] - MAX_TABLE_KERNELS),
        # the schema cannot tie launch_count to the table's length: never "-3 more launches"
        "launches": launches, "launches_more": max(0, data["launch_count"] - shown),
        "launches_title": "Launches" if complete else f"The {shown} longest launches",
        "launch_table": next((blob_href(s, "../", published) for s in record["sources"] if s["role"] == LAUNCH_TABLE_ROLE), None),
    }


def _profile_charts(record: Record, charts: ChartRenderer) -> list[Chart]:
    data = record["data"]
    out = []
    timed = [k for k in data["kernels"] if k["total_us"]][:MAX_CHART_KERNELS]
    if timed:
        rows = [{"label": chart_label(i), "kernel": k["kernel"][:300],
                 "total_ms": round(k["total_us"] / 1e3, 6), "launches": k["launches"]} for i, k in enumerate(timed)]
        out.append(charts.render(
            "time-by-kernel", "Profiled GPU time by kernel (bars numbered as in the kernels table)",
            f"Bar chart of profiled GPU time for the "
            f"{plural(len(rows), 'longest-running kernel', 'longest-running kernels')}; "
            f"the longest is {short_kernel(timed[0]['kernel'])} at {fmt_duration_us(timed[0]['total_us'])}.",
            rows))
    points = []
    for s in (first_launch(data, k) for k in data["kernels"][:MAX_TABLE_KERNELS]):
        if s.get("memory_pct") is None or s.get("sm_pct") is None:
            continue
        points.append({"label": short_kernel(s["kernel"]), "memory_pct": s["memory_pct"],
                       "sm_pct": s["sm_pct"], "bound": s["bound"]})
    if points:
        out.append(charts.render(
            "throughput", "Memory vs SM throughput",
            f"Scatter plot of memory against SM throughput (% of peak) for the first launch of "
            f"{plural(len(points), 'kernel', 'kernels')}, with the 40% and 60% lines of the bound rule.", points))
    return out


def _environment_changes(record: Record) -> list[dict[str, Any]]:
    changes = record["data"].get("environment_changes")
    if not changes:
        return []
    return [{"title": "Environment before and after profiling", "note": "These differ between the two snapshots.",
             "columns": ["GPU", "field", "before", "after"],
             "rows": [[str(c["gpu"]), c["field"], str(c["before"]), str(c["after"])] for c in changes]}]


def _roofline(record: Record, records: RecordSet, charts: ChartRenderer) -> list[Chart]:
    """Kernels as FLOP/s against FLOP per DRAM byte, under the roofs that can be named:
    memory from the cited peak-bandwidth record of the same GPU model, compute from a
    datasheet value (labelled as such)."""
    data = record["data"]
    points = []
    for n, kernel in enumerate(data["kernels"][:MAX_TABLE_KERNELS]):
        first = first_launch(data, kernel)
        if first.get("arithmetic_intensity") and first.get("flops_per_s"):
            points.append({"series": "kernel", "label": short_kernel(kernel["kernel"]), "href": f"#k-{n + 1}",
                           "intensity": first["arithmetic_intensity"], "tflops": round(first["flops_per_s"] / 1e12, 6)})
    if not points:
        return []
    lo = min(p["intensity"] for p in points) / 10
    hi = max(p["intensity"] for p in points) * 10
    rows: list[dict[str, Any]] = list(points)
    notes: list[dict[str, str]] = []
    peak_id = measured_peak_for(record, records)
    compute = compute_peak_tflops(record["subject"].get("gpu"))
    if peak_id:
        gbs = records.records[peak_id]["data"]["peak_gbs"]
        top = compute if compute else max(p["tflops"] for p in points) * 10
        ridge = min(hi, top * 1e3 / gbs)
        rows += [{"series": "memory (measured)", "intensity": x, "tflops": round(gbs * x / 1e3, 6)} for x in (lo, ridge)]
        notes.append({"text": f"Memory roof: the measured peak of {fmt_gbs(gbs)}", "href": f"{peak_id}.html",
                      "md_href": f"{peak_id}.md", "short": short(peak_id)})
    else:
        notes.append({"text": "No memory roof: no peak-bandwidth record for this GPU model."})
    if compute:
        rows += [{"series": "compute (datasheet)", "intensity": x, "tflops": compute} for x in (lo, hi)]
        notes.append({"text": f"Compute roof: {compute:g} TFLOP/s dense BF16, a datasheet value, not measured."})
    else:
        notes.append({"text": "No compute roof: no measured or datasheet compute peak for this GPU model."})
    notes.append({"text": "FLOPs are ncu's tensor-path op counts (one op counted as one FLOP) plus SASS FP "
                          "instructions when collected (an FMA as two)."})
    alt = (f"Log-log roofline of {plural(len(points), 'kernel', 'kernels')}: FLOP/s against FLOP per DRAM byte, "
           "first launch of each.")
    return [charts.render("roofline", "Roofline", alt, rows, tuple(notes))]


def _superseded_by(record_id: str, records: RecordSet) -> Record | None:
    """The latest supersession of this record, if any."""
    found = [records.records[r] for r in records.by_kind.get("supersession", [])
             if any(s["id"] == record_id for s in records.records[r]["supersedes"])]
    return sorted(found, key=lambda r: (r["collected_at"] or "", r["data"]["new"]))[-1] if found else None


def _comparison_charts(record: Record, charts: ChartRenderer) -> list[Chart]:
    rows = [{"label": chart_label(i), "ratio": k["ratio"], "verdict": k["verdict"]}
            for i, k in enumerate(k for k in record["data"]["kernels"] if k["ratio"] is not None)][:MAX_CHART_KERNELS]
    if not rows:
        return []
    alt = (f"Bar chart of the B/A ratio of median kernel durations for {plural(len(rows), 'kernel', 'kernels')}; "
           "below 1 is faster in B.")
    return [charts.render("comparison-ratio", "B/A median duration by kernel (bars numbered as in the kernels table)",
                          alt, rows)]


def changelog_page(records: RecordSet) -> Page:
    rows = []
    for rid in records.by_kind.get("supersession", []):
        r = records.records[rid]
        old, new = r["data"]["old"], r["data"]["new"]
        rows.append({"when": r["collected_at"] or "", "href": f"e/{rid}.html", "md_href": f"e/{rid}.md", "short": short(rid),
                     "old": {"short": short(old), "href": f"e/{old}.html", "md_href": f"e/{old}.md",
                             "title": records.records[old]["title"] if old in records.records else ""},
                     "new": {"short": short(new), "href": f"e/{new}.html", "md_href": f"e/{new}.md",
                             "title": records.records[new]["title"] if new in records.records else ""},
                     "reason": r["data"]["reason"]})
    rows.sort(key=lambda x: (x["when"], x["short"]), reverse=True)
    return Page(path="changes", template="changes", title="Changelog", root="", context={"changes": rows})


def _bandwidth_charts(record: Record, charts: ChartRenderer) -> list[Chart]:
    samples = record["data"].get("samples") or []
    if not samples:
        return []
    rows = [{"size_mib": s["buffer_bytes"] // (1 << 20), "gbs": s["gbs"]} for s in samples]
    alt = f"Strip plot of {plural(len(rows), 'timed copy', 'timed copies')}, GB/s (read + write) by buffer size in MiB."
    return [charts.render("bandwidth-samples", "Copy bandwidth by buffer size", alt, rows)]


def report_page(report: RenderedReport) -> Page:
    return Page(path=f"r/{report.slug}", template="report", title=report.title, root="../", context={
        "report": report, "body": report.html, "markdown": report.markdown,
        "cited_paragraphs": report.html.count('<p class="claim"'),
        "cited": [{"short": short(rid), "href": f"../e/{rid}.html", "md_href": f"../e/{rid}.md"} for rid in report.cites],
    })


def index_page(records: RecordSet, reports: list[RenderedReport] | None = None) -> Page:
    """The archive at a glance."""
    rows = []
    gpus: dict[str, int] = {}
    for rid in sorted(records.records, key=lambda r: (records.records[r]["kind"], records.records[r]["title"], r)):
        record = records.records[rid]
        gpu = record["subject"].get("gpu") or "unnamed GPU"
        gpus[gpu] = gpus.get(gpu, 0) + 1
        row = {"short": short(rid), "href": f"e/{rid}.html", "md_href": f"e/{rid}.md", "title": record["title"],
               "kind": record["kind"], "gpu": gpu, "launches": "", "time": "", "top": ""}
        if record["kind"] == "ncu-profile":
            facts = records.facts(rid)
            row["launches"] = str(facts["launch_count"]) if facts["launch_count"] is not None else ""
            row["time"] = fmt_duration_us(facts["profiled_time_us"])
            row["top"] = short_kernel(facts["top_kernel"]) if facts["top_kernel"] else ""
        rows.append(row)
    kinds: dict[str, int] = {}
    for record in records.records.values():
        kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
    return Page(path="index", template="index", title="Evidence", root="", context={
        "reports": [{"title": r.title, "summary": r.summary, "href": f"r/{r.slug}.html", "md_href": f"r/{r.slug}.md",
                     "cites": len(r.cites)} for r in (reports or [])],
        "record_count": len(records.records),
        "kinds": sorted(kinds.items()),
        "gpus": sorted(gpus.items()),
        "profiles": [r for r in rows if r["kind"] == "ncu-profile"],
        "others": [r for r in rows if r["kind"] != "ncu-profile"],
    })
