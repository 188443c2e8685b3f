"""The ``peak-bandwidth`` kind: a measured peak memory bandwidth (a streaming copy, BabelStream
or nvbandwidth) — its facts, its claims, its page and its chart; and which such record gives
the memory roof of another record's GPU model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ikreport.claims.gpus import gpu_key
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import distinct_digits, fmt_gbs, fmt_pct, plural
from ikreport.kinds.base import Facts, Kind, PageContext, Tables, rows_data
from ikreport.terminal import safe_text as t

NAME = "peak-bandwidth"

CAVEAT_CONVENTION = "Bytes are counted read + write: a copy of N bytes moves 2N."


def measured_peak_for(record: Record, records: RecordSet) -> str | None:
    """The peak-bandwidth record of the same GPU model: the latest collected (then the
    smallest id), so the choice is stable, of those that can stand as a peak (not a run that
    failed its own validation, nor one under a debugger or profiler: their pages say their
    figures are not the GPU's best). None when there is none or the GPU is unnamed."""
    key = gpu_key((record.get("subject") or {}).get("gpu"))  # a record being built may have no subject yet
    return records.once("latest_peaks", _latest_peaks).get(key) if key is not None else None


def _latest_peaks(records: RecordSet) -> dict[str, str]:
    """GPU model -> its latest peak-bandwidth record (every profile page asks, and a build
    keys each page by the answer)."""
    latest: dict[str, str] = {}
    ordered = sorted(records.by_kind.get(NAME, []), key=lambda rid: (records.records[rid]["collected_at"] or "", rid),
                     reverse=True)
    for rid in ordered:
        key, facts = gpu_key(records.records[rid]["subject"].get("gpu")), records.facts(rid)  # see peak_bandwidth.schema.json
        if key is not None and facts.get("peak_gbs") and not facts.get("run_under") \
                and not str(facts.get("validation") or "").startswith("failed"):
            latest.setdefault(key, rid)
    return latest


CAVEAT_OTHER_MACHINE = ("The kernel's DRAM throughput and the measured peak come from different machines of this GPU "
                        "model (nothing ties the two records to one board): memory clocks, ECC, power limits and "
                        "drivers can differ between boards, so the share is approximate.")


def same_machine(record: Record, peak_id: str, records: RecordSet) -> bool:
    """Whether ``record`` and the peak-bandwidth record are shown to come from one machine: they
    cite the same environment record, or environment records naming the same GPU UUID."""
    ours, theirs = record.get("environment"), records.records[peak_id].get("environment")
    if not ours or not theirs:
        return False
    if ours == theirs:
        return True

    def uuids(env_id: str) -> set[str]:
        env = records.records.get(env_id)
        gpus = env["data"].get("gpus") if env else None
        return {g["uuid"] for g in gpus or [] if isinstance(g, dict) and g.get("uuid")}

    return bool(uuids(ours) & uuids(theirs))


def _rates(node: Any) -> list[float]:
    """Every GB/s figure in a record's data (keys ending in _gbs, at any depth)."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k.endswith("_gbs") and isinstance(v, (int, float))] + [
            x for v in node.values() if isinstance(v, (dict, list)) for x in _rates(v)]
    return [x for v in node for x in _rates(v)] if isinstance(node, list) else []


def gbs_formatter(data: dict[str, Any]) -> Callable[[float | None], str]:
    """fmt_gbs at the one precision that shows every different GB/s figure of the record
    differently: 1,309 and 1,315 GB/s are never both "1.31 TB/s" on its page."""
    digits = distinct_digits(_rates(data), fmt_gbs)
    return lambda value: fmt_gbs(value, digits)


def bandwidth_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """The record's own result: the measured peak, and its share of the theoretical peak."""
    data = record["data"]
    gbs = gbs_formatter(data)
    text = f"Measured peak memory bandwidth: {gbs(data['peak_gbs'])} ({data['peak_basis']})"
    if data.get("max_gbs") is not None and data["max_gbs"] != data["peak_gbs"]:
        kernel = f" ({data['max_kernel']})" if data.get("max_kernel") else ""
        text += f"; the highest figure the run measured was {gbs(data['max_gbs'])}{kernel}"
    text += "."
    if str(data.get("validation", "")).startswith("failed"):
        text += f" The tool reported that its results failed validation ({data['validation'][len('failed: '):]})."
    claims = [make_claim("bandwidth-peak", "", record_id, text, [record_id], [CAVEAT_CONVENTION], records)]
    if data.get("theoretical_gbs"):
        pct = 100 * data["peak_gbs"] / data["theoretical_gbs"]
        text = (f"That is {fmt_pct(pct)} of the theoretical {gbs(data['theoretical_gbs'])} "
                f"(2 x {data['max_memory_clock_mhz']:g} MHz x {data['memory_bus_width_bits']} bit).")
        claims.append(make_claim("bandwidth-of-theoretical", "", record_id, text, [record_id],
                                 ["The theoretical peak is a datasheet-style figure no real access pattern reaches."],
                                 records))
    return claims


def bandwidth_view(record: Record) -> tuple[Facts, Tables]:
    """The page's facts and tables: the peak, each buffer size, each copy, each kernel, each GPU."""
    d = record["data"]
    gbs = gbs_formatter(d)
    facts: Facts = [
        ("measured peak", f"{gbs(d['peak_gbs'])} ({d['peak_basis']})"),
        ("best", gbs(d.get("max_gbs")) + (f" ({d['max_kernel']})" if d.get("max_kernel") else "")),
        *([("validation", d["validation"])] if d.get("validation") else []),
        *([("driver", d["driver"])] if d.get("driver") else []),
        ("convention", d["convention"]),
        ("method", d.get("method") or "n/a"),
        ("copied by", d.get("copy_mechanism") or "not recorded"),
        ("backend", d.get("backend") or "n/a"),
        ("device", d.get("device") or "n/a"),
        ("theoretical", gbs(d.get("theoretical_gbs")) if d.get("theoretical_gbs") else "unknown"),
    ]
    if d.get("run_under"):
        facts.append(("run under", ", ".join(d["run_under"])))
    tables: Tables = []
    if d.get("by_size"):
        tables.append({"title": "By buffer size", "note": "", "columns": ["buffer", "median", "max", "copies"],
                       "rows": [[f"{r['buffer_bytes'] >> 20} MiB", gbs(r["median_gbs"]), gbs(r["max_gbs"]),
                                 str(r["samples"])] for r in d["by_size"]]})
    if d.get("samples"):
        tables.append({"title": "Every timed copy", "note": "", "columns": ["buffer", "seconds", "GB/s"],
                       "rows": [[f"{s['buffer_bytes'] >> 20} MiB", f"{s['seconds']:.6f}", gbs(s["gbs"])]
                                for s in d["samples"]]})
    if d.get("kernels"):
        tables.append({"title": "BabelStream kernels",
                       "note": "BabelStream's own figure (its fastest run) and its times as it prints them (5 decimals, "
                               "too coarse to derive a bandwidth from).",
                       "columns": ["kernel", "best", "min (s)", "max (s)", "average (s)"],
                       "rows": [[k["function"], gbs(k["best_gbs"]),
                                 *(f"{k[t]:.5f}" if k.get(t) is not None else "n/a" for t in ("min_s", "max_s", "avg_s"))]
                                for k in d["kernels"]]})
    if d.get("transfers"):
        tables.append({"title": "By transfer size",
                       "note": "bandwidthTest's device-to-device figure, read + write as it prints it; a transfer "
                               "that fits in L2 is partly served from it.",
                       "columns": ["transfer (bytes)", "GB/s"],
                       "rows": [[f"{r['buffer_bytes']:,}", gbs(r["gbs"])] for r in d["transfers"]]})
    if d.get("per_gpu"):
        tables.append({"title": "Per GPU", "note": "nvbandwidth's figure counts the copied size once; doubled here.",
                       "columns": ["GPU", "device", "nvbandwidth", "read + write"],
                       "rows": [[str(g["gpu_index"]), g["device"] or "n/a", gbs(g["counted_once_gbs"]),
                                 gbs(g["gbs"])] for g in d["per_gpu"]]})
    return facts, tables


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """Facts, tables and the strip plot of every timed copy."""
    facts, tables = bandwidth_view(record)
    return {"facts": facts, "tables": tables, "charts": _samples_chart(record, page)}


def _samples_chart(record: Record, page: PageContext) -> list[Any]:
    samples = record["data"].get("samples") or []
    if not samples:
        return []
    rows = [{"size_mib": s["buffer_bytes"] // (1 << 20), "gbs": s["gbs"]} for s in samples]
    alt = f"Strip plot of {plural(len(rows), 'timed copy', 'timed copies')}, GB/s (read + write) by buffer size in MiB."
    return [page.charts.render("bandwidth-samples", "Copy bandwidth by buffer size", alt, rows)]


def _bandwidth_samples() -> dict[str, Any]:
    import altair as alt

    return alt.Chart(alt.Data(name="rows")).mark_tick(thickness=2, size=18, color="#4c78a8").encode(
        x=alt.X("gbs:Q", title="GB/s (read + write)", scale=alt.Scale(zero=False)),
        y=alt.Y("size_mib:O", title="buffer (MiB)"),
    ).properties(width=420).to_dict(validate=False)


def show(record: Record, records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: the measured peak, the best measurement, the theoretical peak
    and how bytes are counted."""
    d = record["data"]
    theory = d.get("theoretical_gbs")
    of_theory = f"{fmt_gbs(theory)} (the peak is {fmt_pct(100 * d['peak_gbs'] / theory)} of it)" if theory else "unknown"
    return [f"  peak:      {fmt_gbs(d['peak_gbs'])} ({t(d['peak_basis'])})",
            f"  best:      {fmt_gbs(d.get('max_gbs'))}" + (f" ({t(d['max_kernel'])})" if d.get("max_kernel") else ""),
            *([f"  validation: {t(d['validation'])}"] if d.get("validation") else []),
            f"  theoretical: {of_theory}",
            f"  counting:  {t(d['convention'])}"]


KIND = Kind(NAME, rules=(bandwidth_claims,), view=view, show=show,
            charts={"bandwidth-samples": (_bandwidth_samples, rows_data)})
