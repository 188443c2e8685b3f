"""records.py has one schema validator (jsonschema-rs, which also words the error) and one
canonical form (``records.canonical``: orjson, with RFC 8785's numbers and key order where
orjson's differ). Checked on the sample records and on broken copies of the smallest record of
each kind: every broken copy the schema refuses is refused in one line naming the file, the
JSON path and what is wrong, and every copy's canonical bytes are the pure-Python rfc8785
package's, the reference the encoder replaced."""

from __future__ import annotations

import copy
import math
import struct
from pathlib import Path

import orjson
import pytest
import rfc8785
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


def test_the_sample_records_are_valid_and_canonical():
    assert sample_files()
    for data, record in sample_files():
        records.validate(record)
        assert records.canonical(record) == data == rfc8785.dumps(record), record["title"]


@pytest.mark.parametrize("record", smallest_of_each_kind(), ids=lambda r: r["kind"])
def test_broken_records_are_refused_in_one_line_and_written_as_rfc8785_writes_them(record):
    refused = 0
    for what, path, broken in broken_copies(record):
        assert records.canonical(broken) == rfc8785.dumps(broken), what
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
            with pytest.raises(RecordError, match="kernels/0/share_pct: 10[0-9.]* is greater than the maximum"):
                records.validate(changed)


def test_a_long_value_is_quoted_cut_short_and_the_error_still_says_what_is_wrong():
    record = smallest_of_each_kind()[0]
    with pytest.raises(RecordError) as caught:
        records.validate({**record, "title": ["x" * 10_000]}, WHERE)
    assert str(caught.value) == f'{WHERE}: title: ["{"x" * 35}... is not of type "string"'


# -- numbers and key order: where orjson's output and RFC 8785's differ --------------------

@pytest.mark.parametrize("x", [0.0, -0.0, 100.0, -1.0, 1e15, 1e16, 1.5e16, 1e20, 1e21, 1.2345678901234568e20,
                               1e-5, 1e-6, 1.5e-6, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, -123.456,
                               2.0**53, 2.0**70, 1 / 3])
def test_a_float_is_written_as_rfc8785_writes_it(x):
    assert records.canonical(x) == records.canonical([x])[1:-1] == rfc8785.dumps(x)
    assert records.canonical({"n": x}) == rfc8785.dumps({"n": x})


@settings(max_examples=2000, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_any_finite_float_is_written_as_rfc8785_writes_it(bits):
    (x,) = struct.unpack("<d", bits.to_bytes(8, "little"))
    if math.isfinite(x):
        assert records.canonical([x]) == rfc8785.dumps([x])


def test_keys_are_in_utf16_order_as_rfc8785_sorts_them():
    value = {"\U0001f600": 1, "\ue000": 2, "\uffff": 3, "a": 4, "\u00e9": 5}
    assert records.canonical(value) == rfc8785.dumps(value)
    assert records.canonical(value) != orjson.dumps(value, option=orjson.OPT_SORT_KEYS)  # code point order


@pytest.mark.parametrize("value, refusal", [
    (2**53, "cannot be written as canonical JSON"), (-(2**53), "cannot be written as canonical JSON"),
    ([1, math.nan], "method/options/v/1: NaN or an infinity"), ({"a": -math.inf}, "method/options/v/a: NaN"),
])
def test_what_rfc8785_cannot_write_is_refused(value, refusal):
    """Past 2**53 an integer has no RFC 8785 form, nor has NaN any JSON form (orjson would write
    null); method.options is a place the schema leaves free."""
    with pytest.raises(rfc8785.CanonicalizationError):
        rfc8785.dumps(value)
    record = smallest_of_each_kind()[0]
    record = {**record, "method": {**record["method"], "options": {"v": value}}}
    records.validate(record)
    with pytest.raises(RecordError, match=f"^record: {refusal}"):
        records.encode(record)
