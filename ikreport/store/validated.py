"""What is known of a record once it has been validated: that its bytes parse and match the
schema, what they refer to, and their summary (summaries.py). A record's id is the hash of
its bytes and every reader re-hashes them, so this is a pure function of the id and can be
kept: a second `verify` or build of a big archive re-hashes everything but parses only
records it has never seen.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

from ikreport.store.archive import Archive, check_id, references
from ikreport.store.records import Record
from ikreport.store.cache import keep, recall_json
from ikreport.store.schema_parts import digest_input
from ikreport.store.summaries import SUMMARY_VERSION, Summary, summarize

Refs = list[tuple[str, str]]


# What "valid" means besides the schema; a change here starts a new cache too (records kept
# before the RFC 8785 check existed were never checked for canonical form, nor ids in data
# against what the record cites).
RULES = b"schema+rfc8785+data-links"


def schema_digest() -> str:
    """Validity is relative to the schema and to the checks records.py makes beyond it
    (RULES names them; the file's bytes catch a changed rule): a change starts a new cache."""
    package = resources.files("ikreport")
    digest = hashlib.sha256(package.joinpath("schema/record-1.json").read_bytes() + RULES)
    digest.update(package.joinpath("store/records.py").read_bytes())
    digest.update(digest_input())  # each kind's part of the schema, and the code that assembles them
    return digest.hexdigest()[:16]


class Validated:
    """ids known to be valid records, with their references, kept under ``root`` (or nowhere)."""

    def __init__(self, root: Path | None) -> None:
        self.base = root
        self.root = root / schema_digest() if root is not None else None

    def _path(self, record_id: str) -> Path:
        assert self.root is not None
        check_id(record_id)
        return self.root / record_id[:2] / f"{record_id[2:]}.json"

    def entry(self, record_id: str) -> tuple[Refs, Summary | None] | None:
        """(references, summary) of a record validated before; the summary is None when it was
        made by another version of summaries.py (or never)."""
        if self.root is None:
            return None
        kept = recall_json(self._path(record_id))
        # a damaged entry is a miss: the record is parsed again, never an error
        if not isinstance(kept, dict) or not isinstance(kept.get("refs"), list):
            return None
        if not all(isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r) for r in kept["refs"]):
            return None
        refs = [(what, ref) for what, ref in kept["refs"]]
        summary = kept.get("summary") if kept.get("summary_version") == SUMMARY_VERSION else None
        if summary is not None and not (isinstance(summary, dict) and isinstance(summary.get("head"), dict)
                                        and isinstance(summary.get("facts"), dict)):
            summary = None
        return refs, summary

    def put(self, record_id: str, refs: Refs, summary: Summary | None = None) -> None:
        """Remember a valid record's references (and summary), when there is a cache folder."""
        if self.root is None:
            return
        path = self._path(record_id)
        kept: dict[str, Any] = {"refs": refs}
        if summary is not None:
            kept.update(summary=summary, summary_version=SUMMARY_VERSION)
        keep(path, json.dumps(kept))  # if it cannot be, the next verify parses again: slower, not wrong


def check_record(archive: Archive, record_id: str, validated: Validated) -> tuple[Summary, Record | None]:
    """A record's summary, after checking its bytes hash to its id, and the record itself when
    it had to be parsed: only when the id was never validated (and summarised) before, and then
    it is remembered in ``validated``. Raises like ``Archive.load``."""
    known = validated.entry(record_id)
    if known is not None and known[1] is not None:
        archive.record_bytes(record_id)  # always re-hashed: the id is the promise
        return known[1], None
    record = archive.load(record_id, known_valid=known is not None)
    summary = summarize(record)
    validated.put(record_id, references(record), summary)  # later runs need not parse it
    return summary, record
