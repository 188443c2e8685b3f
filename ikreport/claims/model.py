"""What a claim is, and how its stable id is made."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ikreport.store.summaries import LazyRecord, record_facts

Record = Mapping[str, Any]  # a dict, or a LazyRecord known by its summary


@dataclass(frozen=True)
class Claim:
    """A sentence about measured values, the records it rests on, and what they do not show."""

    id: str  # "c-" + 12 hex: stable for the same rule, key and cited records
    rule: str
    page: str  # id of the record whose page carries the claim
    text: str  # every number in it was computed from the cited records
    cites: tuple[str, ...]
    caveats: tuple[str, ...]  # the rule's own
    limitations: tuple[tuple[str, tuple[str, ...]], ...]  # (record id, its limitations), per cited record
    detail: str | None = None  # e.g. a kernel's full name, when the sentence abbreviates it


def claim_id(rule: str, key: str, cites: Iterable[str]) -> str:
    text = "\x1f".join([rule, key, *sorted(cites)])
    return "c-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class RecordSet:
    """Every record of the archive, for rules that look beyond one record."""

    records: dict[str, Record]
    by_kind: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: dict[str, Record]) -> RecordSet:
        by_kind: dict[str, list[str]] = {}
        for record_id in sorted(records):
            by_kind.setdefault(records[record_id]["kind"], []).append(record_id)
        return cls(records=records, by_kind=by_kind)

    def whole(self, record_id: str) -> dict[str, Any]:
        """The record as a plain dict, read from the archive if only its summary was loaded."""
        record = self.records[record_id]
        if isinstance(record, LazyRecord):
            return record.whole()
        return record if isinstance(record, dict) else dict(record)

    def facts(self, record_id: str) -> dict[str, Any]:
        """The few values of a record's data that pages about the whole archive show."""
        record = self.records[record_id]
        return record.facts if isinstance(record, LazyRecord) else record_facts(record)

    def limitations(self, record_ids: Iterable[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((rid, tuple(self.records[rid]["limitations"])) for rid in record_ids)


Rule = Callable[[str, Record, RecordSet], list[Claim]]


def make_claim(rule: str, key: str, page: str, text: str, cites: list[str], caveats: list[str],
               records: RecordSet, detail: str | None = None) -> Claim:
    return Claim(
        id=claim_id(rule, key, cites),
        rule=rule,
        page=page,
        text=text,
        cites=tuple(cites),
        caveats=tuple(caveats),
        limitations=records.limitations(cites),
        detail=detail,
    )
