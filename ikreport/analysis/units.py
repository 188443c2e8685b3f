"""ncu unit strings and value conversion to base units (ns, bytes, bytes/s, %).

ncu picks a unit per value (``usecond`` for one kernel, ``msecond`` for another), its
spelling changed between releases (``nsecond``/``Gbyte/second`` in 2020, ``ns``/``Gbyte/s``
later) and ``--print-units base`` gives ``byte/s`` and ``hz``. Units are parsed by
structure (SI prefix + byte + optional per-second) and every caller says which *kind* of
quantity it needs, so a value is never read in the wrong dimension: 763 ``Gbyte/s`` is
not 763 bytes/s, and 43 ``%`` is not 43 bytes/s.
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal["time", "bytes", "byte_rate", "percent", "count", "frequency"]

# Time units -> nanoseconds. Both spellings: 2020 releases wrote "nsecond", later ones "ns".
TIME_NS = {
    "nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3,
    "msecond": 1e6, "ms": 1e6, "second": 1e9, "s": 1e9,
}
SI_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# Byte amounts and rates: "byte", "Kbyte", "GB", "Gbyte/second", "Gbyte/s", "TB/s", "byte/s".
BYTES_RX = re.compile(r"^(?P<prefix>[KMGTP]?)(?:byte|B)(?P<rate>/(?:second|s))?$")
# Clock rates -> Hz: ncu's SM/DRAM Frequency rows say "Ghz" (2023+), "hz" (--print-units base)
# or "cycle/second" (2020); the raw gpc__cycles_elapsed.avg.per_second column "cycle/nsecond".
HZ_RX = re.compile(r"^(?:(?P<prefix>[KMGTkmg]?)hz|cycle/(?P<per>n?s(?:econd)?|u?s(?:econd)?|m?s(?:econd)?))$",
                   re.IGNORECASE)
# Units with a physical dimension this module does not convert (frequencies, per-ms rates,
# cycles per time, power): such a value is refused rather than read as a plain count.
OTHER_DIMENSION_RX = re.compile(
    r"byte|second|^[KMGTP]?B(/|$)|hz|watt|/(?:[num]?s)$", re.IGNORECASE
)
NUMBER_RX = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
# Printed by ncu where a metric has no value for this launch.
NOT_AVAILABLE = frozenset({"", "n/a", "N/A"})


def unit_kind(unit: str | None) -> tuple[Kind, float] | None:
    """(kind, factor to base units) for an ncu unit string; None when it cannot be converted.

    'usecond' -> ('time', 1e3); 'Gbyte/s' -> ('byte_rate', 1e9); 'Kbyte' -> ('bytes', 1e3);
    '%' -> ('percent', 1.0); 'block', 'register/thread', '' -> ('count', 1.0);
    'Ghz' -> ('frequency', 1e9); 'cycle/nsecond' -> ('frequency', 1e9); 'Gbyte/ms', 'watt' -> None.
    """
    u = (unit or "").strip()
    if u == "%":
        return "percent", 1.0
    if u in TIME_NS:
        return "time", TIME_NS[u]
    m = BYTES_RX.match(u)
    if m:
        return ("byte_rate" if m["rate"] else "bytes"), SI_PREFIX[m["prefix"]]
    m = HZ_RX.match(u)
    if m:
        if m["per"] is not None:  # cycles per time unit: per ns is 1e9 Hz
            per = m["per"].lower()
            return "frequency", 1e9 / TIME_NS[per if per in TIME_NS else per[0] + "second"]
        return "frequency", SI_PREFIX[(m["prefix"] or "").upper()]
    if OTHER_DIMENSION_RX.search(u):
        return None
    return "count", 1.0


def parse_number(text: object) -> float | None:
    """'1,234.5' -> 1234.5; thousands separators are allowed in decimals too. Else None."""
    s = str(text).replace(",", "").strip()
    if not NUMBER_RX.match(s):
        return None
    return float(s)


def unit_factor(unit: str | None, kind: Kind) -> float | None:
    """Factor that turns a value in ``unit`` into base units of ``kind``; None if it cannot.

    A percent field also accepts a bare number (no unit), as ncu prints some ratios.
    """
    found = unit_kind(unit)
    if found is None:
        return None
    got, factor = found
    if got == kind:
        return factor
    if kind == "percent" and got == "count" and not (unit or "").strip():
        return 1.0
    return None


def to_number(text: object, unit: str | None = "", kind: Kind | None = None) -> float | None:
    """'1,234.5' + 'usecond' -> 1234500.0 (ns). Non-numeric text, or a unit of another kind
    than ``kind``, gives None."""
    value = parse_number(text)
    if value is None:
        return None
    if kind is None:
        found = unit_kind(unit)
        return None if found is None else value * found[1]
    factor = unit_factor(unit, kind)
    return None if factor is None else value * factor


def is_missing(text: object) -> bool:
    """True for cells ncu leaves empty or marks 'n/a': absent, not unreadable."""
    return str(text).strip() in NOT_AVAILABLE
