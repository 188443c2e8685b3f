"""The record kinds: each lives in one module behind the registry (issue 13, item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ikreport.kinds.registry import KINDS, kind, record_schema

PACKAGE = Path(__file__).resolve().parents[1] / "ikreport"
# "environment" is also the name of a record's envelope field (the environment record it cites)
FIELD_NAMES = {"environment"}


def test_a_kind_name_is_spelled_only_in_its_module() -> None:
    for name in sorted(set(KINDS) - FIELD_NAMES):
        quoted = re.compile(rf"[\"']{re.escape(name)}[\"']")
        found = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if quoted.search(p.read_text()))
        assert found == [f"kinds/{name.replace('-', '_')}.py"], name


def test_the_generic_code_never_asks_for_a_kind_by_name() -> None:
    asks = re.compile(r"\[\"kind\"\]\s*[!=]=\s*[\"']")
    assert [p for p in PACKAGE.rglob("*.py") if asks.search(p.read_text())] == []


def test_an_unknown_kind_adds_nothing() -> None:
    other = kind("not-a-kind")
    assert (other.rules, other.view, other.facts({}), other.show({}), other.data_links) == ((), None, {}, [], ())


def test_the_schema_checks_each_kinds_data_by_its_own_part() -> None:
    envelope = json.loads((PACKAGE / "schema" / "record-1.json").read_text())
    schema = record_schema(envelope)
    for name, k in KINDS.items():
        assert k.schema is not None and schema["$defs"][name] == k.schema["data"]
        assert {"if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                "then": {"properties": {"data": {"$ref": f"#/$defs/{name}"}}}} in schema["allOf"]
    assert not set(KINDS) & set(envelope["$defs"])  # the envelope holds no kind's data
