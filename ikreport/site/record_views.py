"""Finished facts and tables for peak-bandwidth and environment record pages (pure)."""

from __future__ import annotations

from typing import Any

from ikreport.formatting import fmt_duration_us, fmt_gbs, fmt_number

Facts = list[tuple[str, str]]
Tables = list[dict[str, Any]]


def _s(value: Any, unit: str = "") -> str:
    if value is None or value == "":
        return "n/a"
    if isinstance(value, float):
        value = fmt_number(value)
    return f"{value}{unit}"


def _clock(now: float | None, top: float | None) -> str:
    if now is None and top is None:
        return "n/a"
    return f"{_s(now)} MHz (max {_s(top)})"


def bandwidth_view(record: dict[str, Any]) -> tuple[Facts, Tables]:
    d = record["data"]
    facts: Facts = [
        ("measured peak", f"{fmt_gbs(d['peak_gbs'])} ({d['peak_basis']})"),
        ("best", fmt_gbs(d.get("max_gbs"))),
        ("convention", d["convention"]),
        ("method", d.get("method") or "n/a"),
        ("backend", d.get("backend") or "n/a"),
        ("device", d.get("device") or "n/a"),
        ("theoretical", fmt_gbs(d.get("theoretical_gbs")) if d.get("theoretical_gbs") else "unknown"),
    ]
    tables: Tables = []
    if d.get("by_size"):
        tables.append({"title": "By buffer size", "note": "", "columns": ["buffer", "median", "max", "copies"],
                       "rows": [[f"{r['buffer_bytes'] >> 20} MiB", fmt_gbs(r["median_gbs"]), fmt_gbs(r["max_gbs"]),
                                 str(r["samples"])] for r in d["by_size"]]})
    if d.get("samples"):
        tables.append({"title": "Every timed copy", "note": "", "columns": ["buffer", "seconds", "GB/s"],
                       "rows": [[f"{s['buffer_bytes'] >> 20} MiB", f"{s['seconds']:.6f}", fmt_gbs(s["gbs"])]
                                for s in d["samples"]]})
    if d.get("kernels"):
        tables.append({"title": "BabelStream kernels", "note": "Best from the minimum time; average from the average time.",
                       "columns": ["kernel", "best", "average"],
                       "rows": [[k["function"], fmt_gbs(k["best_gbs"]), fmt_gbs(k.get("avg_gbs"))] for k in d["kernels"]]})
    if d.get("per_gpu"):
        tables.append({"title": "Per GPU", "note": "nvbandwidth's figure counts the copied size once; doubled here.",
                       "columns": ["GPU", "device", "nvbandwidth", "read + write"],
                       "rows": [[str(g["gpu_index"]), g["device"] or "n/a", fmt_gbs(g["copy_gbs_counted_once"]),
                                 fmt_gbs(g["gbs"])] for g in d["per_gpu"]]})
    return facts, tables


def environment_view(record: dict[str, Any]) -> tuple[Facts, Tables]:
    d = record["data"]
    facts: Facts = [("driver", _s(d.get("driver"))), ("CUDA", _s(d.get("cuda"))), ("GPUs", str(d["gpu_count"]))]
    host = d.get("host") or {}
    for key in ("hostname", "os", "cpu", "cpu_count", "python"):
        if host.get(key) is not None:
            facts.append((key, str(host[key])))
    tables: Tables = [{
        "title": "GPUs", "note": "",
        "columns": ["#", "name", "UUID", "PCI bus", "VBIOS", "CC", "memory", "SM clock",
                    "memory clock", "power limit", "ECC", "MIG", "persistence"],
        "rows": [[str(i), _s(g.get("name")), _s(g.get("uuid")), _s(g.get("pci_bus")), _s(g.get("vbios")),
                  _s(g.get("compute_capability")), _s(g.get("memory_total_mib"), " MiB"),
                  _clock(g.get("sm_clock_mhz"), g.get("max_sm_clock_mhz")),
                  _clock(g.get("memory_clock_mhz"), g.get("max_memory_clock_mhz")),
                  _s(g.get("power_limit_w"), " W"), _s(g.get("ecc_mode")), _s(g.get("mig_mode")),
                  _s(g.get("persistence_mode"))] for i, g in enumerate(d["gpus"])],
    }]
    if d.get("packages"):
        tables.append({"title": "Python packages", "note": "", "columns": ["package", "version"],
                       "rows": [[k, v] for k, v in sorted(d["packages"].items())]})
    return facts, tables


def comparison_view(record: dict[str, Any], ref: Any) -> tuple[Facts, Tables]:
    d = record["data"]
    facts: Facts = [
        ("A (before)", f"[{d['a'][:8]}] {ref(d['a'])['title']}"),
        ("B (after)", f"[{d['b'][:8]}] {ref(d['b'])['title']}"),
        ("threshold", f"{d['threshold_pct']:g}% median change, at least {d['min_samples']} matched launches per side"),
        ("like-for-like", "yes" if d["like_for_like"] else "no: no difference is called"),
    ]
    tables: Tables = []
    if d["differences"]:
        tables.append({"title": "What differs between A and B", "note": "Each of these must be recorded and equal "
                       "for a comparison to be like-for-like.", "columns": ["field", "A", "B", "why"],
                       "rows": [[x["field"], _s(x["a"]), _s(x["b"]), x["why"]] for x in d["differences"]]})
    matched = [k for k in d["kernels"] if k["ratio"] is not None]
    rank = {id(k): str(i + 1) for i, k in enumerate(matched)}  # as the chart numbers its bars
    tables.append({"title": "Kernels", "note": "", "columns": ["#", "kernel", "launches", "A median", "B median", "B/A",
                                                              "verdict"],
                   "rows": [[rank.get(id(k), ""), k["kernel"], str(k["launches"]), fmt_duration_us(k["a_median_us"]),
                             fmt_duration_us(k["b_median_us"]), "n/a" if k["ratio"] is None else f"{k['ratio']:.3f}",
                             k["verdict"]] for k in d["kernels"]]})
    return facts, tables
