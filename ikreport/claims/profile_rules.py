"""Automatic claims about an ``ncu-profile`` record.

Each rule reads only the record's ``data`` and writes its numbers with ``formatting``, so
a claim cannot drift from the record it cites.
"""

from __future__ import annotations

from ikreport.analysis.ncu_summary import BUSY_PCT, IDLE_PCT
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import fmt_duration_us, fmt_pct, plural
from ikreport.store.profile_data import first_launch

TOP_KERNELS = 5

CAVEAT_SHARE = "Shares are of profiled GPU time (the sum of kernel durations under ncu), not of wall time."
CAVEAT_BOUND = (
    f"Speed-of-light rule: a unit at or above {BUSY_PCT:g}% of its peak is the limiter; both below "
    f"{IDLE_PCT:g}% means latency-bound. The label is for the kernel's most common label across its launches."
)
CAVEAT_OCCUPANCY = (
    "The limiter is the smallest per-resource block limit: it says what caps occupancy, "
    "not whether more occupancy would make the kernel faster."
)
CAVEAT_STALLS = "Stall reasons are shares of the stall metrics ncu collected for the kernel's first launch."

MEMORY_LEVEL = {"dram": "DRAM", "cache": "L1/L2 cache, not DRAM", "unknown": "level not in the export"}


def profile_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    if record["kind"] != "ncu-profile":
        return []
    data = record["data"]
    cites = [record_id]
    claims = []
    total = data.get("profiled_time_us")
    text = (f"The profile holds {plural(data['launch_count'], 'kernel launch', 'kernel launches')} "
            f"of {plural(data['kernel_count'], 'kernel', 'kernels')}")
    text += f", {fmt_duration_us(total)} of profiled GPU time." if total else "; it has no kernel durations."
    claims.append(make_claim("profile-size", "", record_id, text, cites, [CAVEAT_SHARE] if total else [], records))

    for kernel in data["kernels"][:TOP_KERNELS]:
        name = kernel["kernel"]
        short = short_kernel(name)
        first = first_launch(data, kernel)
        if kernel["share_pct"] is not None:
            text = (f"{short} takes {fmt_pct(kernel['share_pct'])} of profiled GPU time: "
                    f"{fmt_duration_us(kernel['total_us'])} over {kernel['launches']} "
                    f"launch{'es' if kernel['launches'] != 1 else ''}.")
            claims.append(make_claim("kernel-share", name, record_id, text, cites, [CAVEAT_SHARE], records, name))
        if kernel["bound"] != "unknown":
            claims.append(make_claim("kernel-bound", name, record_id, _bound_text(short, kernel, first),
                                     cites, [CAVEAT_BOUND], records, name))
        if first.get("occupancy_limiter"):
            text = f"{short}'s occupancy is limited by {first['occupancy_limiter']}"
            parts = []
            if first.get("occupancy_theoretical_pct") is not None:
                parts.append(f"theoretical {fmt_pct(first['occupancy_theoretical_pct'])}")
            if first.get("occupancy_achieved_pct") is not None:
                parts.append(f"achieved {fmt_pct(first['occupancy_achieved_pct'])}")
            text += f" ({', '.join(parts)})." if parts else "."
            claims.append(make_claim("kernel-occupancy", name, record_id, text, cites, [CAVEAT_OCCUPANCY], records, name))
        if first.get("top_stalls"):
            reasons = ", ".join(
                f"{s['reason']} ({fmt_pct(s['share_pct'])})" for s in first["top_stalls"] if s["share_pct"] is not None
            )
            if reasons:
                text = f"{short}'s warps stall most on {reasons} of the stall metrics collected."
                claims.append(make_claim("kernel-stalls", name, record_id, text, cites, [CAVEAT_STALLS], records, name))
    return claims


def _bound_text(short: str, kernel: dict, first: dict) -> str:
    label = kernel["bound"]
    mem, sm = first.get("memory_pct"), first.get("sm_pct")
    level = MEMORY_LEVEL.get(first.get("memory_level", "unknown"), "")
    memory = f"memory {fmt_pct(mem)} of peak ({level})" if mem is not None else "memory throughput not in the export"
    if first.get("memory_level") == "cache" and first.get("dram_pct") is not None:
        memory = f"memory {fmt_pct(mem)} of peak (L1/L2 cache; DRAM {fmt_pct(first['dram_pct'])})"
    compute = f"SM {fmt_pct(sm)} of peak" if sm is not None else "SM throughput not in the export"
    of = f" in {kernel['bound_launches']} of {kernel['launches']} launches" if kernel["launches"] > 1 else ""
    return f"{short} is {label}{of}: {memory}, {compute} (first launch)."
