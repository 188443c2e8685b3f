"""What a claim is, and how its stable id is made."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ikreport.store.recordset import Record, RecordSet

__all__ = ["Claim", "Record", "RecordSet", "Rule", "claim_id", "make_claim"]  # claim rules take RecordSet from here


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
    """'c-' and 12 hex digits, the same for the same rule, key and cited records."""
    text = "\x1f".join([rule, key, *sorted(cites)])
    return "c-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


Rule = Callable[[str, Record, RecordSet], list[Claim]]


def make_claim(rule: str, key: str, page: str, text: str, cites: list[str], caveats: list[str],
               records: RecordSet, detail: str | None = None) -> Claim:
    """A Claim with its id made and its cited records' limitations attached."""
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
