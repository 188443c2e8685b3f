"""Turn parsed ncu pages into one summary per kernel launch, and per kernel.

Raw is preferred; details fills whatever raw lacks (matched by launch ID). Derived values:
DRAM GB/s (bytes moved / duration, else ncu's own DRAM byte rate), % of a measured peak
(when one is given), the occupancy limiter, the top warp-stall reasons, and the bound label.

The bound label is a speed-of-light rule of thumb. ncu reports each unit's throughput as %
of its peak. The memory side is ncu's "Memory Throughput" (the busiest of L1, L2 and DRAM)
where the export has it, else DRAM throughput: a kernel that saturates L2 is memory-bound
even when DRAM is idle, as ncu's own SOLBottleneck rule says. If memory or SM is >= 60% of
peak, the higher one is the limiter; if both are < 40%, neither is busy and the kernel is
waiting (latency-bound: too little parallelism, dependencies, launch or tail effects);
in between: mixed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ikreport.analysis.ncu_launch import Launch

BUSY_PCT = 60.0
IDLE_PCT = 40.0
TOP_STALLS = 4
# DRAM counts as the busiest memory level when within this many points of the max.
SAME_LEVEL_PCT = 1.0

Summary = dict[str, Any]


def bound_label(memory_pct: float | None, sm_pct: float | None) -> str:
    """'memory-bound', 'compute-bound', 'latency-bound', 'mixed' or 'unknown' (see module doc)."""
    if memory_pct is None and sm_pct is None:
        return "unknown"
    m, s = memory_pct or 0.0, sm_pct or 0.0
    if max(m, s) >= BUSY_PCT:
        return "memory-bound" if m >= s else "compute-bound"
    if m < IDLE_PCT and s < IDLE_PCT:
        return "latency-bound"
    return "mixed"


def memory_side(dram_pct: float | None, mem_pct: float | None) -> tuple[float | None, str]:
    """(memory throughput % of peak, which level that is: 'dram', 'cache' or 'unknown')."""
    known = [v for v in (dram_pct, mem_pct) if v is not None]
    if not known:
        return None, "unknown"
    top = max(known)
    if dram_pct is None:
        return top, "unknown"
    return top, "dram" if top - dram_pct <= SAME_LEVEL_PCT else "cache"


def occupancy_limiter(fields: dict[str, float | None]) -> str | None:
    """Which resource caps blocks per SM: the smallest per-resource block limit."""
    limits = {
        "registers": fields.get("limit_registers"),
        "shared memory": fields.get("limit_shared_mem"),
        "warps": fields.get("limit_warps"),
        "blocks per SM": fields.get("limit_blocks"),
    }
    known = {k: v for k, v in limits.items() if v is not None}
    return min(known, key=lambda k: known[k]) if known else None


def merge(raw: list[Launch], details: list[Launch]) -> list[Launch]:
    """Raw launches with missing values filled from details; details alone if no raw."""
    if not raw:
        return list(details)
    by_id = {d.id: d for d in details}
    for launch in raw:
        extra = by_id.get(launch.id)
        if extra is None:
            continue
        for field, value in extra.fields.items():
            if launch.fields.get(field) is None and value is not None:
                launch.fields[field] = value
        launch.problems.extend(extra.problems)
        launch.stalls = launch.stalls or extra.stalls
        launch.rules = launch.rules or extra.rules
        launch.device = launch.device or extra.device
        launch.cc = launch.cc or extra.cc
        launch.grid_dims = launch.grid_dims or extra.grid_dims
        if launch.flops is None:
            launch.flops, launch.flops_sass = extra.flops, extra.flops_sass
        launch.block_dims = launch.block_dims or extra.block_dims
    return raw


def _count(value: float | None) -> int | float | None:
    return int(value) if value is not None and float(value).is_integer() else value


def summarize_launch(index: int, launch: Launch, peak_gbs: float | None = None) -> Summary:
    f = launch.fields
    dur = f.get("duration_ns")
    moved = (f.get("dram_read_bytes") or 0.0) + (f.get("dram_write_bytes") or 0.0)
    gbs = moved / dur if dur and moved else None  # bytes per ns == GB/s
    if gbs is None and f.get("dram_bytes_per_s") is not None:
        gbs = f["dram_bytes_per_s"] / 1e9  # type: ignore[operator]
    total = sum(v for _, v in launch.stalls.values())
    # DRAM bytes for the roofline: counted bytes, else ncu's byte rate over the duration
    dram_bytes = moved or (f["dram_bytes_per_s"] * dur / 1e9 if f.get("dram_bytes_per_s") and dur else None)
    # Tensor counters alone cannot show that a kernel did no FP math (a GEMV runs on FMA units):
    # a zero is believed only when the SASS FP instruction counters were collected too.
    flops = launch.flops if launch.flops or launch.flops_sass else None
    top = sorted(((v, reason, src) for reason, (src, v) in launch.stalls.items()), key=lambda t: (-t[0], t[1]))
    memory_pct, memory_level = memory_side(f.get("dram_pct"), f.get("mem_pct"))
    return {
        "index": index,
        "id": launch.id,
        "kernel": launch.kernel,
        "device": launch.device,
        "cc": launch.cc,
        "duration_us": round(dur / 1e3, 3) if dur else None,
        "dram_gbs": round(gbs, 1) if gbs is not None else None,
        "dram_pct_of_measured_peak": round(100 * gbs / peak_gbs, 1) if gbs is not None and peak_gbs else None,
        "dram_pct": f.get("dram_pct"),
        "sm_pct": f.get("sm_pct"),
        "mem_pct": f.get("mem_pct"),
        "memory_pct": memory_pct,
        "memory_level": memory_level,
        "occupancy_achieved_pct": f.get("occupancy_achieved_pct"),
        "occupancy_theoretical_pct": f.get("occupancy_theoretical_pct"),
        "occupancy_limiter": occupancy_limiter(f),
        "registers": _count(f.get("registers")),
        "waves": f.get("waves"),
        "grid": _count(f.get("grid")),
        "block": _count(f.get("block")),
        "grid_dims": launch.grid_dims,
        "block_dims": launch.block_dims,
        "l2_hit_pct": f.get("l2_hit_pct"),
        "flops": _count(flops),
        "flops_per_s": round(flops / dur * 1e9) if flops and dur else None,
        "arithmetic_intensity": round(flops / dram_bytes, 3) if flops and dram_bytes else None,
        "top_stalls": [
            {"reason": reason, "value": round(v, 3), "share_pct": round(100 * v / total, 1) if total else None,
             "source": src}
            for v, reason, src in top[:TOP_STALLS] if v > 0
        ],
        "bound": bound_label(memory_pct, f.get("sm_pct")),
        "ncu_rules": launch.rules,
        "unparsed_units": launch.problems,
    }


def summarize(raw: list[Launch], details: list[Launch], peak_gbs: float | None = None) -> list[Summary]:
    """One summary per launch, in profiling order."""
    return [summarize_launch(i, launch, peak_gbs) for i, launch in enumerate(merge(raw, details))]


def by_kernel(launches: list[Summary]) -> list[Summary]:
    """Per kernel name: launches, total and mean time, share of profiled time, the most
    common bound label. Sorted by total time, longest first (then name, for ties)."""
    groups: dict[str, list[Summary]] = {}
    for s in launches:
        groups.setdefault(s["kernel"], []).append(s)
    profiled = sum(s["duration_us"] or 0.0 for s in launches)
    out = []
    for name, group in groups.items():
        times = [s["duration_us"] for s in group if s["duration_us"] is not None]
        total = sum(times)
        labels = Counter(s["bound"] for s in group)
        bound = sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        out.append({
            "kernel": name,
            "launches": len(group),
            "first_index": group[0]["index"],
            "total_us": round(total, 3) if times else None,
            "mean_us": round(total / len(times), 3) if times else None,
            "min_us": min(times) if times else None,
            "max_us": max(times) if times else None,
            "share_pct": round(100 * total / profiled, 1) if times and profiled else None,
            "bound": bound,
            "bound_launches": labels[bound],
        })
    return sorted(out, key=lambda k: (-(k["total_us"] or 0.0), k["kernel"]))
