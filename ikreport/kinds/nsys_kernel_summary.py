"""The ``nsys-kernel-summary`` kind: Nsight Systems' per-kernel times of a real, unserialised run
(``nsys stats --report cuda_gpu_kern_sum``) — its facts, its claims, its page and its chart; and
the claim that sets a kernel's share of real kernel time beside what an ``ncu-profile`` of the
same GPU model and workload calls it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.claims.gpus import gpu_key
from ikreport.claims.kernel_names import match_key, short_kernel
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import fmt_duration_us, fmt_pct, plural
from ikreport.kinds.base import MAX_CHART_KERNELS, MAX_TABLE_KERNELS, BarChart, Facts, Kind, PageContext, Tables
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE
from ikreport.terminal import safe_text as t

NAME = "nsys-kernel-summary"

CAVEAT_SHARE = ("A share of kernel time is of the time kernels ran on the GPU, summed over streams; copies, memsets, "
                "idle gaps and CPU time are not in it, so it is not a share of the run's wall time.")
CAVEAT_TWO_RUNS = ("ncu replays each profiled launch alone, with its own clock and cache control; nsys timed the "
                   "launches as they ran. They are two runs, matched by GPU model and workload as the records state "
                   "them, and the kernel by its name (return type, namespaces and parameter list left out).")
SHARE_CHART = BarChart(value="share", axis_title="% of kernel time", value_unit="%")


def _ns(value: float | None) -> str:
    return fmt_duration_us(value / 1e3) if value is not None else "n/a"


def summary_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """The kernel that takes the largest share of kernel time in the run."""
    d = record["data"]
    top = d["kernels"][0]
    text = (f"In this run, {short_kernel(top['kernel'])} takes the largest share of kernel time: "
            f"{fmt_pct(top['share_pct'])} of {_ns(d['kernel_time_ns'])} over {plural(d['kernel_count'], 'kernel', 'kernels')}"
            f" ({top['instances']:,} launches, median {_ns(top.get('median_ns'))}).")
    return [make_claim("nsys-top-kernel", "", record_id, text, [record_id], [CAVEAT_SHARE], records, detail=top["kernel"])]


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and " ".join(a.lower().split()) == " ".join(b.lower().split())


def profiles_alike(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    """The ncu-profile records of the same GPU model and workload (and model, where both name one):
    never when either leaves the GPU or the workload unnamed. Sorted ids, so pages key by them."""
    subject = record.get("subject") or {}
    key = gpu_key(subject.get("gpu"))
    if key is None or not subject.get("workload"):
        return []
    out = []
    for rid in sorted(records.by_kind.get(NCU_PROFILE, [])):
        other = records.records[rid]["subject"]
        if gpu_key(other.get("gpu")) != key or not _same(other.get("workload"), subject["workload"]):
            continue
        if subject.get("model") and other.get("model") and not _same(other["model"], subject["model"]):
            continue
        if records.superseded_by(rid) is None:
            out.append(rid)
    return out


def beside_ncu_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """Each kernel an ncu-profile of the same GPU model and workload labels, with its share of real
    kernel time: "largest share of real kernel time; ncu calls it memory-bound"."""
    kernels = record["data"]["kernels"]
    rank = {match_key(k["kernel"]): (i, k) for i, k in reversed(list(enumerate(kernels)))}
    claims = []
    for pid in profiles_alike(record, records):
        seen: set[str] = set()
        for launch in records.records[pid]["data"].get("launches") or []:
            key = match_key(launch["kernel"])
            if key in seen or key not in rank or not launch.get("bound"):
                continue
            seen.add(key)
            i, k = rank[key]
            place = "the largest share of real kernel time" if i == 0 else f"rank {i + 1} of {len(kernels)} by kernel time"
            measured = (f" at {fmt_pct(launch['memory_pct'])} of peak memory throughput"
                        if launch["bound"] == "memory-bound" and launch.get("memory_pct") is not None else "")
            text = (f"{short_kernel(k['kernel'])} takes {fmt_pct(k['share_pct'])} of kernel time in this real run "
                    f"({place}, {k['instances']:,} launches); ncu calls it {launch['bound']}{measured} in the "
                    f"profile of the same GPU model and workload.")
            claims.append(make_claim("nsys-beside-ncu", key, record_id, text, [record_id, pid],
                                     [CAVEAT_SHARE, CAVEAT_TWO_RUNS], records, detail=k["kernel"]))
    return claims


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """Facts, the kernels by time, and the chart of the largest shares."""
    d = record["data"]
    facts: Facts = [("stats report", d["report"]), ("kernel time", _ns(d["kernel_time_ns"])),
                    ("kernels", str(d["kernel_count"])), ("launches", f"{d['launch_count']:,}")]
    if d.get("nvtx_ranges"):
        facts.append(("NVTX ranges", ", ".join(d["nvtx_ranges"])))
    if d.get("command"):
        facts.append(("command", d["command"]))
    shown = d["kernels"][:MAX_TABLE_KERNELS]
    more = len(d["kernels"]) - len(shown)
    tables: Tables = [{
        "title": "Kernels by total time",
        "note": (f"The {len(shown)} largest of {len(d['kernels'])}; the blob holds every row. " if more else "")
        + "Times as nsys measured them in the run; share is of all kernel time.",
        "columns": ["kernel", "NVTX range", "share", "total", "launches", "average", "median", "min", "max", "std dev"],
        "rows": [[short_kernel(k["kernel"]), k.get("nvtx_range") or "", fmt_pct(k["share_pct"]), _ns(k["total_ns"]),
                  f"{k['instances']:,}", _ns(k.get("avg_ns")), _ns(k.get("median_ns")), _ns(k.get("min_ns")),
                  _ns(k.get("max_ns")), _ns(k.get("std_ns"))] for k in shown]}]
    rows = [{"label": short_kernel(k["kernel"]), "share": k["share_pct"]} for k in d["kernels"][:MAX_CHART_KERNELS]]
    alt = f"Bar chart of the {len(rows)} kernels with the most time, as % of kernel time."
    charts = [page.charts.render("nsys-kernel-share", "Share of kernel time in the run", alt, rows)]
    return {"facts": facts, "tables": tables, "charts": charts}


def show(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: the kernel time and the three largest kernels."""
    d = record["data"]
    lines = [f"  kernel time: {_ns(d['kernel_time_ns'])} over {d['kernel_count']} kernels, {d['launch_count']:,} launches"]
    lines += [f"  {fmt_pct(k['share_pct']):>6}  {t(short_kernel(k['kernel']))}" for k in d["kernels"][:3]]
    return lines


KIND = Kind(NAME, rules=(summary_claims, beside_ncu_claims), view=view, show=show,
            charts={"nsys-kernel-share": SHARE_CHART}, page_inputs=profiles_alike)
