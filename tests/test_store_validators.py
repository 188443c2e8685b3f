"""records.py validates with one library, jsonschema-rs, which also words the error. Checked on
the sample records and on broken copies of the smallest record of each kind: every broken copy
the schema refuses is refused in one line naming the file, the JSON path and what is wrong."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import orjson
import pytest

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


def test_the_sample_records_are_valid():
    assert sample_files()
    for _, record in sample_files():
        records.validate(record)


@pytest.mark.parametrize("record", smallest_of_each_kind(), ids=lambda r: r["kind"])
def test_broken_records_are_refused_in_one_line_naming_the_file_and_the_path(record):
    refused = 0
    for what, path, broken in broken_copies(record):
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
