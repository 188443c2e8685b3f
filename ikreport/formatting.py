"""Fixed number formatting for every page and message, so output is deterministic."""

from __future__ import annotations


def short(record_id: str) -> str:
    """The 8-digit form shown in citations: [ab12cd34]."""
    return record_id[:8]


def plural(n: int, one: str, many: str) -> str:
    """'1 launch', '11 launches'."""
    return f"{n} {one if n == 1 else many}"


def fmt_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def fmt_duration_us(value: float | None) -> str:
    """Microseconds in the unit a reader expects: 812 ns, 23.4 µs, 2.10 ms, 1.25 s."""
    if value is None:
        return "n/a"
    if value < 1:
        return f"{value * 1e3:.0f} ns"
    if value < 1e3:
        return f"{value:.3g} µs" if value < 100 else f"{value:.0f} µs"
    if value < 1e6:
        return f"{value / 1e3:.3g} ms" if value < 1e5 else f"{value / 1e3:.0f} ms"
    return f"{value / 1e6:.3g} s"


def fmt_gbs(value: float | None) -> str:
    return "n/a" if value is None else (f"{value / 1e3:.2f} TB/s" if value >= 1e3 else f"{value:.1f} GB/s")


def fmt_number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"
