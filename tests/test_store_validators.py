"""records.py validates with jsonschema-rs and words errors with jsonschema (its comment says
why both): the two must agree on what is valid, or a record jsonschema-rs refuses would be
refused with no error to show. Checked on the sample records and on broken copies of the smallest
record of each kind; and jsonschema-rs's copy of the schema, its bounds written as integers
(records.integer_bounds), must accept exactly the numbers each bound as written accepts."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- integer bounds: the schema jsonschema-rs compiles, its bounds written as integers --------

def bounds_in(schema) -> set[tuple[str, float | int]]:
    """Every (keyword, number) bound the record schema states."""
    found = set()
    if isinstance(schema, list):
        for item in schema:
            found |= bounds_in(item)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum") and isinstance(value, (int, float)):
                found.add((key, value))
            elif key not in ("const", "enum"):
                found |= bounds_in(value)
    return found


def near(bound: float | int) -> list:
    """Numbers on, just past and just short of ``bound``, as floats and integers."""
    b = float(bound)
    values = [b, math.nextafter(b, math.inf), math.nextafter(b, -math.inf), math.floor(b), math.ceil(b),
              math.floor(b) - 1, math.ceil(b) + 1, b + 0.25, b - 0.25, -b, 0, 0.0]
    return values + [int(v) for v in values if float(v).is_integer()]


def within(key: str, bound: float | int, x: float | int) -> bool:
    """Python compares int and float exactly: the meaning of each keyword."""
    return {"maximum": x <= bound, "exclusiveMaximum": x < bound,
            "minimum": x >= bound, "exclusiveMinimum": x > bound}[key]


@pytest.mark.parametrize("key, bound", sorted(bounds_in(records._schema()), key=repr))
def test_integer_bounds_accept_exactly_what_each_bound_of_the_schema_accepts(key, bound):
    import jsonschema_rs

    fast = jsonschema_rs.Draft202012Validator(records.integer_bounds({key: bound}))
    for x in near(bound):
        assert fast.is_valid(x) == within(key, bound, x), (key, bound, x)
    assert fast.is_valid("100") and fast.is_valid(None)  # bounds say nothing of other types


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"]),
       st.floats(-1e22, 1e22) | st.integers(-2**70, 2**70),
       st.lists(st.floats(-1e22, 1e22) | st.integers(-2**70, 2**70), max_size=8))
def test_integer_bounds_keep_any_bounds_meaning(key, bound, xs):
    import jsonschema_rs

    fast = jsonschema_rs.Draft202012Validator(records.integer_bounds({"items": {key: bound}}))
    for x in xs + near(bound):
        assert fast.is_valid([x]) == within(key, bound, x), (key, bound, x)


def test_a_share_at_its_bound_is_kept_and_one_just_over_it_is_refused():
    profile = next(r for r in sample_records() if r["kind"] == "ncu-profile" and r["data"]["kernels"])
    for share, ok in ((100.5, True), (math.nextafter(100.5, math.inf), False), (101, False), (100, True)):
        changed = copy.deepcopy(profile)
        changed["data"]["kernels"][0]["share_pct"] = share
        if ok:
            records.validate(changed)
        else:
            with pytest.raises(RecordError, match="kernels/0/share_pct"):
                records.validate(changed)
