"""What a build of one site remembers for the next build of it, in one kept file.

A rebuild of a big archive used to read one small cache file per record page to learn its
meta (its charts, claims and sizes) and one per published blob to learn the suffix it is
offered under, and worked out every search document's terms again: thousands of opens and
parses to learn what the last build already knew. The memo holds those answers in tables,
read with one ``recall`` and written with one ``keep`` when something changed.

Each table maps a key that names its inputs (a page key, a blob id, a document's text) to the
answer, so an entry is right whoever wrote it. The memo is a cache (store/cache.py): a
missing or damaged file, or an entry that is not the shape its table expects, is a miss, and
the answer is worked out, or read from the per-entry cache files, again. A table keeps only
the entries the last build asked for or added, so it never outgrows the site.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ikreport.store.cache import keep, recall_json

VERSION = 1  # another layout of the file starts a new memo


class Table:
    """One of the memo's tables: what the last build kept, and what this build asked for or added."""

    def __init__(self, kept: dict[str, Any], valid: Callable[[Any], bool]) -> None:
        self._kept = kept
        self._valid = valid
        self.now: dict[str, Any] = {}

    @property
    def kept(self) -> int:
        """How many entries the last build kept (whatever their shape)."""
        return len(self._kept)

    def get(self, key: str) -> Any:
        """The answer kept for ``key``; None when there is none of the table's shape."""
        value = self.now.get(key)
        if value is None:
            value = self._kept.get(key)
            if value is None or not self._valid(value):
                return None
            self.now[key] = value
        return value

    def put(self, key: str, value: Any) -> None:
        """Remember ``value`` as the answer for ``key``."""
        self.now[key] = value

    def get_or(self, key: str, make: Callable[[], Any]) -> Any:
        """The answer kept for ``key``, else ``make()``'s, remembered."""
        value = self.get(key)
        if value is None:
            value = make()
            self.put(key, value)
        return value


def is_text(value: Any) -> bool:
    """A table entry that is a string (a rendered row, a suffix)."""
    return isinstance(value, str)


class BuildMemo:
    """The memo kept at ``path`` (None: nothing is kept, every answer is worked out)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        kept = recall_json(path) if path is not None else None
        self._kept: dict[str, Any] = kept if isinstance(kept, dict) and kept.get("version") == VERSION else {}
        self._tables: dict[str, Table] = {}

    def table(self, name: str, valid: Callable[[Any], bool]) -> Table:
        """The table ``name``, whose entries must pass ``valid`` to be used."""
        if name not in self._tables:
            kept = self._kept.get(name)
            self._tables[name] = Table(kept if isinstance(kept, dict) else {}, valid)
        return self._tables[name]

    def save(self) -> None:
        """Keep what this build asked for and added, when it differs from what was kept."""
        body = {"version": VERSION, **{name: t.now for name, t in self._tables.items()}}
        if self.path is not None and body != self._kept:
            keep(self.path, orjson.dumps(body))  # if it cannot be, the next build reads the per-entry files
