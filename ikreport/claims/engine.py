"""Run every claim rule over every record; claims come out sorted and unique by id."""

from __future__ import annotations

from ikreport.claims.bandwidth_rules import bandwidth_claims, of_peak_claims
from ikreport.claims.comparison_rules import comparison_claims
from ikreport.claims.model import Claim, Record, RecordSet, Rule
from ikreport.claims.profile_rules import profile_claims
from ikreport.errors import BuildError

RULES: tuple[Rule, ...] = (profile_claims, of_peak_claims, bandwidth_claims, comparison_claims)


def claims_for(record_id: str, record: Record, records: RecordSet, rules: tuple[Rule, ...] = RULES) -> list[Claim]:
    """The claims on one record's page, in the order the rules give them."""
    out: list[Claim] = []
    seen: set[str] = set()
    for rule in rules:
        for claim in rule(record_id, record, records):
            for cited in claim.cites:
                if cited not in records.records:
                    raise BuildError(f"claim {claim.id} ({claim.rule}) cites {cited[:12]}, which is not in the archive")
            if claim.id in seen:
                raise BuildError(f"two claims on {record_id[:12]} have the id {claim.id}; a rule must key its claims")
            seen.add(claim.id)
            out.append(claim)
    return out
