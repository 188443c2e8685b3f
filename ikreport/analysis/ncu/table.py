"""Launches as columns: what a page says about every launch, in numpy arrays.

One row per launch, in profiling order. Numbers are float64 in base units (ns, bytes,
bytes/s, %) with NaN where the export has no value; text columns are lists. Both page readers
produce this, so merging and summarising are column-wise whatever the export's size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ikreport.analysis import plausible
from ikreport.analysis.ncu.launch import Launch
from ikreport.analysis.ncu.metrics import FIELD_KIND, FIELDS, STALL_PATTERNS
from ikreport.analysis.ncu.roofline import FLOP_RATE_FIELDS
from ikreport.errors import MismatchedExportsError

TEXT = ("device", "cc", "grid_dims", "block_dims", "kernel_time")


@dataclass
class LaunchTable:
    ids: list[str]
    kernels: list[str]
    text: dict[str, list[str | None]]
    fields: dict[str, np.ndarray]
    stalls: dict[str, np.ndarray] = field(default_factory=dict)  # reason -> values, all of one source
    stall_source: str | None = None
    flops: np.ndarray | None = None  # NaN where no FLOP counter had a value
    flops_sass: np.ndarray | None = None  # bool: SASS FP counters were collected
    problems: dict[int, list[str]] = field(default_factory=dict)  # launch row -> unreadable values
    rules: dict[int, list[dict[str, str]]] = field(default_factory=dict)  # launch row -> ncu's findings
    names: dict[str, str] = field(default_factory=dict)  # field -> the metric name read (the first launch's)

    def __post_init__(self) -> None:
        n = len(self.ids)
        # one read-only all-NaN column for every field the export lacks: a 200,000-launch B200
        # export lacks 27 of them, 43 MB as copies
        absent = np.full(n, np.nan)
        absent.flags.writeable = False
        for name in FIELDS:
            self.fields.setdefault(name, absent)
        for name in TEXT:
            self.text.setdefault(name, [None] * n)
        if self.flops is None:
            self.flops = np.full(n, np.nan)
        if self.flops_sass is None:
            self.flops_sass = np.zeros(n, dtype=bool)

    @property
    def n(self) -> int:
        return len(self.ids)

    @classmethod
    def concat(cls, blocks: list[LaunchTable]) -> LaunchTable:
        """One table of blocks of rows read in turn (a page's launches, whole). A block's
        columns are let go as they are joined, so the blocks and the whole are not all held at
        once; a field every block lacks stays the one shared read-only column."""
        if len(blocks) == 1:
            return blocks[0]
        offsets = np.cumsum([0] + [b.n for b in blocks])
        first = blocks[0] if blocks else cls(ids=[], kernels=[], text={}, fields={})
        fields = {name: np.concatenate([b.fields.pop(name) for b in blocks]) for name in list(first.fields)
                  if any(b.fields[name].flags.writeable for b in blocks)}
        return cls(
            ids=[i for b in blocks for i in b.ids], kernels=[k for b in blocks for k in b.kernels],
            text={name: [v for b in blocks for v in b.text[name]] for name in TEXT}, fields=fields,
            stalls={r: np.concatenate([b.stalls.pop(r) for b in blocks]) for r in list(first.stalls)},
            stall_source=first.stall_source,
            flops=np.concatenate([b.flops for b in blocks]) if blocks else None,
            flops_sass=np.concatenate([b.flops_sass for b in blocks]) if blocks else None,
            problems={start + i: said for b, start in zip(blocks, offsets) for i, said in b.problems.items()},
            rules={start + i: said for b, start in zip(blocks, offsets) for i, said in b.rules.items()},
            names=first_names(blocks),
        )

    @classmethod
    def from_launches(cls, launches: list[Launch]) -> LaunchTable:
        """Columns from per-launch objects (the details reader's rows come one metric at a time)."""
        n = len(launches)
        fields = {name: np.array([_nan(x.fields.get(name)) for x in launches], dtype=float) for name in FIELDS}
        sources = {src for x in launches for src, _ in x.stalls.values()}
        source = next((s for s, _ in STALL_PATTERNS if s in sources), None)
        reasons = sorted({r for x in launches for r, (src, _) in x.stalls.items() if src == source})
        stalls = {r: np.array([x.stalls[r][1] if r in x.stalls and x.stalls[r][0] == source else np.nan
                               for x in launches], dtype=float) for r in reasons}
        return cls(
            ids=[x.id for x in launches], kernels=[x.kernel for x in launches],
            text={name: [getattr(x, name) for x in launches] for name in TEXT},
            fields=fields, stalls=stalls, stall_source=source,
            flops=np.array([_nan(x.flops) for x in launches], dtype=float),
            flops_sass=np.array([x.flops_sass for x in launches], dtype=bool) if n else np.zeros(0, dtype=bool),
            problems={i: x.problems for i, x in enumerate(launches) if x.problems},
            rules={i: x.rules for i, x in enumerate(launches) if x.rules},
            names=first_names(launches),
        )


def first_names(tables: list[Any]) -> dict[str, str]:
    """Each field's metric name as the first of ``tables`` (or launches) that read it names it."""
    out: dict[str, str] = {}
    for t in tables:
        for key, name in t.names.items():
            out.setdefault(key, name)
    return out


def _of_field(where: Callable[[int, str], str], name: str) -> Callable[[int], str]:
    return lambda i: where(i, name)


def check_plausible(t: LaunchTable, where: Callable[[int, str], str]) -> None:
    """Refuse a page holding a value no GPU can produce (see plausible.py): a negative time,
    amount or count, a percent of peak above 101, a DRAM rate above one GPU's memory bound,
    or DRAM bytes over a duration that no memory moves. ``where(row, field)`` names the line."""
    for name, values in t.fields.items():
        kind = FIELD_KIND.get(name, "count")
        fix = plausible.NCU_PERCENT_FIX if kind == "percent" else plausible.NCU_FIX
        plausible.check_column(values, kind, name, _of_field(where, name), fix)
    f = t.fields
    moved = np.nan_to_num(f["dram_read_bytes"]) + np.nan_to_num(f["dram_write_bytes"])
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where((moved > 0) & (f["duration_ns"] > 0), moved / f["duration_ns"] * 1e9, np.nan)
    plausible.check_column(rate, "byte_rate", "DRAM bytes read + written over the duration",
                           lambda i: where(i, "duration_ns"))
    for name in FLOP_RATE_FIELDS:  # ncu's roofline FLOP/s, achieved and peak
        bad = np.flatnonzero(f[name] > plausible.MAX_FLOPS_PER_S)
        if len(bad):
            plausible.flops_per_s(float(f[name][bad[0]]), where(int(bad[0]), name), name, plausible.NCU_FIX)


def _nan(value: float | None) -> float:
    return np.nan if value is None else value


SAME_RUN_FIX = "export both pages from one report (ncu --import REPORT --csv --page raw, then --page details)"


def check_same_run(raw: LaunchTable, details: LaunchTable, raw_name: str, details_name: str) -> None:
    """Refuse a raw and a details page that are not of one run: the same launch IDs, each with
    the same kernel, grid, block and compute capability wherever both pages give them. merge()
    matches launches by ID, so pages of two runs would put one run's numbers on the other's."""
    theirs = {launch_id: j for j, launch_id in enumerate(details.ids)}
    for launch_id in raw.ids:
        if launch_id not in theirs:
            raise MismatchedExportsError(f"{details_name}: has no launch ID {launch_id}, which {raw_name} has; "
                                         f"the two are not one run: {SAME_RUN_FIX}")
    mine = set(raw.ids)
    for launch_id in details.ids:
        if launch_id not in mine:
            raise MismatchedExportsError(f"{details_name}: launch ID {launch_id} is not in {raw_name}; "
                                         f"the two are not one run: {SAME_RUN_FIX}")
    for i, launch_id in enumerate(raw.ids):
        j = theirs[launch_id]
        pairs: list[tuple[str, str | None, str | None]] = [("kernel", raw.kernels[i], details.kernels[j])]
        pairs += [(name, raw.text[name][i], details.text[name][j]) for name in ("grid_dims", "block_dims", "cc")]
        for name in ("grid", "block"):  # sizes: a details page gives them as numbers, not "(x, y, z)"
            a, b = raw.fields[name][i], details.fields[name][j]
            if a == a and b == b:  # both known (not NaN)
                pairs.append((name, f"{a:g}", f"{b:g}"))
        for what, a, b in pairs:
            if a and b and a != b:
                raise MismatchedExportsError(
                    f"{details_name}: launch ID {launch_id} has {what} {_cut(b)} here but {_cut(a)} in {raw_name}; "
                    f"the two are not one run: {SAME_RUN_FIX}")


def _cut(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:59] + "…")


def merge(raw: LaunchTable | None, details: LaunchTable | None) -> LaunchTable:
    """Raw's launches, with whatever raw lacks filled from details (matched by launch ID)."""
    if raw is None:
        assert details is not None
        return details
    if details is None:
        return raw
    where = {launch_id: j for j, launch_id in enumerate(details.ids)}
    pick = np.array([where.get(i, -1) for i in raw.ids], dtype=np.int64)
    has = pick >= 0
    src = np.where(has, pick, 0)
    for name, column in list(raw.fields.items()):
        other = details.fields[name][src] if details.n else np.full(raw.n, np.nan)
        fill = np.isnan(column) & has
        raw.fields[name] = np.where(fill, other, column)  # a new column: absent ones are shared, read-only
    for name in TEXT:
        mine, theirs = raw.text[name], details.text[name]
        raw.text[name] = [m if m or k < 0 else theirs[k] for m, k in zip(mine, pick)]
    if not raw.stalls and details.stalls:
        raw.stalls = {r: np.where(has, v[src], np.nan) for r, v in details.stalls.items()}
        raw.stall_source = details.stall_source
    assert raw.flops is not None and raw.flops_sass is not None and details.flops is not None
    fill = np.isnan(raw.flops) & has
    raw.flops[fill] = details.flops[src][fill]
    raw.flops_sass[fill] = details.flops_sass[src][fill]  # type: ignore[index]
    for key, name in details.names.items():
        if key not in raw.names and not np.isnan(raw.fields[key]).all():
            raw.names[key] = name  # the field came from details alone
    for i, k in enumerate(pick):
        if k >= 0:
            if k in details.problems:
                raw.problems.setdefault(i, []).extend(details.problems[k])
            if k in details.rules and i not in raw.rules:
                raw.rules[i] = details.rules[k]
    return raw
