"""Clocks from ncu's counters: the clock a profile ran at, and durations derived from cycles.

Accepts the columns of a LaunchTable (analysis/ncu/table.py), in base units:

- ``sm_hz``: SM clock in Hz, from the raw column ``gpc__cycles_elapsed.avg.per_second`` or the
  details page's ``SM Frequency`` row (ncu's SpeedOfLight section reads that same metric);
- ``dram_hz``: DRAM clock in Hz (``dram__cycles_elapsed.avg.per_second``, ``DRAM Frequency``,
  2020's ``Memory Frequency``);
- ``cycles``: the launch's elapsed SM cycles (``gpc__cycles_elapsed.max``, ``Elapsed Cycles``, or
  the ``sm__``/``smsp__`` spellings); ``dram_cycles``: its elapsed DRAM cycles;
- ``max_sm_khz``: the device's top SM clock in kHz (``device__attribute_max_gpu_frequency_khz``).

ncu's own Duration is gpu__time_duration; where an export lacks it, elapsed cycles over the SM
clock (else DRAM cycles over the DRAM clock) give the same length (on the real exports in tests/fixtures the two agree to within the
rounding of the printed clock), and such durations are marked derived.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# ncu measures gpu__time_duration in whole nanoseconds and no kernel launch is shorter: a duration
# under one is a zero or a value rounded away by the unit it was printed in, never a timing
MIN_DURATION_NS = 1.0
SOURCES = {
    "sm_hz": "ncu's SM Frequency (gpc__cycles_elapsed.avg.per_second)",
    "dram_hz": "ncu's DRAM Frequency (dram__cycles_elapsed.avg.per_second)",
    "max_sm_khz": "the export's device attribute max_gpu_frequency_khz",
}


def durations_ns(fields: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(duration in ns per launch, bool mask of the ones derived from cycles over a clock).

    A measured duration always wins; a launch without one gets its elapsed SM cycles over its
    SM clock, else its elapsed DRAM cycles over its DRAM clock, when both of a pair are there
    and above zero; else it stays NaN. A duration under MIN_DURATION_NS is no timing."""
    measured = fields["duration_ns"]
    out = np.where(measured >= MIN_DURATION_NS, measured, np.nan)
    for cycles, hz in ((fields["cycles"], fields["sm_hz"]), (fields["dram_cycles"], fields["dram_hz"])):
        with np.errstate(invalid="ignore", divide="ignore"):
            derived = np.where((cycles > 0) & (hz > 0), cycles / hz * 1e9, np.nan)
        out = np.where(np.isnan(out) & (derived >= MIN_DURATION_NS), derived, out)
    use = ~(measured >= MIN_DURATION_NS) & ~np.isnan(out)
    return out, use


def too_short(fields: dict[str, np.ndarray]) -> np.ndarray:
    """Launches whose export gives a duration under MIN_DURATION_NS: zero, or rounded to zero at
    the precision it was printed with (0.00 usecond)."""
    measured = fields["duration_ns"]
    return (measured >= 0) & (measured < MIN_DURATION_NS)


CLOCK_FIELDS = tuple(SOURCES)  # the columns clock_summary takes medians of


class Tally:
    """The positive values of a column and how often each occurs, added a block of launches at
    a time: an exact median without a value kept per launch (a clock column holds few distinct
    values: ncu prints a clock to a few digits, and the device's top clock is one value)."""

    def __init__(self) -> None:
        self.values = np.zeros(0)  # distinct, ascending
        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, column: np.ndarray) -> None:
        """Count the positive values of one block of launches (NaN and <= 0 give no clock)."""
        new, counts = np.unique(column[column > 0], return_counts=True)
        if not len(new):
            return
        values, where = np.unique(np.concatenate([self.values, new]), return_inverse=True)
        merged = np.zeros(len(values), dtype=np.int64)
        np.add.at(merged, where, np.concatenate([self.counts, counts]))
        self.values, self.counts = values, merged

    @property
    def count(self) -> int:
        return int(self.counts.sum())

    def median(self) -> float | None:
        """numpy's median of the values counted: the middle one, or the mean of the middle two."""
        n = self.count
        if not n:
            return None
        ends = np.cumsum(self.counts)  # the value at sorted position p is the first with ends > p
        low, high = (self.values[np.searchsorted(ends, p, side="right")] for p in ((n - 1) // 2, n // 2))
        return float((low + high) / 2)  # as np.median; exact when the two are one value


def clock_source(field: str, name: str | None) -> str:
    """Where a clock was read, by the metric name the export gave it: a raw metric as it is
    ('sm__cycles_elapsed.avg.per_second'), a details row as ncu's row of that name."""
    if not name:
        return SOURCES[field]
    return name if "__" in name else f"ncu's {name} row"


def clock_summary(tallies: dict[str, Tally], max_sm_khz: float | None = None,
                  max_source: str | None = None, names: dict[str, str] | None = None) -> dict[str, Any] | None:
    """What the exports say of the clocks: the median SM (and DRAM) clock over the launches
    that give one, and the device's top SM clock with where it came from; None when no launch
    gives an SM clock. ``tallies`` counts the launches' CLOCK_FIELDS; ``max_sm_khz`` (e.g. from
    a session page) wins over the export's column."""
    sm = tallies["sm_hz"].median()
    if sm is None:
        return None
    names = names or {}
    out: dict[str, Any] = {"sm_hz": round(sm), "sm_source": clock_source("sm_hz", names.get("sm_hz")),
                           "launches": tallies["sm_hz"].count}
    dram = tallies["dram_hz"].median()
    if dram is not None:
        out["dram_hz"] = round(dram)
        out["dram_source"] = clock_source("dram_hz", names.get("dram_hz"))
    if max_sm_khz is None:
        max_sm_khz = tallies["max_sm_khz"].median()
        max_source = clock_source("max_sm_khz", names.get("max_sm_khz"))
    if max_sm_khz:
        out["max_sm_hz"] = round(max_sm_khz * 1e3)
        out["max_source"] = max_source
    return out


def clock_fact(sm_hz: float, max_sm_hz: float | None, base_sm_hz: float | None = None,
               control: tuple[str, str] | None = None) -> str:
    """'SM at 2.40 GHz (maximum 2.57 GHz, base 2.41 GHz); ncu ran with --clock-control base
    (observed …): clocks locked to base' (pure). Whether clocks were locked is said only from
    the recorded ``control`` (value, how it is known), never guessed from the clock's share
    of the maximum: on many cards the base clock is above nine tenths of it."""
    text = f"SM at {sm_hz / 1e9:.2f} GHz"
    bounds = [f"maximum {max_sm_hz / 1e9:.3g} GHz" if max_sm_hz else "", f"base {base_sm_hz / 1e9:.3g} GHz"
              if base_sm_hz else ""]
    if any(bounds):
        text += f" ({', '.join(b for b in bounds if b)})"
    if control is None:
        return text + ("; the export does not say whether ncu locked the clocks (its default, --clock-control "
                       "base, locks them at base)")
    value, how = control
    return text + f"; ncu ran with --clock-control {value} ({how})" + CONTROL_EFFECT.get(value, "")


# what each --clock-control value did to the clocks a profile shows
CONTROL_EFFECT = {"base": ": clocks locked at base", "none": ": clocks not locked, as the program runs"}
