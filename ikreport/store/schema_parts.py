"""Each kind's data part (``kinds/<kind>.schema.json``, or ``kinds/<kind>/<kind>.schema.json``
for a kind that is a package): its part of the record schema, the keys of its ``data`` that
name other records, and its facts. These are read as JSON, without importing the kinds' code
(rules, views, charts), so the store checks and summarises records with them and loads no more
than it did: a kind's part sits beside its module, or inside its package."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

SUFFIX = ".schema.json"


def _part_files() -> list[tuple[str, Traversable]]:
    """(file name, file) of every kind's part, in the order of their file names: those beside
    a kind's module in kinds/ and those inside a kind's package (one folder down)."""
    folder = resources.files("ikreport").joinpath("kinds")
    found = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found += [(p.name, p) for p in entry.iterdir() if p.name.endswith(SUFFIX) and p.is_file()]
        elif entry.name.endswith(SUFFIX):
            found.append((entry.name, entry))
    return sorted(found, key=lambda named: named[0])


@lru_cache(maxsize=1)
def parts() -> dict[str, dict[str, Any]]:
    """kind name -> its part, in the order of the parts' file names."""
    found = {}
    for _, file in _part_files():
        part = json.loads(file.read_text("utf-8"))
        found[part["kind"]] = part
    return found


def digest_input() -> bytes:
    """The bytes of every part and of this file: what a cache of checked records depends on."""
    here = resources.files("ikreport").joinpath("store/schema_parts.py").read_bytes()
    return b"".join(name.encode() + file.read_bytes() for name, file in _part_files()) + here


def record_schema(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The schema records are checked against: the envelope (schema/record-1.json) with each
    kind's part added: its $defs, its data as ``$defs/<kind>`` checked when ``kind`` is its
    name, and its own rules."""
    defs = dict(envelope["$defs"])
    by_kind, own_rules = [], []
    for name, part in parts().items():
        defs.update(part.get("$defs", {}))
        defs[name] = part["data"]
        by_kind.append({"if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                        "then": {"properties": {"data": {"$ref": f"#/$defs/{name}"}}}})
        own_rules.extend(part.get("allOf", []))
    limited = [name for name, part in parts().items() if part["limitations_required"]]
    # the order of allOf is the order errors are found in: a record breaking the limitations
    # rule and its data's hears of the limitations first
    rules = [{"if": {"properties": {"kind": {"enum": limited}}},
              "then": {"properties": {"limitations": {"minItems": 1}}}},
             *by_kind, *own_rules, *envelope["allOf"]]
    return {**envelope, "$defs": defs, "allOf": rules}


def data_links(kind: str) -> tuple[str, ...]:
    """The keys of a ``kind`` record's data that name another record (none for an unknown kind)."""
    return tuple(parts().get(kind, {}).get("data_links", ()))


def successor_key(kind: str) -> str | None:
    """The key of a ``kind`` record's data naming the record that replaces each record it
    supersedes (None for a kind that states no replacement)."""
    return parts().get(kind, {}).get("successor")


def record_facts(record: Mapping[str, Any]) -> dict[str, Any]:
    """The few values of a record's data that pages about the whole archive show, as its kind's
    part names them (``"facts": {name: path into data}``); None for those the record lacks."""
    data = record["data"]
    return {name: _at(data, path) for name, path in parts().get(record["kind"], {}).get("facts", {}).items()}


def _at(value: Any, path: list[str | int]) -> Any:
    for n, step in enumerate(path):
        if step == "*":  # every item of a list, each followed along the rest of the path
            return [_at(item, path[n + 1:]) for item in value] if isinstance(value, list) else None
        if isinstance(step, int):
            value = value[step] if isinstance(value, list) and len(value) > step else None
        else:
            value = value.get(step) if isinstance(value, dict) else None
    return value
