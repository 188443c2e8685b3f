"""The records a build need not re-hash: what a build last saw of each record file it hashed.

A record's name is the hash of its bytes, and ``verify`` re-hashes every file every time. A
build of a big archive would spend most of a rebuild doing the same (1,000 records of 90 KB:
0.15 s of hashing and 0.10 s reading their kept summaries, against a rebuild goal of 0.2 s),
so a build trusts a file that is provably untouched since a build hashed it, as git and rsync
do and as the site writer trusts its own files: its ``StatKey`` (store/backend.py: inode,
size, mtime, ctime, device) is the one kept when it hashed to its name. Any change to a file
(rewritten, truncated, chmod, renamed over, even with its mtime put back by ``os.utime``)
moves its ctime or its inode, so it is re-hashed, and a tampered one is the same IK108 error
as ever. A record whose data a page needs is read, and re-hashed, then (summaries.LazyRecord).

One kept file per archive location under the validated cache (validated.py), read with one
``recall``: per record its key and summary. A damaged, missing or other version's file is a
miss (every record is hashed as before); the file is written again only when something in it
changed. A file changed within ``SETTLED_NS`` of the build that hashed it is not trusted by the
next one (git's "racily clean" case: ctime is stamped from a clock that ticks coarsely, so a
second change in the same tick as the build's read would keep the key the read saw).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from ikreport.store.archive import Archive
from ikreport.store.backend import StatKey
from ikreport.store.cache import keep, recall_json, source_digest
from ikreport.store.records import Record
from ikreport.store.summaries import SUMMARY_VERSION, Summary
from ikreport.store.validated import Validated, check_record

# A kept file is used only by the code that wrote it (this file's bytes, and SUMMARY_VERSION
# for the summaries it holds): a change to the packing below starts a new one.
FORMAT = source_digest(sys.modules[__name__])
SETTLED_NS = 1_000_000_000  # how long before a build a file must have changed to be trusted later


class StatIndex:
    """What the last build kept of ``archive``'s record files, and what this one sees."""

    def __init__(self, archive: Archive, path: Path) -> None:
        self.archive = archive
        self.path = path
        self.started = time.time_ns()
        self.kept, self.tables = _read(path)  # id -> [key or None, packed summary]; what the packing shares
        self.seen: dict[str, tuple[StatKey | None, Summary]] = {}
        self.reused: dict[str, Any] = {}  # id -> its kept packed summary, for those taken from it
        self.changed = False  # whether a record checked has another key than the one kept

    @classmethod
    def of(cls, archive: Archive, validated: Validated) -> StatIndex | None:
        """The index of ``archive`` kept beside ``validated``'s entries; None without a cache."""
        if validated.root is None:
            return None
        # a folder by its absolute path, so two folders given by the same relative name differ
        where = archive.location if archive.folder is None else os.path.abspath(archive.location)
        return cls(archive, validated.root / "unchanged" / f"{hashlib.sha256(where.encode()).hexdigest()[:32]}.idx")

    def trusted(self, record_ids: list[str]) -> dict[str, Summary]:
        """The kept summary of each of ``record_ids`` whose file is unchanged since a build
        hashed it: one lstat each, no file opened. The rest are for ``check``."""
        keys = self.archive.stat_keys("records", record_ids)  # before any read: a later change shows next time
        kept, unpack, out = self.kept, self.tables.unpack, {}
        for record_id, key in zip(record_ids, keys):
            entry = kept.get(record_id)
            if key is None or entry is None or _key(entry) != key:
                continue
            summary = unpack(entry[1])
            if summary is not None:
                self.seen[record_id] = (key, summary)
                self.reused[record_id] = entry[1]
                out[record_id] = summary
        return out

    def check(self, record_id: str, validated: Validated) -> tuple[Summary, Record | None]:
        """``check_record``, unless the record's file is unchanged since a build hashed it: then
        its kept summary, the file neither opened nor hashed."""
        key = self.archive.stat_key("records", record_id)  # before the read: a later change shows next time
        kept = self.kept.get(record_id)
        summary = self.tables.unpack(kept[1]) if key is not None and _key(kept) == key else None
        if summary is not None:
            self.seen[record_id] = (key, summary)
            self.reused[record_id] = kept[1]
            return summary, None
        summary, record = check_record(self.archive, record_id, validated)
        settled = key is not None and key[3] < self.started - SETTLED_NS  # ctime, in ns
        self.seen[record_id] = (key if settled else None, summary)
        self.changed = self.changed or self.seen[record_id][0] != _key(kept)
        return summary, record

    def save(self) -> None:
        """Keep what this build saw, when it differs from what was kept (records added, gone,
        changed, or newly settled); if it cannot be kept, the next build hashes more."""
        if not self.changed and self.seen.keys() == self.kept.keys():
            return
        # with nothing gone, the kept tables and packed summaries stay and only new ones are
        # packed (repacking 1,000 took 40 ms of a rebuild that adds one); else all start anew
        tables = self.tables.extended() if self.kept.keys() <= self.seen.keys() else None
        reused = self.reused if tables is not None else {}
        tables = tables or Tables()
        records = {rid: [key, reused[rid] if rid in reused else tables.pack(summary)]
                   for rid, (key, summary) in sorted(self.seen.items())}
        try:
            body = orjson.dumps({"format": FORMAT, "summary_version": SUMMARY_VERSION, "strings": tables.strings,
                                 "lists": tables.lists, "records": records})
        except TypeError:  # a value orjson cannot write (none in a valid record): keep nothing
            return
        keep(self.path, body)


class Tables:
    """What the kept summaries share: each value of a head or facts that is a list of strings
    (kernel names, limitations, cited ids) is kept as a position in a table of such lists, each
    a list of positions in a table of strings. Profiles of one workload share most of them:
    1,000 bench summaries are 11 MB of JSON as they are (11 ms to hash, 21 ms to parse), 1 MB
    so. A value keeps its place (None) in its dict, so the unpacked dict has the record's key
    order; each record gets its own copy of a list."""

    def __init__(self, strings: list[str] | None = None, lists: list[list[int]] | None = None) -> None:
        self.strings = strings if strings is not None else []
        self.lists = lists if lists is not None else []
        self._string_at: dict[str, int] = {}
        self._list_at: dict[tuple[int, ...], int] = {}
        self._made: dict[int, list[str]] = {}

    def extended(self) -> Tables | None:
        """These tables, ready to pack more summaries into (positions already kept stay); None
        when the kept ones are not tables (a damaged file whose records all missed)."""
        try:
            self._string_at = {s: at for at, s in enumerate(self.strings)}
            self._list_at = {tuple(positions): at for at, positions in enumerate(self.lists)}
        except TypeError:
            return None
        return self

    def pack(self, summary: Summary) -> list[Any]:
        """[head, its lists, facts, their lists]: each lists maps a key to a list's position."""
        out: list[Any] = []
        for part in (summary["head"], summary["facts"]):
            plain: dict[str, Any] = {}
            lists: dict[str, int] = {}
            for key, value in part.items():
                if isinstance(value, list) and value and all(isinstance(s, str) for s in value):
                    plain[key] = None
                    lists[key] = self._at(tuple(self._string(s) for s in value))
                else:
                    plain[key] = value
            out += [plain, lists]
        return out

    def _string(self, value: str) -> int:
        at = self._string_at.setdefault(value, len(self.strings))
        if at == len(self.strings):
            self.strings.append(value)
        return at

    def _at(self, positions: tuple[int, ...]) -> int:
        at = self._list_at.setdefault(positions, len(self.lists))
        if at == len(self.lists):
            self.lists.append(list(positions))
        return at

    def unpack(self, packed: Any) -> Summary | None:
        """The summary ``pack`` kept; None when it is not one (then the record is hashed again)."""
        try:
            head, head_lists, facts, facts_lists = packed
            head, facts = dict(head), dict(facts)  # the packed form stays, to be kept again as it is
            for part, lists in ((head, head_lists), (facts, facts_lists)):
                for key, at in lists.items():
                    part[key] = self._list(at)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            return None
        if not (isinstance(head, dict) and isinstance(facts, dict) and isinstance(head.get("kind"), str)):
            return None
        return {"head": head, "facts": facts}

    def _list(self, at: int) -> list[str]:
        made = self._made.get(at)
        if made is None:
            made = self._made[at] = [self.strings[i] for i in self.lists[at]]
        return made.copy()


def _read(path: Path) -> tuple[dict[str, Any], Tables]:
    """The kept records of the file at ``path`` and their tables; nothing on any miss (missing,
    damaged, written by another version)."""
    kept = recall_json(path)
    if not (isinstance(kept, dict) and kept.get("format") == FORMAT and kept.get("summary_version") == SUMMARY_VERSION
            and isinstance(kept.get("strings"), list) and isinstance(kept.get("lists"), list)
            and isinstance(kept.get("records"), dict)):
        return {}, Tables()
    return kept["records"], Tables(kept["strings"], kept["lists"])


def _key(kept: Any) -> StatKey | None:
    """The StatKey of a kept entry; None when it has none (or is not one)."""
    try:
        return tuple(kept[0]) if kept[0] is not None else None  # type: ignore[return-value]
    except (TypeError, IndexError, KeyError):
        return None
