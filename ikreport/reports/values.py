"""Look up a value in a record by path and format it with its unit (pure).

A path is dot-separated keys and list indices: ``data.peak_gbs``, ``data.kernels.0.share_pct``,
``subject.gpu``. The unit comes from the field name's suffix, the naming rule every record
kind follows (``_gbs`` GB/s, ``_us`` µs, ``_s`` and ``_ns`` as durations, ``_pct`` %, ``_hz``
and ``_khz`` as GHz or MHz, ``_mhz`` MHz, ``flops_per_s`` FLOP/s, ``flops`` FLOP,
``arithmetic_intensity`` FLOP/byte, ``request_throughput`` requests/s and other
``_throughput`` tokens/s, ``_w`` W, ``_mib`` MiB, ``_bytes`` bytes), so a report
never types a unit either. A ``_ci`` field is an interval, a
pair of numbers, and reads ``0.792–0.803`` (a comparison's ``data.kernels.0.ratio_ci``).
"""

from __future__ import annotations

import difflib
from typing import Any

from ikreport.errors import PathError
from ikreport.formatting import fmt_duration_us, fmt_flops, fmt_gbs, fmt_hz, fmt_number, fmt_pct


ALL_KEYS = 12  # a mistyped key shows every key of an object this small, else the nearest matches


def lookup(record: dict[str, Any], path: str) -> Any:
    """The value at ``path`` in ``record``; PathError naming where the path stops when there is none."""
    node: Any = record
    walked: list[str] = []
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        # a list is indexed by a short run of ASCII digits (a 5000-digit index would hit Python's
        # limit on int() and is never an index anyway)
        elif isinstance(node, list) and part.isascii() and part.isdigit() and len(part) < 19 and int(part) < len(node):
            node = node[int(part)]
        else:
            where = ".".join(walked) or "the record"
            if isinstance(node, dict):
                raise PathError(f"{path}: {where} has no {part!r} ({_keys_hint(part, node)})")
            if isinstance(node, list):
                raise PathError(f"{path}: {where} is a list of {len(node)}; {part!r} is not an index in it")
            raise PathError(f"{path}: {where} is a value, not an object")
        walked.append(part)
    if _is_interval(path, node):
        return node
    if isinstance(node, (dict, list)):
        raise PathError(f"{path}: leads to {'an object' if isinstance(node, dict) else 'a list'}, not a value")
    return node


def _is_interval(path: str, node: Any) -> bool:
    return (path.endswith("_ci") and isinstance(node, list) and len(node) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in node))


def _keys_hint(part: str, node: dict[str, Any]) -> str:
    """What a mistyped key could have been: every key when there are few, else the nearest."""
    keys = sorted(node)
    if len(keys) <= ALL_KEYS:
        return f"it has {', '.join(keys)}"
    near = difflib.get_close_matches(part, keys, n=5, cutoff=0.6)
    if near:
        options = f"{', '.join(near[:-1])} or {near[-1]}" if len(near) > 1 else near[0]
        return f"did you mean {options}? it has {len(keys)} keys"
    return f"it has {', '.join(keys)}"


# units whose precision a page chooses (formatting.distinct_digits): field suffix -> formatter
PAGE_PRECISION = {"_gbs": fmt_gbs, "_us": fmt_duration_us}


def precision_unit(path: str, value: Any) -> str | None:
    """The PAGE_PRECISION suffix of a numeric value's field, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    name = path.rsplit(".", 1)[-1]
    # the whole name may be the unit's, as a sample's "gbs" is
    return next((suffix for suffix in PAGE_PRECISION if name.endswith(suffix) or name == suffix[1:]), None)


def format_value(path: str, value: Any, digits: int | None = None) -> str:
    """A value as a reader reads it, with the unit its field name says; GB/s and durations at
    ``digits`` significant digits when the page chose them."""
    if value is None:
        return "n/a"
    if _is_interval(path, value):  # a ratio's interval, to the ratio's three decimals
        return f"{value[0]:.3f}–{value[1]:.3f}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    name = path.rsplit(".", 1)[-1]
    unit = precision_unit(path, value)
    if unit is not None:
        return PAGE_PRECISION[unit](float(value), digits)
    for suffix, formatter in CONVERTED:
        if name == suffix.lstrip("_") or name.endswith(suffix):
            return formatter(float(value))
    for suffix, unit in (("_mhz", " MHz"), ("_w", " W"), ("_mib", " MiB"), ("_bytes", " bytes"), ("_mb", " MB")):
        if name.endswith(suffix):
            return f"{fmt_number(value)}{unit}"
    return fmt_number(value)


# field suffix (or whole name) -> formatter of its value in a unit a reader reads; first match wins
CONVERTED: tuple[tuple[str, Any], ...] = (
    ("_pct", fmt_pct),
    ("_flops_per_s", fmt_flops),
    ("_khz", lambda v: fmt_hz(v * 1e3)),
    ("_hz", fmt_hz),
    ("_ns", lambda v: fmt_duration_us(v / 1e3)),
    ("_ms", lambda v: fmt_duration_us(v * 1e3)),
    ("_s", lambda v: fmt_duration_us(v * 1e6)),
    ("_flops", lambda v: fmt_flops(v).replace("/s", "")),
    ("_arithmetic_intensity", lambda v: f"{v:,.3g} FLOP/byte"),
    # a serving benchmark's throughputs, as the load generators name them
    ("request_throughput", lambda v: f"{fmt_number(v)} requests/s"),
    ("request_goodput", lambda v: f"{fmt_number(v)} requests/s"),
    ("_throughput", lambda v: f"{fmt_number(v)} tokens/s"),
)
UNIT_SUFFIXES = ("_gbs", "_us", "_pct", "_flops_per_s", "_khz", "_mhz", "_hz", "_ns", "_ms", "_s", "_w", "_mib",
                 "_bytes", "_mb")


def field_label(name: str) -> str:
    """A field's name as a reader reads it, its unit left to the value: 'threshold_pct' ->
    'threshold' (shown with format_value's '5%'), 'min_samples' -> 'min samples'."""
    for suffix in UNIT_SUFFIXES:
        if name == suffix.lstrip("_"):  # the whole name is the unit's: 'flops_per_s' stays whole
            break
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    return name.replace("_", " ")
