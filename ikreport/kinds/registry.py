"""The registry of record kinds: what the generic code asks ("the rules for this kind", "its
view", "its charts"). A kind is one module in this package, or one package in it, and one line
below, with its data part (schema, data links, facts) beside the module as <module>.schema.json,
or inside the package as <package>/<package>.schema.json (see store/schema_parts.py)."""

from __future__ import annotations

from ikreport.kinds import (comparison, environment, ncu_profile, nsys_kernel_summary, peak_bandwidth, serving_benchmark,
                            supersession)
from ikreport.kinds.base import ChartMakers, Kind

KINDS: dict[str, Kind] = {k.name: k for k in (
    ncu_profile.KIND,
    peak_bandwidth.KIND,
    environment.KIND,
    comparison.KIND,
    supersession.KIND,
    serving_benchmark.KIND,
    nsys_kernel_summary.KIND,
)}


def kind(name: str) -> Kind:
    """The kind called ``name``; one with nothing specific (no rules, view or charts) when unknown."""
    return KINDS.get(name) or Kind(name)


def chart_makers() -> ChartMakers:
    """Every kind's charts: chart name -> (template maker, rows -> (shape, datasets))."""
    return {name: makers for k in KINDS.values() for name, makers in k.charts.items()}
