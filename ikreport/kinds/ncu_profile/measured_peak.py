"""The ``ncu-profile`` kind's memory side judged against a measured peak: when
an export has no memory throughput % but has the DRAM byte rate, and the archive holds a
``peak-bandwidth`` record of the same GPU model, a launch's memory side is its DRAM GB/s over
that measured peak. Worked out when claims and pages are made, never stored in the profile's
record: the peak is another record, which may arrive or be superseded after the profile was
imported. Part of the kind's package (kinds/ncu_profile/), split off along that seam (as roofline.py is)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.claims.model import Record, RecordSet
from ikreport.formatting import fmt_gbs, fmt_pct
from ikreport.kinds.peak_bandwidth import measured_peak_for

CAVEAT_MEASURED_FILL = ("The export has no memory throughput %: the memory side is the kernel's DRAM bytes/s over the "
                        "measured peak of the cited peak-bandwidth record of the same GPU model (a streaming copy, "
                        "not ncu's own peak), so only DRAM is judged, not L1 or L2.")


def measured_peak(record: Record, records: RecordSet) -> tuple[str | None, float | None]:
    """(id, GB/s read + write) of the peak-bandwidth record of the record's GPU model that its
    claims cite and its page's labels use; (None, None) when the archive has none."""
    peak_id = measured_peak_for(record, records)
    return (peak_id, records.facts(peak_id)["peak_gbs"]) if peak_id else (None, None)  # a fact: no data to load


def measured_fill(launch: Mapping[str, Any], peak_gbs: float | None) -> float | None:
    """The launch's DRAM bytes/s as % of a measured peak (GB/s, read + write) when its export has
    no memory throughput %; None when it has one (or ncu's roofline filled it), or when there
    is no DRAM rate or peak. Not capped: a kernel measured above a peak taken on another board
    is said as it is."""
    if launch.get("memory_pct") is not None or launch.get("dram_gbs") is None or not peak_gbs:
        return None
    return 100 * launch["dram_gbs"] / peak_gbs


def memory_pct(launch: Mapping[str, Any], peak_gbs: float | None = None) -> float | None:
    """The memory side a label judges: the export's (or ncu's roofline's) memory %, else DRAM
    bytes/s over the measured peak when one is given."""
    filled = measured_fill(launch, peak_gbs)
    return launch.get("memory_pct") if filled is None else filled


def measured_memory(launch: Mapping[str, Any], peak_gbs: float | None) -> str | None:
    """The memory side filled from a measured peak, with its source: "DRAM 196.5 GB/s = 78.6% of
    the measured peak of 250.0 GB/s on this GPU model"; None when it is not filled."""
    filled = measured_fill(launch, peak_gbs)
    if filled is None or peak_gbs is None:
        return None
    return (f"DRAM {fmt_gbs(launch['dram_gbs'])} = {fmt_pct(filled)} of the measured peak of {fmt_gbs(peak_gbs)} "
            "on this GPU model")
