"""records.py validates with one library, jsonschema-rs, which also words the error, on a copy
of the schema with its bounds written as integers (records.integer_bounds). Checked on the
sample records and on broken copies of the smallest record of each kind: the copy and the
schema as written agree on each, and every broken copy is refused in one line naming the file,
the JSON path and what is wrong; and each bound written as integers must accept exactly the
numbers the bound as written accepts."""

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
BREAKS = (None, 12345, "x", [], {}, 1e16, -0.0)
WHERE = "records/ab/cd.json"


def sample_files() -> list[tuple[bytes, dict]]:
    return [(p.read_bytes(), orjson.loads(p.read_bytes())) for p in sorted(SAMPLE.glob("*/*.json"))]


def smallest_of_each_kind() -> list[dict]:
    by_kind: dict[str, dict] = {}
    for _, record in sorted(sample_files(), key=lambda f: len(f[0])):
        by_kind.setdefault(record["kind"], record)
    return list(by_kind.values())


def broken_copies(record: dict):
    """(what was changed, the JSON path changed, the copy) for each key of the record and of its data."""
    for where, obj in (("", record), ("data/", record["data"])):
        for key in sorted(obj):
            gone = copy.deepcopy(record)
            (gone["data"] if where else gone).pop(key)
            yield f"{where}{key} removed", where.rstrip("/") or "(top)", gone
            for value in BREAKS:
                changed = copy.deepcopy(record)
                (changed["data"] if where else changed)[key] = value
                yield f"{where}{key}={value!r}", f"{where}{key}", changed


def agree(record: dict) -> tuple[bool, bool]:
    import jsonschema_rs

    return records._validator().is_valid(record), jsonschema_rs.Draft202012Validator(records._schema()).is_valid(record)


def test_the_sample_records_are_valid_with_their_bounds_as_written_and_as_integers():
    assert sample_files()
    for _, record in sample_files():
        assert agree(record) == (True, True), record["title"]


@pytest.mark.parametrize("record", smallest_of_each_kind(), ids=lambda r: r["kind"])
def test_broken_records_are_refused_in_one_line_with_bounds_as_written_or_as_integers(record):
    refused = 0
    for what, path, broken in broken_copies(record):
        fast, plain = agree(broken)
        assert fast == plain, what
        if what == "schema removed" or what.startswith("schema="):
            continue  # refused before the schema is consulted: test_archive
        try:
            records.validate(broken, WHERE)
        except RecordError as exc:
            refused += 1
            message = str(exc)
            assert message.startswith(f"{WHERE}: ") and "\n" not in message and len(message) <= 300, what
            # the path changed, one inside it, or one holding it (a key another one requires);
            # an id dropped from cites is named where data links to it (records._check_links)
            named = message.removeprefix(f"{WHERE}: ").split(": ")[0]
            assert (named == path or named.startswith(f"{path}/") or f"{path}/".startswith(f"{named}/")
                    or named == "(top)" or "which the record does not cite" in message), (what, message)
            if what.endswith(" removed") and message.startswith(f"{WHERE}: {path}: "):  # the key missing is named
                assert f'"{what.split("/")[-1].removesuffix(" removed")}"' in message, (what, message)
    assert refused > 10


def test_a_share_at_its_bound_is_kept_and_one_just_over_it_is_refused():
    profile = next(r for _, r in sample_files() if r["kind"] == "ncu-profile" and r["data"]["kernels"])
    for share, ok in ((100.5, True), (math.nextafter(100.5, math.inf), False), (101, False), (100, True)):
        changed = copy.deepcopy(profile)
        changed["data"]["kernels"][0]["share_pct"] = share
        if ok:
            records.validate(changed)
        else:
            with pytest.raises(RecordError, match="kernels/0/share_pct"):
                records.validate(changed)


def test_a_long_value_is_quoted_cut_short_and_the_error_still_says_what_is_wrong():
    record = smallest_of_each_kind()[0]
    with pytest.raises(RecordError) as caught:
        records.validate({**record, "title": ["x" * 10_000]}, WHERE)
    assert str(caught.value) == f'{WHERE}: title: ["{"x" * 35}... is not of type "string"'


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
