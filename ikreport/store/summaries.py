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

Summary = dict[str, Any]

# Summaries made by other code are not used: a change to this file or to a kind's facts (in
# ikreport/kinds/) starts them anew.
SUMMARY_VERSION = hashlib.sha256(b"".join(
    path.read_bytes() for path in (Path(__file__), *sorted(Path(__file__).parents[1].joinpath("kinds").glob("*.py")))
)).hexdigest()[:16]


def record_facts(record: Mapping[str, Any]) -> dict[str, Any]:
    """Facts the schema does not require are None when the record lacks them."""
    # Each kind says its facts (kinds/); the kinds sit above the store (their rules and views
    # use claims), so they are imported when first asked for, not when the store loads.
    from ikreport.kinds.registry import record_facts as facts_of_kind

    return facts_of_kind(record)


def summarize(record: Mapping[str, Any]) -> Summary:
    """The record's head (every field but ``data``) and its facts."""
    return {"head": {k: v for k, v in record.items() if k != "data"}, "facts": record_facts(record)}


class LazyRecord(Mapping[str, Any]):
    """A record known by its summary; ``load`` gives the whole record when ``data`` is asked for."""

    __slots__ = ("_head", "facts", "_load", "_whole")

    def __init__(self, summary: Summary, load: Callable[[], dict[str, Any]]) -> None:
        self._head: dict[str, Any] = summary["head"]
        self.facts: dict[str, Any] = summary["facts"]
        self._load = load
        self._whole: dict[str, Any] | None = None

    def whole(self) -> dict[str, Any]:
        """The whole record, loaded (and checked) the first time it is asked for."""
        if self._whole is None:
            self._whole = self._load()
        return self._whole

    def __getitem__(self, key: str) -> Any:
        return self.whole()["data"] if key == "data" else self._head[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._head
        yield "data"

    def __len__(self) -> int:
        return len(self._head) + 1
