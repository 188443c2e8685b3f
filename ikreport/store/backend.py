"""What an archive needs of the place its files live: the backend protocol.

An archive holds two areas of content-addressed files, ``records`` and ``blobs``. A file is
known by its stored name: a record's is its id; a blob's is its id, with ``.gz`` when the bytes
are kept compressed (store/compression.py). A backend lists, reads, sizes and writes those
files; it never rewrites or deletes one. ``Archive`` (archive.py) does everything else
(hashing, decompressing, validation, reference checks) the same for every backend, and
tests/test_store_contract.py is what each backend must pass. The local folder (local.py) is
one backend and object storage (bucket.py) the other, so every call here is one an object
store can answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Literal, Protocol

Area = Literal["records", "blobs"]
AREAS: tuple[Area, ...] = ("records", "blobs")
# \Z, not $: "$" also matches before a final line break, and an id may come from a record's text
ID_RX = re.compile(r"^[0-9a-f]{64}\Z")
# a stored name of each area: a record's id; a blob's id, compressed or not
NAME_RX: dict[Area, re.Pattern[str]] = {"records": ID_RX, "blobs": re.compile(r"^[0-9a-f]{64}(?:\.gz)?\Z")}
CHUNK = 1 << 20  # bytes a folder's read_chunks gives at a time (object storage asks for more: bucket.py)


class Backend(Protocol):
    """Where an archive's files live. ``name`` is always a stored name of ``area`` (NAME_RX,
    checked by the caller); a backend checks nothing about content, which the archive re-hashes."""

    def ids(self, area: Area, prefix: str = "") -> list[str]:
        """The sorted stored names of the ``area`` files whose name starts with ``prefix`` (hex)."""
        ...

    def read(self, area: Area, name: str) -> bytes:
        """A file's bytes, as stored; UnknownIdError when absent, ArchiveError when unreadable."""
        ...

    def read_chunks(self, area: Area, name: str) -> Iterator[bytes]:
        """A file's bytes as stored, a chunk at a time, so a big blob is hashed or copied without
        being held whole; raises as ``read`` does (at the first chunk asked for)."""
        ...

    def write_once(self, area: Area, name: str, data: bytes) -> None:
        """Store ``data`` as the file unless one is there (then do nothing), all or nothing:
        a crash or a concurrent writer never leaves part of a file under its name.
        ArchiveError when it cannot be written."""
        ...

    def write_once_chunks(self, area: Area, name: str, chunks: Iterable[bytes | memoryview]) -> None:
        """``write_once`` of the bytes ``chunks`` yield, one at a time (a big blob is never held
        whole); an exception raised by ``chunks`` leaves nothing written."""
        ...

    def tail(self, area: Area, name: str, size: int) -> bytes:
        """The last ``size`` bytes of a file (all of it when shorter): a gzip member's trailer
        holds the size of what it compresses. UnknownIdError when absent."""
        ...

    def exists(self, area: Area, name: str) -> bool:
        """Whether the file is there."""
        ...

    def size(self, area: Area, name: str) -> int | None:
        """The file's size in bytes as stored, None when it is absent."""
        ...

    def where(self, area: Area, name: str) -> str:
        """The file's name for messages (a path, a URL)."""
        ...
