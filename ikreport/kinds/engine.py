"""Run the claim rules of a record's kind (kinds/registry.py); claims come out in the rules'
order and unique by id."""

from __future__ import annotations

from ikreport.claims.model import Claim, Record, RecordSet, Rule
from ikreport.errors import BuildError
from ikreport.kinds.registry import kind


def claims_for(record_id: str, record: Record, records: RecordSet,
               rules: tuple[Rule, ...] | None = None) -> list[Claim]:
    """The claims on one record's page, in the order the rules (by default its kind's) give them."""
    out: list[Claim] = []
    seen: set[str] = set()
    for rule in kind(record["kind"]).rules if rules is None else rules:
        for claim in rule(record_id, record, records):
            for cited in claim.cites:
                if cited not in records.records:
                    raise BuildError(f"claim {claim.id} ({claim.rule}) cites {cited[:12]}, which is not in the archive")
            if claim.id in seen:
                raise BuildError(f"two claims on {record_id[:12]} have the id {claim.id}; a rule must key its claims")
            seen.add(claim.id)
            out.append(claim)
    return out
