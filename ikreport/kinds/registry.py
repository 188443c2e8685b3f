"""The registry of record kinds: what the generic code asks ("the rules for this kind", "its
view", "its facts", "its charts"). A kind is one module in this package and one line below."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.kinds import comparison, environment, ncu_profile, peak_bandwidth, supersession
from ikreport.kinds.base import ChartMakers, Kind

KINDS: dict[str, Kind] = {k.name: k for k in (
    ncu_profile.KIND,
    peak_bandwidth.KIND,
    environment.KIND,
    comparison.KIND,
    supersession.KIND,
)}


def kind(name: str) -> Kind:
    """The kind called ``name``; one with nothing specific (no facts, rules or view) when unknown."""
    return KINDS.get(name) or Kind(name)


def record_facts(record: Mapping[str, Any]) -> dict[str, Any]:
    """The few values of a record's data that pages about the whole archive show (see Kind.facts)."""
    return kind(record["kind"]).facts(record["data"])


def record_schema(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The schema records are checked against: the envelope (schema/record-1.json) with each
    kind's part (kinds/<kind>.schema.json) added, in this registry's order: its $defs, its data
    as ``$defs/<kind>`` checked when ``kind`` is its name, and its own rules."""
    defs = dict(envelope["$defs"])
    by_kind, own_rules = [], []
    for k in KINDS.values():
        if k.schema is None:
            continue
        defs.update(k.schema.get("$defs", {}))
        defs[k.name] = k.schema["data"]
        by_kind.append({"if": {"properties": {"kind": {"const": k.name}}, "required": ["kind"]},
                        "then": {"properties": {"data": {"$ref": f"#/$defs/{k.name}"}}}})
        own_rules.extend(k.schema.get("allOf", []))
    limited = [k.name for k in KINDS.values() if k.schema and k.schema["limitations_required"]]
    # the order of allOf is the order errors are found in, and so which one a message names
    rules = [{"if": {"properties": {"kind": {"enum": limited}}},
              "then": {"properties": {"limitations": {"minItems": 1}}}},
             *by_kind, *own_rules, *envelope["allOf"]]
    return {**envelope, "$defs": defs, "allOf": rules}


def chart_makers() -> ChartMakers:
    """Every kind's charts: chart name -> (template maker, rows -> (shape, datasets))."""
    return {name: makers for k in KINDS.values() for name, makers in k.charts.items()}
