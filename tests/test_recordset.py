"""RecordSet (store/recordset.py): the one answer to "resolve", "what cites", "what supersedes"."""

from __future__ import annotations

import pytest

from ikreport.errors import AmbiguousIdError, UnknownIdError
from ikreport.reports.resolver import RecordResolver
from ikreport.store.recordset import RecordSet, Supersession

A, B, C, D = "a" * 64, "ab" + "0" * 62, "c" * 64, "d" * 64
S1, S2 = "e1" + "0" * 62, "e2" + "0" * 62
BLOB = "f" * 64


def record(kind="ncu-profile", **fields):
    return {"kind": kind, "title": kind, "sources": [], "environment": None, "cites": [], "supersedes": [],
            "data": {}, "limitations": [], "subject": {}, "collected_at": None, **fields}


def supersession(old, new, when):
    return record("supersession", cites=[new], supersedes=[{"id": old, "reason": "r"}], collected_at=when,
                  data={"old": old, "new": new, "reason": "r"})


@pytest.fixture
def records() -> RecordSet:
    return RecordSet.of({
        A: record(sources=[{"id": BLOB, "size": 10}]),
        B: record(environment=C, cites=[A]),
        C: record("environment"),
        D: record(cites=[A, "9" * 64]),
        # two successors for A (IK109): the first supersession by id wins, whatever its time
        S1: supersession(A, B, "2026-01-01T00:00:00Z"),
        S2: supersession(A, D, "2026-06-01T00:00:00Z"),
    })


def test_cited_by_is_every_record_pointing_at_one(records):
    assert records.cited_by(A) == [B, D, S1, S2]
    assert records.cited_by(C) == [B]
    assert records.cited_by(D) == [S2] and records.cited_by("9" * 64) == [D]


def test_one_successor_for_every_reader(records):
    assert records.supersession_of(A) == Supersession(S1, A, B)
    assert records.superseded_by(A) == B
    assert RecordResolver(records, "../").superseded_by(A) == B  # report citations say the same
    assert records.superseded_by(B) is None
    assert records.supersessions() == [Supersession(S1, A, B), Supersession(S2, A, D)]


def test_resolve(records):
    assert records.resolve("AB00") == B
    assert records.resolve(C[:8]) == C
    with pytest.raises(UnknownIdError, match="no record starts with 12345678"):
        records.resolve("12345678")
    with pytest.raises(AmbiguousIdError, match="names several records"):
        records.resolve("a")


def test_dangling_and_wrong_sizes(records):
    assert records.dangling({BLOB}) == [(D, "record", "9" * 64)]
    assert records.dangling(set()) == [(A, "blob", BLOB), (D, "record", "9" * 64)]
    assert records.wrong_sizes(lambda blob: 10) == []
    assert records.wrong_sizes(lambda blob: None) == []
    [(rid, why)] = records.wrong_sizes(lambda blob: 11)
    assert rid == A and why.startswith(f"declares blob {BLOB[:12]} as 10 bytes, but it is 11;")
