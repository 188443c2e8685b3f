"""Fold a profile's launches, a block of rows at a time, into what its record says.

Accepts LaunchTable blocks (analysis/ncu/table.py) in profiling order, each with its Derived
columns (summary.derive): the raw page's blocks as pyarrow's streaming reader yields them,
or one whole table (a details page, or raw and details merged). The same figures come out
whatever the blocks, to the byte: per-kernel sums are added launch by launch in profiling
order (``np.add.at``, as ``np.bincount`` adds them), minima, maxima, counts and votes do not
depend on order, the longest launches are a running top list ordered by (duration, row), and
the per-launch CSV is written block by block (each cell formatted alone).

Two figures need every launch, and keep one compact column or count for it: the profiled time
(and each kernel's share of it) is numpy's pairwise sum of every duration, whose rounding
depends on the whole column, so one float64 per launch is kept; the clock medians count each
distinct clock value (ncu_clocks.Tally). Nothing else grows with the launch count.
"""

from __future__ import annotations

import array
import hashlib
import io
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, BinaryIO, Protocol, cast

import numpy as np

from ikreport.analysis.ncu.clocks import CLOCK_FIELDS, Tally, too_short
from ikreport.analysis.ncu.export import Page
from ikreport.analysis.ncu.summary import LABELS, UNKNOWN, Derived, Summary, launch_csv, launch_summary
from ikreport.analysis.ncu.table import LaunchTable

# A record holds every launch's summary up to INLINE_LAUNCHES, else the LONGEST_LAUNCHES
# longest and cites the per-launch CSV (kinds/ncu_profile/data.py): the fold keeps those summaries.
INLINE_LAUNCHES = 500
LONGEST_LAUNCHES = 50


@dataclass(frozen=True)
class Facts:
    """What the launches show or lack, as a whole: the limitations of a record are drawn from
    these (collect/ncu_import.py)."""

    stalls: bool  # warp-stall metrics were captured
    bound: bool  # some launch has a bound label other than 'unknown'
    derived_durations: int  # launches whose duration is elapsed cycles over their clock
    timed: bool  # some launch has a duration
    untimed: int  # launches without a duration
    too_short: int  # launches whose export gives a duration under one ns (ncu_clocks.too_short)
    dram_gbs: bool  # some launch has a DRAM byte rate
    memory_pct: bool  # some launch has memory throughput as a % of peak
    sm_pct: bool  # some launch has SM throughput as a % of peak
    unread: tuple[str, ...]  # the fields, sorted, where a value's unit could not be read

    @classmethod
    def of(cls, t: LaunchTable, d: Derived) -> Facts:
        """The facts of one block of rows."""
        return cls(stalls=bool(t.stalls), bound=bool((d.bound != UNKNOWN).any()),
                   derived_durations=int(d.duration_derived.sum()) if d.duration_derived is not None else 0,
                   timed=_any(d.duration_us), untimed=int(np.isnan(d.duration_us).sum()),
                   too_short=int(too_short(t.fields).sum()), dram_gbs=_any(d.dram_gbs), memory_pct=_any(d.memory_pct),
                   sm_pct=_any(t.fields["sm_pct"]),
                   unread=tuple(sorted({p.split(":")[0] for said in t.problems.values() for p in said})))

    def __or__(self, other: Facts) -> Facts:
        """The facts of two sets of launches together."""
        return Facts(stalls=self.stalls or other.stalls, bound=self.bound or other.bound,
                     derived_durations=self.derived_durations + other.derived_durations,
                     timed=self.timed or other.timed, untimed=self.untimed + other.untimed,
                     too_short=self.too_short + other.too_short, dram_gbs=self.dram_gbs or other.dram_gbs,
                     memory_pct=self.memory_pct or other.memory_pct, sm_pct=self.sm_pct or other.sm_pct,
                     unread=tuple(sorted({*self.unread, *other.unread})))


def _any(column: np.ndarray) -> bool:
    """Whether some launch has a value (not NaN)."""
    return bool((~np.isnan(column)).any())


NO_FACTS = Facts(stalls=False, bound=False, derived_durations=0, timed=False, untimed=0, too_short=0, dram_gbs=False, memory_pct=False,
                 sm_pct=False, unread=())


class ByteSink(Protocol):
    """Where the per-launch CSV is written as it is made: a file, memory, or an import's spool."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...


@dataclass(frozen=True)
class LaunchCsv:
    """The per-launch CSV as written: where to (a stream the caller gave, or memory), its
    sha256 and its size in bytes."""

    out: ByteSink
    sha256: str
    size: int


@dataclass(frozen=True)
class Profile:
    """What a set of exports says: the per-kernel table, the launches a record keeps (all of
    them up to INLINE_LAUNCHES, else the LONGEST_LAUNCHES longest), the facts and clocks its
    limitations and provenance come from, and the per-launch CSV."""

    pages: dict[str, Page]  # export name -> page
    launch_count: int
    kernels: list[Summary]
    devices: list[str]  # GPU names the exports name, sorted
    compute_capabilities: list[str]
    profiled_time_us: float | None
    facts: Facts
    clocks: dict[str, Tally]  # ncu_clocks.CLOCK_FIELDS -> the launches' values
    metric_names: dict[str, str]  # field -> the metric name the first launch that has it was read from
    kernel_times: tuple[str, str] | None  # the export's own time of its first and last launch ("Kernel Time")
    kept: dict[int, Summary]  # launch row -> summary: the longest, and every launch of a small profile
    longest_rows: tuple[int, ...]  # the longest launches' rows, longest first (ties: earlier first)
    launch_csv: LaunchCsv
    messages: tuple[str, ...] = ()  # ncu's ==ERROR==/==WARNING== lines in the exports

    def launch(self, i: int) -> Summary:
        """Launch row ``i``'s summary: one of the longest, or any of a profile of at most
        INLINE_LAUNCHES launches."""
        return self.kept[i]

    @cached_property
    def launches(self) -> list[Summary]:
        """Every launch's summary, for a profile of at most INLINE_LAUNCHES launches."""
        if self.launch_count > INLINE_LAUNCHES:
            raise ValueError(f"{self.launch_count} launches: only the {LONGEST_LAUNCHES} longest are kept")
        return [self.kept[i] for i in range(self.launch_count)]

    def longest(self, n: int) -> list[int]:
        """Rows of the ``n`` longest launches (n <= LONGEST_LAUNCHES), in profiling order."""
        if n > LONGEST_LAUNCHES:
            raise ValueError(f"only the {LONGEST_LAUNCHES} longest launches are kept, not {n}")
        return sorted(self.longest_rows[:n])

    def csv(self) -> bytes:
        """The per-launch CSV, read back from where it was written."""
        out = cast(BinaryIO, self.launch_csv.out)  # read back only from memory or a file the caller gave
        out.seek(0)
        return out.read()


class _Kernels:
    """Per kernel name, in order of first launch: launches, timed launches, total, least and
    most time, first launch (row and summary), bound label votes, any derived duration."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.launches = np.zeros(0, dtype=np.int64)
        self.timed = np.zeros(0, dtype=np.int64)
        self.total = np.zeros(0)
        self.low = np.zeros(0)
        self.high = np.zeros(0)
        self.first = np.zeros(0, dtype=np.int64)
        self.votes = np.zeros((0, len(LABELS)), dtype=np.int64)
        self.derived = np.zeros(0, dtype=bool)
        self.first_launch: list[Summary] = []

    def _grow(self, k: int) -> None:
        more = k - len(self.launches)
        self.launches = np.concatenate([self.launches, np.zeros(more, dtype=np.int64)])
        self.timed = np.concatenate([self.timed, np.zeros(more, dtype=np.int64)])
        self.total = np.concatenate([self.total, np.zeros(more)])
        self.low = np.concatenate([self.low, np.full(more, np.inf)])
        self.high = np.concatenate([self.high, np.full(more, -np.inf)])
        self.first = np.concatenate([self.first, np.zeros(more, dtype=np.int64)])
        self.votes = np.concatenate([self.votes, np.zeros((more, len(LABELS)), dtype=np.int64)])
        self.derived = np.concatenate([self.derived, np.zeros(more, dtype=bool)])

    def add(self, t: LaunchTable, d: Derived, start: int) -> None:
        """Fold one block of rows, whose first is launch ``start``."""
        code = np.array([self.codes.setdefault(k, len(self.codes)) for k in t.kernels], dtype=np.int64)
        known, k = len(self.launches), len(self.codes)
        if k > known:  # kernels first launched in this block: their first row is here
            self._grow(k)
            new = np.flatnonzero(code >= known)
            _, at = np.unique(code[new], return_index=True)  # codes are numbered in order of first launch
            for c, row in zip(range(known, k), new[at]):
                self.first[c] = start + row
                self.first_launch.append(launch_summary(t, d, int(row), start))
        timed = ~np.isnan(d.duration_us)
        # one addition per launch, in profiling order: the sums np.bincount gives a whole column
        np.add.at(self.total, code, np.where(timed, d.duration_us, 0.0))
        self.launches += np.bincount(code, minlength=k)
        self.timed += np.bincount(code[timed], minlength=k)
        np.minimum.at(self.low, code[timed], d.duration_us[timed])
        np.maximum.at(self.high, code[timed], d.duration_us[timed])
        self.votes += np.bincount(code * len(LABELS) + d.bound, minlength=k * len(LABELS)).reshape(k, len(LABELS))
        if d.duration_derived is not None:
            self.derived[code[d.duration_derived]] = True

    def summaries(self, profiled: float) -> list[Summary]:
        """Per kernel name: launches, total/mean/min/max time, share of ``profiled`` time, the
        most common bound label, and the summary of its first launch. Longest total first."""
        out = []
        for name, c in self.codes.items():
            has = self.timed[c] > 0
            bound = int(np.argmax(self.votes[c]))
            out.append({
                "kernel": name,
                "launches": int(self.launches[c]),
                "first_index": int(self.first[c]),
                "total_us": round(float(self.total[c]), 3) if has else None,
                "mean_us": round(float(self.total[c] / self.timed[c]), 3) if has else None,
                "min_us": float(self.low[c]) if has else None,
                "max_us": float(self.high[c]) if has else None,
                "share_pct": round(100 * float(self.total[c]) / profiled, 1) if has and profiled else None,
                "bound": LABELS[bound],
                "bound_launches": int(self.votes[c][bound]),
                "first_launch": self.first_launch[c],
                **({"duration_derived": True} if self.derived[c] else {}),
            })
        return sorted(out, key=lambda x: (-(x["total_us"] or 0.0), x["kernel"]))


@dataclass
class Fold:
    """A profile folded from blocks of launches (``add`` each in profiling order, then
    ``profile``); the per-launch CSV goes to ``out`` as it comes (memory when none is given)."""

    out: ByteSink = field(default_factory=io.BytesIO)
    n: int = 0
    kernels: _Kernels = field(default_factory=_Kernels)
    kept: dict[int, Summary] = field(default_factory=dict)  # row -> summary of the longest launches so far
    head: list[tuple[LaunchTable, Derived, int]] = field(default_factory=list)  # (block, its columns, first row)
    top: list[tuple[float, int]] = field(default_factory=list)  # (-duration or 1.0 when untimed, row), in order
    # every launch's duration in µs (0 when untimed), 8 bytes each: an array.array grows in
    # place (realloc) and numpy reads it without a copy, where joining blocks would copy them all
    times: array.array[float] = field(default_factory=lambda: array.array("d"))
    devices: set[str] = field(default_factory=set)
    ccs: set[str] = field(default_factory=set)
    clocks: dict[str, Tally] = field(default_factory=lambda: {name: Tally() for name in CLOCK_FIELDS})
    names: dict[str, str] = field(default_factory=dict)
    times_seen: list[str] = field(default_factory=list)  # the first and the latest "Kernel Time"
    facts: Facts = NO_FACTS
    digest: Any = field(default_factory=hashlib.sha256)
    size: int = 0

    def add(self, t: LaunchTable, d: Derived) -> None:
        """Fold the next block of rows (its Derived columns: ``derive(t)``)."""
        if not t.n:
            return
        start, self.n = self.n, self.n + t.n
        self.kernels.add(t, d, start)
        # the blocks are kept while they could be every launch a record holds (summaries are
        # made at the end, only if they are: 500 summaries cost as much as 20,000 launches' CSV)
        self.head = self.head + [(t, d, start)] if self.n <= INLINE_LAUNCHES else []
        self._longest(t, d, start)
        self.times.frombytes(np.where(np.isnan(d.duration_us), 0.0, d.duration_us).tobytes())
        self.devices.update(v for v in t.text["device"] if v)
        self.ccs.update(v for v in t.text["cc"] if v)
        for name, tally in self.clocks.items():
            tally.add(t.fields[name])
        for key, name in t.names.items():
            self.names.setdefault(key, name)
        stamped = [v for v in t.text["kernel_time"] if v]
        if stamped:
            self.times_seen = [self.times_seen[0] if self.times_seen else stamped[0], stamped[-1]]
        self.facts = self.facts | Facts.of(t, d)
        rows = launch_csv(t, d, start)
        self.out.write(rows)
        self.digest.update(rows)
        self.size += len(rows)

    def _longest(self, t: LaunchTable, d: Derived, start: int) -> None:
        """Keep the LONGEST_LAUNCHES longest launches so far (and their summaries): the block's
        own longest merged with those, by (longer first, earlier first), as one sort of every
        launch would order them. A summary is made only for a launch that makes the list."""
        times = np.where(np.isnan(d.duration_us), -1.0, d.duration_us)
        rows = np.lexsort((np.arange(t.n), -times))[:LONGEST_LAUNCHES]
        merged = sorted(self.top + [(float(-times[r]), start + int(r)) for r in rows])[:LONGEST_LAUNCHES]
        for _, row in set(self.top) - set(merged):
            del self.kept[row]
        for _, row in merged:
            if row >= start and row not in self.kept:
                self.kept[row] = launch_summary(t, d, row - start, start)
        self.top = merged

    def profile(self, pages: dict[str, Page], messages: tuple[str, ...] = ()) -> Profile:
        """The profile of every block added."""
        profiled = float(np.frombuffer(self.times, dtype=np.float64).sum())
        self.out.flush()
        for t, d, start in self.head:  # a profile of at most INLINE_LAUNCHES: its record holds them all
            self.kept.update((start + i, launch_summary(t, d, i, start)) for i in range(t.n) if start + i not in self.kept)
        return Profile(
            pages=pages, launch_count=self.n, kernels=self.kernels.summaries(profiled),
            devices=sorted(self.devices), compute_capabilities=sorted(self.ccs),
            profiled_time_us=round(profiled, 3) if self.facts.timed else None, facts=self.facts, clocks=self.clocks,
            metric_names=self.names, kernel_times=(self.times_seen[0], self.times_seen[-1]) if self.times_seen
            else None, kept=self.kept, longest_rows=tuple(row for _, row in self.top),
            launch_csv=LaunchCsv(self.out, self.digest.hexdigest(), self.size), messages=messages,
        )
