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
miss (every record is hashed as before). It is written again only when something in it
changed, and a few records added or newly settled go to a small file beside it instead
(``.added``, naming the main file's generation; folded in once it outgrows ``ADDED_MIN`` or a
sixteenth of the main file, or when a record is gone): rewriting 1 MB for one new record cost 5
to 8 ms of each such rebuild. Both are written with ``marshal`` (the standard library's, for
plain dicts, lists and strings), each text once, not JSON: every rebuild reads all of it, and a
fresh process parsed 1,000 summaries' JSON in 6 to 7 ms, the same values from marshal in 3 to 4
(half the bytes, and one string object for a text a thousand summaries share). Like any cache
file each carries a sha256 of its bytes (cache.py), so a damaged one is a miss before marshal
reads it, and whatever marshal raises on bytes it did not write is a miss too. marshal is not
meant for bytes crafted to harm (five such bytes make it ask for gigabytes before it fails): a
build's cache is trusted as its code is (README), and one that someone else writes into can
already change the site through its kept pages. A file changed within ``SETTLED_NS`` of the build that hashed it is not
trusted by the next one (git's "racily clean" case: ctime is stamped from a clock that ticks
coarsely, so a second change in the same tick as the build's read would keep the key the read
saw).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from ikreport.store.archive import Archive
from ikreport.store.backend import StatKey
from ikreport.store.cache import keep, recall, source_digest
from ikreport.store.records import Record
from ikreport.store.summaries import SUMMARY_VERSION, Summary
from ikreport.store.validated import Validated, check_record

# A kept file is used only by the code that wrote it (this file's bytes, and SUMMARY_VERSION
# for the summaries it holds) and a Python whose marshal reads it: a change to the packing
# below, or another Python, starts a new one.
FORMAT = f"{source_digest(sys.modules[__name__])}-py{sys.version_info[0]}.{sys.version_info[1]}-m{marshal.version}"
SETTLED_NS = 1_000_000_000  # how long before a build a file must have changed to be trusted later
ADDED_MIN = 32  # entries the later file may hold before the main one is written anew (or 1/16 of its own)


class StatIndex:
    """What the last build kept of ``archive``'s record files, and what this one sees."""

    def __init__(self, archive: Archive, path: Path) -> None:
        self.archive = archive
        self.path = path
        self.started = time.time_ns()
        self.main, self.added, self.tables, self.generation, self._main_tables = _read(path)
        self.kept = {**self.main, **self.added}  # id -> [key or None, packed summary], the later file's first
        self.seen: dict[str, tuple[StatKey | None, Summary]] = {}
        self.reused: dict[str, Any] = {}  # id -> its kept packed summary, for those taken from it
        self.changed = False  # whether a record checked has another key than the one kept
        self.sizes: dict[str, int] = {}  # id -> its file's size, for each record trusted() stat-ed
        self.keys: dict[str, StatKey | None] = {}  # id -> its file's key, as trusted() saw it

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
        self.keys = dict(zip(record_ids, keys))  # what check() notes a record it hashes by
        # a file's size as this lstat saw it: if it changes before it is read, the read's hash fails
        self.sizes = {record_id: key[1] for record_id, key in zip(record_ids, keys) if key is not None}
        kept, unpack, out = self.kept, self.tables.unpack, {}
        for record_id, key in zip(record_ids, keys):
            entry = kept.get(record_id)
            if key is None or _key(entry) != key:
                continue
            summary = unpack(entry[1])
            if summary is not None:
                self.seen[record_id] = (key, summary)
                self.reused[record_id] = entry[1]
                out[record_id] = summary
        return out

    def check(self, record_id: str, validated: Validated) -> tuple[Summary, Record | None]:
        """``check_record`` for a record ``trusted`` did not trust, noted with the key
        ``trusted`` saw (taken before this read: a change made since shows next time)."""
        key = self.keys.get(record_id)
        kept = self.kept.get(record_id)
        summary, record = check_record(self.archive, record_id, validated)
        settled = key is not None and key[3] < self.started - SETTLED_NS  # ctime, in ns
        self.seen[record_id] = (key if settled else None, summary)
        # a matched key whose summary would not unpack (a damaged entry) is kept anew too
        self.changed = self.changed or (key is not None and _key(kept) == key) or self.seen[record_id][0] != _key(kept)
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
        in_main = {rid for rid, packed in reused.items() if rid in self.main and self.main[rid][1] is packed}
        texts = self._main_texts(in_main)
        if tables is not None and self.generation is not None:
            # the few entries the main file lacks or keeps otherwise go to a small file beside
            # it: rewriting 1 MB for one record added cost 5 to 8 ms of each such rebuild
            later = sorted(self.seen.keys() - in_main)
            if len(later) <= max(ADDED_MIN, len(self.main) // 16):
                records = {rid: self._entry(rid, tables, reused, texts) for rid in later}  # packed first: tables grow
                n_strings, n_lists = self._main_tables
                self._keep(_added_path(self.path), tables.strings[n_strings:], tables.lists[n_lists:], records,
                           base=self.generation)
                return
        tables = tables or Tables()
        records = {rid: self._entry(rid, tables, reused, None if rid in in_main else texts) for rid in sorted(self.seen)}
        if self._keep(self.path, tables.strings, tables.lists, records, generation=secrets.token_hex(8)):
            try:  # it names the main file now replaced, so it would be a miss anyway
                os.unlink(_added_path(self.path))
            except OSError:
                pass

    def _entry(self, record_id: str, tables: Tables, reused: dict[str, Any], texts: dict[str, str] | None) -> list[Any]:
        """The kept entry of a record seen: its texts made the ones ``texts`` holds, unless
        ``texts`` is None (an entry of the main file kept as it was, whose texts already are)."""
        key, summary = self.seen[record_id]
        packed = tables.refolded(reused[record_id]) if record_id in reused else tables.pack(summary)
        return [key, packed if texts is None else _shared(packed, texts)]

    def _main_texts(self, in_main: set[str]) -> dict[str, str]:
        """The texts of one entry of each kind the main file keeps: the objects all its entries
        share (marshal read them so), which the entries written beside them then share too.
        Making every entry's texts shared anew cost 15 ms for 1,000."""
        texts: dict[str, str] = {}
        kinds: set[str] = set()
        for rid in in_main:
            kind = self.main[rid][1][0].get("kind")
            if kind not in kinds:
                kinds.add(kind)
                _shared(self.main[rid][1], texts)
        return texts

    @staticmethod
    def _keep(path: Path, strings: list[str], lists: list[list[int]], records: dict[str, Any], **more: str) -> bool:
        kept = {"format": FORMAT, "summary_version": SUMMARY_VERSION, "strings": strings, "lists": lists,
                "records": records, **more}
        try:
            body = marshal.dumps(kept, marshal.version)
        except ValueError:  # a value marshal cannot write (none in a valid record): keep nothing
            return False
        return keep(path, body)


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
        self._made: list[list[str] | None] | None = None  # each list of strings, made on first unpack

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
            self._made = None
        return at

    def unpack(self, packed: Any) -> Summary | None:
        """The summary ``pack`` kept, its dicts those of ``packed`` with the lists filled in
        (``refolded`` gives the packed form back); None when it is not one (then the record is
        hashed again)."""
        # A rebuild unpacks every record's summary: the lists are made once, then copied, and
        # the dicts are not copied, so they live on as the records' heads rather than being
        # freed with the rest of the file (copying and freeing them cost 2 to 3 ms a rebuild).
        try:
            head, head_lists, facts, facts_lists = packed
            if not (isinstance(head, dict) and isinstance(facts, dict)):
                return None
            made = self._made if self._made is not None else self._make()
            for key, at in head_lists.items():
                head[key] = made[at].copy()
            for key, at in facts_lists.items():
                facts[key] = made[at].copy()
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            return None
        if not isinstance(head.get("kind"), str):
            return None
        return {"head": head, "facts": facts}

    @staticmethod
    def refolded(packed: list[Any]) -> list[Any]:
        """The packed form of a summary ``unpack`` filled in: its lists' places None again."""
        head, head_lists, facts, facts_lists = packed
        return [{**head, **dict.fromkeys(head_lists)}, head_lists, {**facts, **dict.fromkeys(facts_lists)}, facts_lists]

    def _make(self) -> list[list[str] | None]:
        made: list[list[str] | None] = []
        for positions in self.lists:
            try:
                made.append([self.strings[i] for i in positions])
            except (TypeError, IndexError):
                made.append(None)  # a damaged list: only the entries that use it are misses
        self._made = made
        return made


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any], Tables, str | None, tuple[int, int]]:
    """The records kept in the main file at ``path``, those kept since in the file beside it,
    their tables, the main file's generation (which the later file names) and how many
    strings and lists of the tables are the main file's; nothing on
    any miss of the main file (missing, damaged, written by another version), and nothing
    from the later one on a miss of it or when it names another generation."""
    main = _kept(path)
    if main is None or not isinstance(main.get("generation"), str):
        return {}, {}, Tables(), None, (0, 0)
    added = _kept(_added_path(path))
    if added is None or added.get("base") != main["generation"]:
        added = {"strings": [], "lists": [], "records": {}}
    return (main["records"], added["records"], Tables(main["strings"] + added["strings"], main["lists"] + added["lists"]),
            main["generation"], (len(main["strings"]), len(main["lists"])))


def _kept(path: Path) -> dict[str, Any] | None:
    """The kept file at ``path`` when it is one this code wrote; None on any miss."""
    body = recall(path)
    try:
        kept = marshal.loads(body) if body is not None else None
    except Exception:  # noqa: BLE001 - whatever marshal makes of bytes it did not write (MemoryError too) is a miss
        return None
    if not (isinstance(kept, dict) and kept.get("format") == FORMAT and kept.get("summary_version") == SUMMARY_VERSION
            and isinstance(kept.get("strings"), list) and isinstance(kept.get("lists"), list)
            and isinstance(kept.get("records"), dict)):
        return None
    return kept


def _shared(value: Any, texts: dict[str, str]) -> Any:
    """``value`` with one string object per text (those of ``texts``, which it adds to): marshal
    writes a string object once and reads it back as one (immutable, so summaries may share
    it); dicts and lists stay each their own."""
    if isinstance(value, str):
        return texts.setdefault(value, value)
    if isinstance(value, dict):
        return {texts.setdefault(k, k) if isinstance(k, str) else k: _shared(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v, texts) for v in value]
    return value


def _added_path(path: Path) -> Path:
    """Where the records kept since the main file at ``path`` was written are."""
    return path.with_suffix(".added")


def _key(kept: Any) -> StatKey | None:
    """The StatKey of a kept entry (marshal keeps it the tuple it was); None when it has none
    (or is not one)."""
    try:
        return kept[0] if len(kept) == 2 else None  # type: ignore[no-any-return]
    except (TypeError, IndexError, KeyError):
        return None
