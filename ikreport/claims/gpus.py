"""Which records are about the same GPU model (pure)."""

from __future__ import annotations

import re

from ikreport.claims.model import Record, RecordSet


def gpu_key(name: str | None) -> str | None:
    """'NVIDIA H200' and 'nvidia  h200' are one model; '2x NVIDIA H100 80GB HBM3' is the H100 80GB HBM3."""
    if not name:
        return None
    s = re.sub(r"^\d+x\s+", "", name.strip().lower())
    s = re.sub(r"^nvidia\s+", "", s)
    return " ".join(s.split()) or None


def measured_peak_for(record: Record, records: RecordSet) -> str | None:
    """The peak-bandwidth record of the same GPU model: the latest collected (then the
    smallest id), so the choice is stable. None when there is none or the GPU is unnamed."""
    key = gpu_key(record["subject"].get("gpu"))
    if key is None:
        return None
    candidates = [rid for rid in records.by_kind.get("peak-bandwidth", [])
                  if gpu_key(records.records[rid]["subject"].get("gpu")) == key
                  and records.facts(rid).get("peak_gbs")]
    if not candidates:
        return None
    return sorted(candidates, key=lambda rid: (records.records[rid]["collected_at"] or "", rid), reverse=True)[0]
