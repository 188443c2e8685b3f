"""Nsight Systems' kernel statistics as ``nsys stats --format csv`` writes them (pure).

Accepts the CSV of three reports, found by their header row (lines before it, such as the
``Processing [...]`` and ``** CUDA GPU Kernel Summary`` lines nsys prints when its output is
saved whole, are skipped):

- ``cuda_gpu_kern_sum``: ``Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),
  StdDev (ns),Name`` (older releases: ``Time(%)``, ``Average``, ``Minimum``, ``Maximum``);
- ``cuda_gpu_kern_gb_sum``: the same with ``GridXYZ`` and ``BlockXYZ`` before ``Name``, one row
  per kernel and launch shape;
- ``cuda_gpu_trace``: one row per GPU activity (``Start (ns),Duration (ns),…,GrdX,…,Name``); the
  rows with a grid are kernels, summarised per kernel here; copies and memsets are left out.

Times are nanoseconds, as nsys writes them unless ``--timeunit`` said otherwise (a header in
another unit is refused). A name that ``:nvtx-name`` prefixed with its innermost NVTX range
(``[range]kernel``) keeps the range apart from the kernel's name.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass
from typing import Any

from ikreport.errors import NsysStatsError

SUM_COLUMNS = {"time(%)": "time_pct", "totaltime(ns)": "total_ns", "instances": "instances",
               "avg(ns)": "avg_ns", "average": "avg_ns", "average(ns)": "avg_ns", "med(ns)": "med_ns",
               "median": "med_ns", "median(ns)": "med_ns", "min(ns)": "min_ns", "minimum": "min_ns",
               "minimum(ns)": "min_ns", "max(ns)": "max_ns", "maximum": "max_ns", "maximum(ns)": "max_ns",
               "stddev(ns)": "std_ns", "stddev": "std_ns", "gridxyz": "grid", "blockxyz": "block", "name": "name"}
NVTX_PREFIX = re.compile(r"^\[(?P<range>[^\]]*)\]\s*(?P<name>.+)$", re.DOTALL)
OTHER_UNIT = re.compile(r"\((us|ms|s|µs)\)")


@dataclass(frozen=True)
class KernelStats:
    """One kernel's times in a run, in nanoseconds, as nsys reported (or, from a trace, summed) them."""

    name: str
    nvtx_range: str | None
    total_ns: float
    instances: int
    avg_ns: float | None
    med_ns: float | None
    min_ns: float | None
    max_ns: float | None
    std_ns: float | None
    grid: str | None = None
    block: str | None = None


def _key(cell: str) -> str:
    return "".join(cell.lstrip("\ufeff").split()).lower()


def _header(rows: list[list[str]]) -> int | None:
    for i, row in enumerate(rows):
        keys = [_key(c) for c in row]
        if "name" in keys and ("totaltime(ns)" in keys or "duration(ns)" in keys or "time(%)" in keys):
            return i
    return None


def parse_stats_csv(text: str, name: str) -> dict[str, Any]:
    """{"report": which report, "kernels": [KernelStats, largest total first]}; NsysStatsError
    naming the file (and row) when it is not one of the three reports or a row is broken."""
    rows = list(csv.reader(io.StringIO(text)))
    at = _header(rows)
    if at is None:
        raise NsysStatsError(f"{name}: no nsys stats header (Time (%), Total Time (ns), … Name); export it with "
                             "'nsys stats --report cuda_gpu_kern_sum --format csv REPORT.nsys-rep'")
    header = [_key(c) for c in rows[at]]
    if any(OTHER_UNIT.search(c) for c in header):
        raise NsysStatsError(f"{name}: times are not in nanoseconds ({', '.join(rows[at])}); export again "
                             "without --timeunit")
    body = [(at + 2 + i, r) for i, r in enumerate(rows[at + 1:]) if any(c.strip() for c in r)]
    if "duration(ns)" in header:
        kernels = _from_trace(header, body, name)
        report = "cuda_gpu_trace"
    else:
        kernels = [_summary_row(header, r, line, name) for line, r in body]
        report = "cuda_gpu_kern_gb_sum" if "gridxyz" in header else "cuda_gpu_kern_sum"
    if not kernels:
        raise NsysStatsError(f"{name}: the report lists no kernels; profile with --trace=cuda")
    kernels.sort(key=lambda k: (-k.total_ns, k.name, k.grid or ""))
    return {"report": report, "kernels": kernels}


def _number(cell: str, line: int, column: str, name: str, *, integer: bool = False) -> float:
    text = cell.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        raise NsysStatsError(f"{name}:{line}: {column} is {cell!r}, not a number; export the report again") from None
    if value < 0 or value != value or (integer and not value.is_integer()):
        raise NsysStatsError(f"{name}:{line}: {column} is {cell!r}; export the report again")
    return value


def _split(raw: str) -> tuple[str, str | None]:
    m = NVTX_PREFIX.match(raw)
    return (m["name"], m["range"]) if m else (raw, None)


def _summary_row(header: list[str], row: list[str], line: int, name: str) -> KernelStats:
    if len(row) != len(header):
        raise NsysStatsError(f"{name}:{line}: {len(row)} fields where the header has {len(header)}; "
                             "the file is cut or not nsys's CSV")
    cells = {SUM_COLUMNS.get(h, h): c for h, c in zip(header, row)}
    if "total_ns" not in cells or "instances" not in cells:
        raise NsysStatsError(f"{name}: the header has no Total Time (ns) or Instances; this is not a kernel summary")

    def opt(key: str) -> float | None:
        return _number(cells[key], line, key, name) if cells.get(key, "").strip() else None

    kernel, nvtx = _split(cells["name"])
    return KernelStats(kernel, nvtx, _number(cells["total_ns"], line, "Total Time (ns)", name),
                       int(_number(cells["instances"], line, "Instances", name, integer=True)),
                       opt("avg_ns"), opt("med_ns"), opt("min_ns"), opt("max_ns"), opt("std_ns"),
                       cells.get("grid") or None, cells.get("block") or None)


def _from_trace(header: list[str], body: list[tuple[int, list[str]]], name: str) -> list[KernelStats]:
    at = {h: i for i, h in enumerate(header)}
    if "grdx" not in at:
        raise NsysStatsError(f"{name}: a GPU trace without GrdX; export 'nsys stats --report cuda_gpu_trace'")
    times: dict[tuple[str, str | None], list[float]] = {}
    for line, row in body:
        if len(row) != len(header):
            raise NsysStatsError(f"{name}:{line}: {len(row)} fields where the header has {len(header)}; "
                                 "the file is cut or not nsys's CSV")
        if not row[at["grdx"]].strip():
            continue  # a copy or memset: no grid
        kernel, nvtx = _split(row[at["name"]])
        times.setdefault((kernel, nvtx), []).append(_number(row[at["duration(ns)"]], line, "Duration (ns)", name))
    return [KernelStats(k, nvtx, sum(v), len(v), statistics.fmean(v), statistics.median(v), min(v), max(v),
                        statistics.stdev(v) if len(v) > 1 else 0.0) for (k, nvtx), v in times.items()]
