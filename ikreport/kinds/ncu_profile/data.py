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
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

# from the fold itself, not analysis.ncu: a build reads profiles and need not import the CSV
# reader's pyarrow at every build's start
from ikreport.analysis.ncu.fold import INLINE_LAUNCHES, LONGEST_LAUNCHES, Profile  # the fold keeps those launches' summaries
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
        **({"profiled_at": profiled_at(*profile.kernel_times, KERNEL_TIME)} if profile.kernel_times else {}),
    }


KERNEL_TIME = "the export's Kernel Time column, in the profiling machine's local time"


def profiled_at(first: str, last: str, source: str) -> dict[str, str]:
    """When the profile was taken, as the export itself says: its first and last launch's
    time, as ISO 8601 where ncu's '2020-May-29 11:51:18' reads as one, else as printed."""
    return {"first": _iso(first), "last": _iso(last), "source": source}


def _iso(text: str) -> str:
    for layout in ("%Y-%b-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), layout).isoformat()
        except ValueError:
            continue
    return text


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
    """Every launch as {"kernel", "grid", "block", "duration_us"} in profiling order: from the
    record when its launches are all inline, else from the per-launch CSV blob it cites. An
    untimed launch has duration None, so a kernel the export lists without timing is still there."""
    data = record["data"]
    if data.get("launches_complete", True):
        rows: Any = data["launches"]
    else:
        blob = next(s["id"] for s in record["sources"] if s["role"] == LAUNCH_TABLE_ROLE)  # the schema requires it
        rows = _launch_table(blob, read_blob(blob))
    # a zero duration is no timing (ncu never reports one for a timed launch), and it
    # would be the denominator of a comparison's ratio
    return [{"kernel": r["kernel"], "grid": _size(r.get("grid")), "block": _size(r.get("block")),
             "duration_us": r["duration_us"] if r["duration_us"] is not None and r["duration_us"] > 0 else None}
            for r in rows]


def _size(value: Any) -> str | None:
    """A grid or block size as one text whether it came from the record (a number) or the CSV."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return str(int(number)) if number.is_integer() else str(value)


def durations_by_kernel(record: Mapping[str, Any], read_blob: Callable[[str], bytes],
                        complete: bool | None = None) -> dict[str, list[float]]:
    """Every timed launch's duration (µs) by kernel, in profiling order (see launch_rows).
    ``complete``: whether the record holds every launch, when the caller knows it (a record
    known by its summary then need not be read for a launch table it cites)."""
    if complete is None:
        complete = record["data"].get("launches_complete", True)
    if not complete:
        blob = next(s["id"] for s in record["sources"] if s["role"] == LAUNCH_TABLE_ROLE)
        return _kernel_durations(blob, read_blob(blob))
    out: dict[str, list[float]] = {}
    for r in record["data"]["launches"]:
        duration = r["duration_us"]
        if duration is not None and duration > 0:  # as launch_rows: a zero duration is no timing
            out.setdefault(r["kernel"], []).append(duration)
    return out


def _kernel_durations(blob: str, data: bytes) -> dict[str, list[float]]:
    """``durations_by_kernel`` of a per-launch CSV blob, read by pyarrow's CSV reader: a series'
    history reads every launch of every profile in it (a million rows for a thousand profiles)."""
    import numpy as np
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    from ikreport.analysis.arrow import float_values

    options = pa_csv.ConvertOptions(include_columns=["kernel", "duration_us"], include_missing_columns=True, null_values=[""],
                                    column_types={"kernel": pa.string(), "duration_us": pa.float64()})
    try:
        if "kernel" not in next(csv.reader([data.split(b"\n", 1)[0].decode("utf-8")]), []):
            raise ValueError("it has no kernel column")
        # one thread: for a table of a thousand rows, starting the pool costs more than it saves
        table = pa_csv.read_csv(pa.py_buffer(data), read_options=pa_csv.ReadOptions(use_threads=False),
                                convert_options=options)
    except (pa.ArrowException, ValueError, csv.Error) as exc:
        raise RecordError(f"blob {blob[:12]} (the per-launch table): {str(exc)[:120]}; "
                          "re-import the profile to write a good table") from None
    kernels = table.column("kernel").to_pylist()
    durations = float_values(table.column("duration_us"))
    written_nan = int(np.isnan(durations).sum()) > table.column("duration_us").null_count  # "nan" in a cell
    if None in kernels or np.isinf(durations).any() or written_nan:
        raise RecordError(f"blob {blob[:12]} (the per-launch table): a row has no kernel or a duration that is not a "
                          "number; re-import the profile to write a good table")
    names = {kernel: restore(kernel) for kernel in set(kernels)}
    out: dict[str, list[float]] = {}
    for kernel, duration in zip(kernels, durations.tolist()):
        if duration > 0:  # NaN (no duration) and zero are no timing, as in launch_rows
            out.setdefault(names[kernel], []).append(duration)
    return out


def _launch_table(blob: str, data: bytes, columns: tuple[str, ...] = ("kernel", "duration_us", "grid", "block")
                  ) -> list[dict[str, Any]]:
    """``columns`` of the rows of a per-launch CSV blob (kernel and duration_us first). Its hash
    proves only that it is the blob the record cites, not that it is well formed, so a bad row
    is a one-line error naming it."""
    try:
        reader = csv.reader(io.StringIO(data.decode("utf-8")))
        header = next(reader, [])
        at = [header.index(c) if c in header else None for c in columns]
        if at[0] is None:
            raise ValueError("it has no kernel column")
        rows = []
        for n, r in enumerate(reader, start=2):
            cells = [r[i] if i is not None and i < len(r) else None for i in at]
            kernel, duration = cells[0], cells[1]
            if kernel is None or (duration and not math.isfinite(float(duration))):
                raise ValueError(f"row {n} has no kernel or a duration that is not a number")
            rows.append({"kernel": restore(kernel), "duration_us": float(duration) if duration else None,
                         **dict(zip(columns[2:], cells[2:]))})
        return rows
    except (UnicodeDecodeError, csv.Error, ValueError) as exc:
        raise RecordError(f"blob {blob[:12]} (the per-launch table): {str(exc)[:120]}; "
                          "re-import the profile to write a good table") from None
