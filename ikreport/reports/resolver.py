"""Resolve report citations against the archive's records (pure)."""

from __future__ import annotations

import bisect

from ikreport.commands import supersede
from ikreport.claims.model import RecordSet
from ikreport.errors import AmbiguousIdError, PathError, UnknownIdError
from ikreport.reports.values import format_value, lookup


class RecordResolver:
    """Prefix lookup, values and links over a loaded set of records."""

    def __init__(self, records: RecordSet, root: str) -> None:
        self.records = records
        self.ids = sorted(records.records)
        self.root = root
        # supersede.py decides the successor, so a report and a record page never name different ones
        self.newer = supersede.successors(edge for rid in records.by_kind.get(supersede.KIND, [])
                                          for edge in supersede.of_record(rid, records.records[rid]))

    def resolve(self, prefix: str) -> str:
        """The one record id starting with ``prefix``; UnknownIdError or AmbiguousIdError otherwise."""
        prefix = prefix.lower()
        at = bisect.bisect_left(self.ids, prefix)
        hits = []
        while at < len(self.ids) and self.ids[at].startswith(prefix) and len(hits) < 3:
            hits.append(self.ids[at])
            at += 1
        if not hits:
            raise UnknownIdError(f"no record starts with {prefix}; 'ikreport list' lists the records")
        if len(hits) > 1:
            raise AmbiguousIdError(f"{prefix} names several records ({', '.join(h[:12] for h in hits)}); give more digits")
        return hits[0]

    def value(self, record_id: str, path: str) -> str:
        """The value at ``path`` in the record, formatted with its unit; PathError if there is none."""
        try:
            return format_value(path, lookup(self.records.whole(record_id), path))
        except PathError as exc:
            raise PathError(f"record {record_id[:8]}: {exc}") from exc

    def href(self, record_id: str) -> str:
        """The relative link to the record's HTML page."""
        return f"{self.root}e/{record_id}.html"

    def md_href(self, record_id: str) -> str:
        """The relative link to the record's Markdown twin."""
        return f"{self.root}e/{record_id}.md"

    def title(self, record_id: str) -> str:
        """The record's title."""
        return self.records.records[record_id]["title"]

    def limitations(self, record_id: str) -> list[str]:
        """What the record says it does not show."""
        return list(self.records.records[record_id]["limitations"])

    def superseded_by(self, record_id: str) -> str | None:
        """The id of the record that replaces this one, or None."""
        return self.newer.get(record_id)
