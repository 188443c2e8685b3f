"""The ``supersession`` kind: a record saying a newer record replaces an older one. Its schema
part names the successor key that store/recordset.py follows; its rules (one successor, same
kind, no cycle) live in commands/supersede.py; the changelog page lists them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.claims.model import RecordSet
from ikreport.kinds.base import Kind
from ikreport.terminal import safe_text as t

NAME = "supersession"


def show(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: the record replaced, the one that replaces it, and why."""
    d = record["data"]
    return [f"  old:       {t(d['old'])} (superseded)", f"  new:       {t(d['new'])} (replaces it)",
            f"  reason:    {t(d['reason'])}"]


KIND = Kind(NAME, show=show)
