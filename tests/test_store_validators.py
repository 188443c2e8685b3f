"""records.py validates with jsonschema-rs and words errors with jsonschema (its comment says
why both): the two must agree on what is valid, or a record jsonschema-rs refuses would be
refused with no error to show. Checked on the sample records and on broken copies of the smallest
record of each kind."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from ikreport.errors import RecordError
from ikreport.store import records

SAMPLE = Path(__file__).resolve().parents[1] / "sample_evidence" / "records"
BREAKS = (None, 12345, "x", [], {})


def sample_records() -> list[dict]:
    return [orjson.loads(p.read_bytes()) for p in sorted(SAMPLE.glob("*/*.json"))]


def smallest_of_each_kind() -> list[dict]:
    by_kind: dict[str, dict] = {}
    for record in sorted(sample_records(), key=lambda r: len(orjson.dumps(r))):
        by_kind.setdefault(record["kind"], record)
    return list(by_kind.values())


def broken_copies(record: dict):
    for where, obj in (("", record), ("data/", record["data"])):
        for key in sorted(obj):
            gone = copy.deepcopy(record)
            (gone["data"] if where else gone).pop(key)
            yield f"{where}{key} removed", gone
            for value in BREAKS:
                changed = copy.deepcopy(record)
                (changed["data"] if where else changed)[key] = value
                yield f"{where}{key}={value!r}", changed


def agree(record: dict) -> tuple[bool, bool]:
    return records._fast_validator().is_valid(record), records._validator().is_valid(record)


def test_the_sample_records_are_valid_to_both():
    assert sample_records()
    for record in sample_records():
        assert agree(record) == (True, True), record["title"]


@pytest.mark.parametrize("record", smallest_of_each_kind(), ids=lambda r: r["kind"])
def test_both_validators_agree_on_broken_records(record):
    for what, broken in broken_copies(record):
        fast, slow = agree(broken)
        assert fast == slow, what
        if not fast:
            with pytest.raises(RecordError):
                records.validate(broken)
