"""The record kinds: each lives in one module behind the registry (issue 13, item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ikreport.kinds.registry import KINDS, kind
from ikreport.store.recordset import RecordSet
from ikreport.store.schema_parts import data_links, parts, record_facts, record_schema

PACKAGE = Path(__file__).resolve().parents[1] / "ikreport"
# "environment" is also the name of a record's envelope field (the environment record it cites)
FIELD_NAMES = {"environment"}


def test_facts_follow_the_paths_their_part_names() -> None:
    record = {"kind": "ncu-profile", "data": {"launch_count": 3, "kernels": [{"kernel": "k"}, {"kernel": "j"}]}}
    assert record_facts(record) == {"launch_count": 3, "profiled_time_us": None, "top_kernel": "k", "top_kernel_us": None,
                                    "kernel_names": ["k", "j"],  # "*": every kernel, for search
                                    "launches_complete": None}
    assert record_facts({**record, "data": {"kernels": []}})["top_kernel"] is None
    assert record_facts({**record, "data": {}})["kernel_names"] is None


def _home(name: str) -> Path:
    """Where a kind lives: its module, or its package when it has one."""
    folder = PACKAGE / "kinds" / name.replace("-", "_")
    return folder if folder.is_dir() else folder.with_suffix(".py")


def test_a_kind_name_is_spelled_only_in_its_module() -> None:
    for name in sorted(set(KINDS) - FIELD_NAMES):
        quoted = re.compile(rf"[\"']{re.escape(name)}[\"']")
        found = [p for p in PACKAGE.rglob("*.py") if quoted.search(p.read_text())]
        home = _home(name)
        assert found and all(p == home or home in p.parents for p in found), (name, found)


def test_the_generic_code_never_asks_for_a_kind_by_name() -> None:
    asks = re.compile(r"\[\"kind\"\]\s*[!=]=\s*[\"']")
    assert [p for p in PACKAGE.rglob("*.py") if asks.search(p.read_text())] == []


def test_an_unknown_kind_adds_nothing() -> None:
    other = kind("not-a-kind")
    assert (other.rules, other.view, other.show({}, RecordSet.of({})), other.charts) == ((), None, [], {})
    assert data_links("not-a-kind") == () and record_facts({"kind": "not-a-kind", "data": {}}) == {}


def test_every_kind_has_its_data_part_beside_its_module_or_in_its_package() -> None:
    assert sorted(parts()) == sorted(KINDS)
    for name in KINDS:
        home = _home(name)
        file = f"{name.replace('-', '_')}.schema.json"
        part = json.loads((home / file if home.is_dir() else home.parent / file).read_text())
        assert part["kind"] == name


def test_the_schema_checks_each_kinds_data_by_its_own_part() -> None:
    envelope = json.loads((PACKAGE / "schema" / "record-1.json").read_text())
    schema = record_schema(envelope)
    for name, part in parts().items():
        assert schema["$defs"][name] == part["data"]
        assert {"if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                "then": {"properties": {"data": {"$ref": f"#/$defs/{name}"}}}} in schema["allOf"]
    assert not set(KINDS) & set(envelope["$defs"])  # the envelope holds no kind's data


def test_each_profile_rule_id_has_a_function_of_its_own() -> None:
    """Over the sample archive's profiles, each of the functions profile_claims chains makes
    claims of the rule it is named after and of no other, and together they make all seven."""
    from conftest import ROOT

    from ikreport.kinds.ncu_profile.claims import KERNEL_RULES, ProfileContext, TopKernel, profile_size
    from ikreport.kinds.ncu_profile.data import first_launch
    from ikreport.kinds.ncu_profile.measured_peak import measured_peak

    files = sorted((ROOT / "sample_evidence" / "records").rglob("*.json"))
    records = RecordSet.of({p.parent.name + p.stem: json.loads(p.read_text()) for p in files})
    rules: dict[str, set[str]] = {f.__name__: set() for f in (profile_size, *KERNEL_RULES)}
    for rid, record in records.records.items():
        if record["kind"] != "ncu-profile":
            continue
        p = ProfileContext(rid, record, records, None, *measured_peak(record, records), None)
        rules["profile_size"] |= {c.rule for c in profile_size(p)}
        for row in record["data"]["kernels"]:
            k = TopKernel(row, row["kernel"], row["kernel"], first_launch(record["data"], row))
            for f in KERNEL_RULES:
                rules[f.__name__] |= {c.rule for c in f(p, k)}
    assert len(rules) == 7 and rules == {name: {name.replace("_", "-")} for name in rules}
