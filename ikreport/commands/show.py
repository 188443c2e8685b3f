"""``ikreport show`` and ``ikreport list``: one record, or every record, as finished text."""

from __future__ import annotations

from typing import Any

from ikreport.commands.describe import describe, summary_lines
from ikreport.kinds.registry import kind
from ikreport.store import recordset
from ikreport.store.archive import Archive
from ikreport.store.cache import Cache, default_cache_dir
from ikreport.store.recordset import RecordSet
from ikreport.terminal import safe_json


def show(archive: Archive, record_id: str, as_json: bool = False) -> str:
    """The text ``ikreport show`` prints for the record ``record_id`` names (an id or prefix):
    its summary, or with ``as_json`` its stored JSON with control characters escaped."""
    full = archive.resolve(record_id)
    if as_json:
        archive.load(full)  # a damaged or non-canonical record is a one-line error, never printed
        return safe_json(archive.record_bytes(full).decode("utf-8"))
    record = archive.load(full)  # this one must load: a damaged record is the error
    return "\n".join(describe(full, record, _others(archive, record))) + "\n"


def _others(archive: Archive, record: dict[str, Any]) -> RecordSet:
    """The archive's records when a page of ``record`` reads others too (its kind's page inputs:
    a profile's measured peak), so that ``show`` labels it as its page does; else none. One
    that does not load is left out ('check' reports it); each is checked as a build checks it
    (re-hashed; parsed unless the build's cache knows it)."""
    if kind(record["kind"]).page_inputs is None:
        return RecordSet.of({})
    return recordset.load(archive, Cache(default_cache_dir()), lambda rid, exc: None)


def list_lines(archive: Archive) -> list[str]:
    """One summary line per record of the archive (id, kind, GPU, title), in id order."""
    records = recordset.load(archive)  # the first record that does not load is the error
    return summary_lines([(record_id, records.whole(record_id)) for record_id in records.records])
