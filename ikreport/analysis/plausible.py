"""What hardware can measure: the one set of bounds every parser and collector checks against.

A number outside these bounds is a damaged or edited file, a unit slip or a broken timer,
never a measurement, so it is refused with the place it came from (``FILE:LINE``, or the
sample) instead of being published as, say, a "measured peak" of 1e30 GB/s.

The bounds are deliberately loose: they catch what cannot be, not what is merely unusual.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ikreport.analysis.units import Kind
from ikreport.errors import ImplausibleValueError

# Memory bandwidth of one GPU, read + write GB/s (1e9 bytes/s). The fastest memory shipping or
# announced by 2026 is HBM4 at about 22 TB/s per GPU (NVIDIA Rubin; B200/B300 and MI355X have
# 8 TB/s), and a copy that stays in L2 can beat the DRAM figure, so 20 TB/s would refuse real
# runs. 50 TB/s leaves room for that and still refuses every MB/s-read-as-GB/s slip (1000x)
# on any GPU faster than 50 GB/s, and the 1e30 of a forged file.
MAX_MEMORY_GBS = 50_000.0
# The slowest memory anything here measures (a 64-bit DDR3 GT 710: 14 GB/s; a Raspberry Pi
# running BabelStream on its CPU: about 4 GB/s) is above this; below it, a rate rounds to 0.0.
MIN_MEMORY_GBS = 1.0
# ncu rounds a percentage of peak to two decimals, and counters sampled on different replays
# can put a busy unit a little over 100; beyond 101 it is not a measurement. (ncu itself
# prints such values for kernels too small to fill the GPU; NVIDIA says they were not
# collected accurately.)
MAX_PERCENT = 101.0
# Floating-point work of one GPU, FLOP/s. The fastest dense tensor rate shipping or announced by
# 2026 is about 2e16 (FP4 on a B300 / Rubin); 1e18 refuses a per-cycle value read as per second
# or a forged file and keeps room for parts to come. The record schema holds the same bound.
MAX_FLOPS_PER_S = 1e18

NCU_FIX = "the export is damaged or edited; export it again with ncu --csv"
# ncu itself prints a percent out of 0..100 for a metric it could not collect accurately
# (NVIDIA's answer to an L2 hit rate of 171 %): say so, and how to avoid it
NCU_PERCENT_FIX = ("ncu prints such a value only for a metric it could not collect accurately (a launch too small "
                   "to fill the GPU), or the file was edited; profile a larger launch, or leave this kernel out "
                   "with ncu --kernel-name")


def _shown(value: float) -> str:
    return f"{value:g}"


def finite(value: float, where: str, what: str, fix: str) -> float:
    """``value`` when it is a finite number; NaN and infinities are refused."""
    if not math.isfinite(value):
        raise ImplausibleValueError(f"{where}: {what} is {_shown(value)}, not a finite number; {fix}")
    return value


def at_least_zero(value: float, where: str, what: str, unit: str, fix: str) -> float:
    """A time, amount or count: finite and not below zero."""
    finite(value, where, what, fix)
    if value < 0:
        shown = f"{_shown(value)} {unit}".rstrip()
        raise ImplausibleValueError(f"{where}: {what} is {shown}, below zero; {fix}")
    return value


def above_zero(value: float, where: str, what: str, unit: str, fix: str) -> float:
    """A time that something took: finite and above zero."""
    finite(value, where, what, fix)
    if value <= 0:
        raise ImplausibleValueError(f"{where}: {what} is {_shown(value)} {unit}, not above zero; {fix}")
    return value


def _at_most(value: float, limit: float, where: str, what: str, unit: str, beyond: str, fix: str) -> float:
    """``value`` when it is at least zero and at most ``limit``; ``beyond`` says why past it is not real."""
    if value > limit:
        raise ImplausibleValueError(f"{where}: {what} is {_shown(value)} {unit}, above {limit:g} {unit}{beyond}; {fix}")
    return value


def percent(value: float, where: str, what: str, fix: str) -> float:
    """A percentage of a peak: 0 to MAX_PERCENT."""
    at_least_zero(value, where, what, "%", fix)
    return _at_most(value, MAX_PERCENT, where, what, "%", " (more than rounding can put over 100 %)", fix)


def flops_per_s(value: float, where: str, what: str, fix: str) -> float:
    """One GPU's floating-point work per second: 0 to MAX_FLOPS_PER_S."""
    at_least_zero(value, where, what, "FLOP/s", fix)
    return _at_most(value, MAX_FLOPS_PER_S, where, what, "FLOP/s", ", more than any GPU computes", fix)


def memory_gbs(value: float, where: str, what: str, fix: str) -> float:
    """One GPU's memory bandwidth in read + write GB/s: MIN_MEMORY_GBS to MAX_MEMORY_GBS."""
    finite(value, where, what, fix)
    if value < MIN_MEMORY_GBS:
        raise ImplausibleValueError(f"{where}: {what} is {_shown(value)} GB/s, below {MIN_MEMORY_GBS:g} GB/s, "
                                    f"less than any memory moves; {fix}")
    return _at_most(value, MAX_MEMORY_GBS, where, what, "GB/s", ", more than any GPU's memory moves", fix)


# the base unit of each kind of ncu column (units.py converts every value to it)
BASE_UNIT: dict[Kind, str] = {"time": "ns", "bytes": "byte", "byte_rate": "byte/s", "percent": "%", "count": "",
                              "frequency": "Hz"}


def check_column(values: np.ndarray, kind: Kind, what: str, where: Callable[[int], str], fix: str = NCU_FIX) -> None:
    """Refuse the first implausible value of a column (NaN is a missing value, not checked).

    Column-wise first, so a clean column of 20,000 launches costs a few numpy passes; only a
    bad row is looked at one by one, to name it."""
    with np.errstate(invalid="ignore"):
        bad = np.isinf(values) | (values < 0)
        if kind == "percent":
            bad |= values > MAX_PERCENT
        elif kind == "byte_rate":
            bad |= values / 1e9 > MAX_MEMORY_GBS
    if not bad.any():
        return
    row = int(np.flatnonzero(bad)[0])
    value = float(values[row])
    if kind == "percent":
        percent(value, where(row), what, fix)
    elif kind == "byte_rate":
        at_least_zero(value, where(row), what, "byte/s", fix)
        memory_gbs(value / 1e9, where(row), what, fix)
    at_least_zero(value, where(row), what, BASE_UNIT.get(kind, ""), fix)
