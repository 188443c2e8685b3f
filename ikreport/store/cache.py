"""The build cache: what ikreport can always work out again, kept in one SQLite file.

Every entry is keyed by content (a record's summary by its id under the rules that validated
it, a page by the digest of all it depends on, a chart by the rows it draws), so it is right
whoever wrote it, never invalidated, only left unused. Nothing here is trusted for integrity:
every build and ``verify`` re-hash every record, and a blob whenever it is read or published.

The file lives in ``$XDG_CACHE_HOME/ikreport``, else ``~/.cache/ikreport`` (``--cache-dir``
overrides it). Deleting it loses nothing but time; a file that is damaged, locked for too long
or cannot be written is the same as an empty cache, never an error. Concurrent builds share it
(SQLite's write-ahead log: readers never wait for a writer).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

FILE = "cache.sqlite"
BUSY_MS = 10_000  # how long a write waits for another build's before the entry is not kept
SCHEMA = "CREATE TABLE IF NOT EXISTS kept (space TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (space, key))"
BATCH = 500  # keys asked for in one query (SQLite's limit on parameters is higher)
RUN = 32  # keys in a run that get_runs asks for as one, on average


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ikreport"


class Cache:
    """The cache in ``folder`` (None: nothing is kept; every answer is worked out again)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._db: sqlite3.Connection | None = _open(folder / FILE) if folder is not None else None
        self._runs: list[tuple[str, str, list[str], list[Any], Callable[[Any], bool]]] = []  # lacking, kept at close

    def get_many(self, space: str, keys: Iterable[str]) -> dict[str, bytes]:
        """The kept value of each of ``keys`` in ``space`` that has one."""
        out: dict[str, bytes] = {}
        wanted = list(keys)
        for start in range(0, len(wanted), BATCH):
            part = wanted[start:start + BATCH]
            marks = ",".join("?" * len(part))
            out.update(self._query(f"SELECT key, value FROM kept WHERE space = ? AND key IN ({marks})", [space, *part]))
        return out

    def get_runs(self, space: str, keys: list[str], valid: Callable[[Any], bool]) -> dict[str, Any]:
        """The JSON value kept for each of ``keys`` (in an order that is the same from build to
        build) that has one and is ``valid``, asked for run by run: a run of keys, ended by a key
        chosen by its own digest (one in RUN, so a key added or gone changes only its run), whose
        values are all kept and valid (by ``close``: a build keeps its new values first) is kept as
        one entry too, and found with one look-up."""
        ends = [n + 1 for n, key in enumerate(keys) if zlib.crc32(key.encode()) % RUN == 0] + [len(keys)]
        runs = [(hashlib.blake2b("\n".join(keys[a:b]).encode(), digest_size=16, person=b"run").hexdigest(), a, b)
                for a, b in zip([0, *ends], ends) if a < b]
        kept = self.get_many(space, [run for run, _, _ in runs])
        out: dict[str, Any] = {}
        for run, a, b in runs:
            values = loads(kept.get(run))
            if not (isinstance(values, list) and len(values) == b - a and all(map(valid, values))):
                found = self.get_many(space, keys[a:b])
                values = [value if valid(value := loads(found.get(key))) else None for key in keys[a:b]]
                if self._db is not None:  # kept at close
                    self._runs.append((space, run, keys[a:b], values, valid))
            out.update((key, value) for key, value in zip(keys[a:b], values) if value is not None)
        return out

    def get(self, space: str, key: str) -> bytes | None:
        """The value kept for ``key`` in ``space``; None when there is none."""
        return self.get_many(space, [key]).get(key)

    def count(self, space: str) -> int:
        """How many entries ``space`` holds."""
        found = self._query("SELECT count(*), '' FROM kept WHERE space = ?", [space])
        return int(found[0][0]) if found else 0

    def put_many(self, space: str, items: Iterable[tuple[str, Any]]) -> None:
        """Keep each (key, value) in ``space`` as JSON (what ``get_runs`` reads), in one
        transaction; if it cannot be kept, the next run works the values out again."""
        self.put_rows([(space, key, orjson.dumps(value)) for key, value in items])

    def put_rows(self, rows: list[tuple[str, str, bytes]]) -> None:
        """Keep each (space, key, value), all or none (one transaction)."""
        if self._db is None or not rows:
            return
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO kept VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            self._lost()

    def put(self, space: str, key: str, value: bytes) -> None:
        """Keep one value's bytes, as they are (see ``put_rows``)."""
        self.put_rows([(space, key, value)])

    def close(self) -> None:
        """Keep each run ``get_runs`` lacked whose values are all kept and valid now, then let go
        of the file (a worker process opens its own)."""
        runs, self._runs = self._runs, []
        whole = []
        for space, run, keys, values, valid in runs:  # the values found then, and those lacking now
            found = self.get_many(space, [key for key, value in zip(keys, values) if value is None])
            values = [loads(found.get(key)) if value is None else value for key, value in zip(keys, values)]
            if all(map(valid, values)):
                whole.append((space, run, orjson.dumps(values)))
        self.put_rows(whole)
        if self._db is not None:
            self._db.close()
            self._db = None

    def _query(self, sql: str, args: list[str]) -> list[tuple[str, bytes]]:
        if self._db is None:
            return []
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error:
            self._lost()
            return []

    def _lost(self) -> None:
        """A damaged or unusable file: this run keeps nothing more and reads nothing more."""
        self.close()


def key_bytes(value: Any) -> bytes:
    """``value`` as the bytes a content key is a digest of: orjson writes lists, tuples, dicts,
    text and numbers exactly, faster than repr; anything else (Markup, a str subclass) as its
    type and repr, never as the text it holds."""
    return orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_SUBCLASS, default=lambda v: [type(v).__name__, repr(v)])


def loads(value: bytes | None) -> Any:
    """The JSON value of kept bytes; None for none, or bytes that are not JSON."""
    if value is None:
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def _open(path: Path) -> sqlite3.Connection | None:
    """The cache file at ``path``, made if absent; a file that is not a cache of ours (damaged,
    another format) is set aside and a new one made; None when none can be had."""
    for attempt in range(2):
        db = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # never an fsync: a cache lost in a crash is only a miss (see _open)
            db.execute(SCHEMA)
            db.execute("SELECT count(*) FROM kept WHERE space = ''").fetchone()
            db.isolation_level = "DEFERRED"  # each put_many one transaction
            return db
        except sqlite3.DatabaseError:
            if db is not None:
                db.close()
            if attempt:
                return None
            for suffix in ("", "-wal", "-shm"):  # set aside, with the log that goes with it
                try:
                    os.replace(f"{path}{suffix}", f"{path}.damaged{suffix}")
                except FileNotFoundError:
                    pass
                except OSError:
                    return None
        except (sqlite3.Error, OSError):
            if db is not None:
                db.close()
            return None
    return None
