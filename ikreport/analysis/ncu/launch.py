"""One profiled kernel launch as read from an export page, before the pages are merged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DIMS_RX = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$")


@dataclass
class Launch:
    """What one page says about one launch. Values are in base units (ns, bytes, bytes/s, %)."""

    id: str
    kernel: str
    fields: dict[str, float | None] = field(default_factory=dict)
    stalls: dict[str, tuple[str, float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    device: str | None = None  # the GPU's name where the page has it (raw: display_name)
    cc: str | None = None  # compute capability, e.g. "9.0"
    grid_dims: str | None = None  # "(x, y, z)" as ncu prints it
    block_dims: str | None = None
    kernel_time: str | None = None  # when ncu profiled it, as 2020.x details pages print it ("Kernel Time")
    rules: list[dict[str, str]] = field(default_factory=list)  # ncu's rule findings (details)
    flops: float | None = None  # see metrics.FLOP_TERMS
    flops_sass: bool = False  # SASS FP instruction counters were collected, so 0 FLOPs is a real 0
    line: int = 0  # body line (from 0) of the launch's first row, to name it in errors
    lines: dict[str, int] = field(default_factory=dict)  # field -> body line of the value read (details)
    names: dict[str, str] = field(default_factory=dict)  # field -> the metric name its value was read from


def dims_product(text: str | None) -> float | None:
    """'(152, 4, 1)' -> 608.0: the total blocks or threads of a launch dimension."""
    m = DIMS_RX.match((text or "").strip())
    if not m:
        return None
    x, y, z = (int(g) for g in m.groups())
    return float(x * y * z)
