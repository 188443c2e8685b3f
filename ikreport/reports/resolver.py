"""Resolve report citations against the archive's records (pure)."""

from __future__ import annotations

from typing import Any

from ikreport import links
from ikreport.errors import PathError
from ikreport.reports.values import format_value, lookup
from ikreport.store.recordset import RecordSet


class RecordResolver:
    """Prefix lookup, values and links over a loaded set of records."""

    def __init__(self, records: RecordSet, root: str) -> None:
        self.records = records
        self.root = root

    def resolve(self, prefix: str) -> str:
        """The one record id starting with ``prefix``; UnknownIdError or AmbiguousIdError otherwise."""
        return self.records.resolve(prefix)

    def raw(self, record_id: str, path: str) -> Any:
        """The value at ``path`` in the record as it is stored; PathError if there is none."""
        try:
            return lookup(self.records.whole(record_id), path)
        except PathError as exc:
            raise PathError(f"record {record_id[:8]}: {exc}") from exc

    def value(self, record_id: str, path: str, digits: int | None = None) -> str:
        """The value at ``path`` in the record, formatted with its unit (at ``digits`` significant
        digits for GB/s and durations, when given); PathError if there is none."""
        return format_value(path, self.raw(record_id, path), digits)

    def is_null(self, record_id: str, path: str) -> bool:
        """True when the record holds null at ``path`` (a value the tool did not report)."""
        return lookup(self.records.whole(record_id), path) is None

    def href(self, record_id: str) -> str:
        """The relative link to the record's HTML page."""
        return links.via_root(links.record_file(record_id), self.root)

    def md_href(self, record_id: str) -> str:
        """The relative link to the record's Markdown twin."""
        return links.via_root(links.record_file(record_id, "md"), self.root)

    def title(self, record_id: str) -> str:
        """The record's title."""
        return self.records.records[record_id]["title"]

    def limitations(self, record_id: str) -> list[str]:
        """What the record says it does not show."""
        return list(self.records.records[record_id]["limitations"])

    def superseded_by(self, record_id: str) -> str | None:
        """The id of the record that replaces this one, or None (RecordSet decides, for every reader)."""
        return self.records.superseded_by(record_id)
