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
import math
from collections.abc import Callable
from typing import Any

# from the fold itself, not analysis.ncu: a build reads profiles and need not import the CSV
# reader's pyarrow (0.03 s of every build's start)
from ikreport.analysis.ncu_fold import INLINE_LAUNCHES, LONGEST_LAUNCHES, Profile  # the fold keeps those launches' summaries
from ikreport.csv_cells import restore
from ikreport.errors import RecordError

LAUNCH_TABLE_ROLE = "ncu-launch-table"

Data = dict[str, Any]


def profile_data(profile: Profile) -> Data:
    complete = inline(profile)
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
        **({"ncu_messages": list(profile.messages)} if profile.messages else {}),
    }


def inline(profile: Profile) -> bool:
    """Whether a record holds every launch of ``profile``; else it cites the per-launch CSV."""
    return profile.launch_count <= INLINE_LAUNCHES


def first_launch(data: Data, kernel: dict[str, Any]) -> dict[str, Any]:
    if "first_launch" in kernel:
        return kernel["first_launch"]
    launches = data.get("launches", [])
    i = kernel.get("first_index", len(launches))
    return launches[i] if i < len(launches) else {}


def launch_rows(record: dict[str, Any], read_blob: Callable[[str], bytes]) -> list[dict[str, Any]]:
    """Every timed launch as {"kernel", "grid", "block", "duration_us"} in profiling order: from
    the record when its launches are all inline, else from the per-launch CSV blob it cites."""
    data = record["data"]
    if data.get("launches_complete", True):
        rows: Any = data["launches"]
    else:
        blob = next(s["id"] for s in record["sources"] if s["role"] == LAUNCH_TABLE_ROLE)  # the schema requires it
        rows = _launch_table(blob, read_blob(blob))
    # a zero duration is no timing (ncu never reports one for a timed launch), and it
    # would be the denominator of a comparison's ratio
    return [{"kernel": r["kernel"], "grid": _size(r.get("grid")), "block": _size(r.get("block")),
             "duration_us": r["duration_us"]} for r in rows if r["duration_us"] is not None and r["duration_us"] > 0]


def _size(value: Any) -> str | None:
    """A grid or block size as one text whether it came from the record (a number) or the CSV."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return str(int(number)) if number.is_integer() else str(value)


def durations_by_kernel(record: dict[str, Any], read_blob: Callable[[str], bytes]) -> dict[str, list[float]]:
    """Every launch's duration (µs) by kernel, in profiling order (see launch_rows)."""
    out: dict[str, list[float]] = {}
    for launch in launch_rows(record, read_blob):
        out.setdefault(launch["kernel"], []).append(launch["duration_us"])
    return out


def _launch_table(blob: str, data: bytes) -> list[dict[str, Any]]:
    """The rows of a per-launch CSV blob. Its hash proves only that it is the blob the record
    cites, not that it is well formed, so a bad row is a one-line error naming it."""
    try:
        rows = []
        for n, r in enumerate(csv.DictReader(io.StringIO(data.decode("utf-8"))), start=2):
            kernel, duration = r.get("kernel"), r.get("duration_us")
            if kernel is None or (duration and not math.isfinite(float(duration))):
                raise ValueError(f"row {n} has no kernel or a duration that is not a number")
            rows.append({"kernel": restore(kernel), "duration_us": float(duration) if duration else None,
                         "grid": r.get("grid"), "block": r.get("block")})
        return rows
    except (UnicodeDecodeError, csv.Error, ValueError) as exc:
        raise RecordError(f"blob {blob[:12]} (the per-launch table): {str(exc)[:120]}; "
                          "re-import the profile to write a good table") from None
