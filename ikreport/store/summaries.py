"""What a build needs of a record whose page it does not render: the record's head (every
field but ``data``) and a few facts from its data (a profile's launch count, time and top
kernel; a peak's GB/s). A summary is a pure function of the record, so it is kept beside the
record's validated mark (validated.py) and a rebuild of a big archive re-hashes every record
but parses only the ones it has not summarised before. A summarised record is a LazyRecord:
its data is read from the archive, and checked again, the first time anything asks for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ikreport.store.schema_parts import digest_input, record_facts

Summary = dict[str, Any]

# Summaries made by other code are not used: a change to this file or to a kind's facts (its
# part, kinds/<kind>.schema.json) starts them anew.
SUMMARY_VERSION = hashlib.sha256(Path(__file__).read_bytes() + digest_input()).hexdigest()[:16]


def summarize(record: Mapping[str, Any]) -> Summary:
    """The record's head (every field but ``data``) and its facts."""
    return {"head": {k: v for k, v in record.items() if k != "data"}, "facts": record_facts(record)}


class LazyRecord(Mapping[str, Any]):
    """A record known by its summary; ``load`` gives the whole record when ``data`` is asked for."""

    __slots__ = ("head", "facts", "_load", "_whole")

    def __init__(self, summary: Summary, load: Callable[[], dict[str, Any]]) -> None:
        self.head: dict[str, Any] = summary["head"]  # every field but data: asked of every record, unread
        self.facts: dict[str, Any] = summary["facts"]
        self._load = load
        self._whole: dict[str, Any] | None = None

    def summary(self) -> Summary:
        """What it is known by: its head and facts."""
        return {"head": self.head, "facts": self.facts}

    def whole(self) -> dict[str, Any]:
        """The whole record, loaded (and checked) the first time it is asked for."""
        if self._whole is None:
            self._whole = self._load()
        return self._whole

    def __getitem__(self, key: str) -> Any:
        return self.whole()["data"] if key == "data" else self.head[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``Mapping.get`` in one call (it takes three: thousands of times a build)."""
        return self.whole().get("data", default) if key == "data" else self.head.get(key, default)

    def __iter__(self) -> Iterator[str]:
        yield from self.head
        yield "data"

    def __len__(self) -> int:
        return len(self.head) + 1
