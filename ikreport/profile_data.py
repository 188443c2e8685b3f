"""The ``data`` of an ``ncu-profile`` record: how importers write it and pages read it.

A record stays small however many launches a profile has: it always holds the per-kernel
table (each kernel with the summary of its first launch) and every launch's summary when
there are at most INLINE_LAUNCHES; beyond that it holds the LONGEST_LAUNCHES longest ones,
and the full per-launch table is a CSV blob the record cites (role ``ncu-launch-table``).
Records written before this layout have no ``first_launch``; readers fall back to
``launches[first_index]``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from ikreport.analysis.ncu import Profile
from ikreport.csv_cells import restore

INLINE_LAUNCHES = 500
LONGEST_LAUNCHES = 50
LAUNCH_TABLE_ROLE = "ncu-launch-table"

Data = dict[str, Any]


def profile_data(profile: Profile) -> Data:
    complete = profile.launch_count <= INLINE_LAUNCHES
    rows = range(profile.launch_count) if complete else profile.longest(LONGEST_LAUNCHES)
    return {
        "pages": sorted(set(profile.pages.values())),
        "launch_count": profile.launch_count,
        "kernel_count": len(profile.kernels),
        "profiled_time_us": profile.profiled_time_us,
        "devices": profile.devices,
        "compute_capabilities": profile.compute_capabilities,
        "kernels": profile.kernels,
        "launches_complete": complete,
        "launches": [profile.launch(i) for i in rows],
    }


def launch_table_blob(profile: Profile) -> bytes | None:
    """The per-launch CSV a record cites when its launches are not all inline."""
    return None if profile.launch_count <= INLINE_LAUNCHES else profile.csv()


def first_launch(data: Data, kernel: dict[str, Any]) -> dict[str, Any]:
    if "first_launch" in kernel:
        return kernel["first_launch"]
    launches = data.get("launches", [])
    i = kernel.get("first_index", len(launches))
    return launches[i] if i < len(launches) else {}


def durations_by_kernel(record: dict[str, Any], read_blob: Callable[[str], bytes]) -> dict[str, list[float]]:
    """Every launch's duration (µs) by kernel, in profiling order: from the record when its
    launches are all inline, else from the per-launch CSV blob it cites."""
    data = record["data"]
    out: dict[str, list[float]] = {}
    if data.get("launches_complete", True):
        rows: Any = data["launches"]
    else:
        blob = next(s["id"] for s in record["sources"] if s["role"] == LAUNCH_TABLE_ROLE)
        rows = [{"kernel": restore(r["kernel"]), "duration_us": float(r["duration_us"]) if r["duration_us"] else None}
                for r in csv.DictReader(io.StringIO(read_blob(blob).decode("utf-8")))]
    for launch in rows:
        if launch["duration_us"] is not None:
            out.setdefault(launch["kernel"], []).append(launch["duration_us"])
    return out
