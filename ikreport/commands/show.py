"""``ikreport show`` and ``ikreport list``: one record, or every record, as finished text."""

from __future__ import annotations

from ikreport.commands.describe import describe, summary_lines
from ikreport.store import recordset
from ikreport.store.archive import Archive
from ikreport.terminal import safe_json


def show(archive: Archive, record_id: str, as_json: bool = False) -> str:
    """The text ``ikreport show`` prints for the record ``record_id`` names (an id or prefix):
    its summary, or with ``as_json`` its stored JSON with control characters escaped."""
    full = archive.resolve(record_id)
    if as_json:
        archive.load(full)  # a damaged or non-canonical record is a one-line error, never printed
        return safe_json(archive.record_bytes(full).decode("utf-8"))
    return "\n".join(describe(full, archive.load(full))) + "\n"


def list_lines(archive: Archive) -> list[str]:
    """One summary line per record of the archive (id, kind, GPU, title), in id order."""
    records = recordset.load(archive)  # the first record that does not load is the error
    return summary_lines([(record_id, records.whole(record_id)) for record_id in records.records])
