"""What an archive needs of the place its files live: the backend protocol.

An archive holds two areas of content-addressed files, ``records`` and ``blobs``, each file
named by the sha256 of its bytes. A backend lists, reads, sizes and writes those files; it
never rewrites or deletes one. ``Archive`` (archive.py) does everything else (hashing,
validation, reference checks) the same for every backend, and tests/test_store_contract.py
is what each backend must pass. The local folder (local.py) is the first backend; object
storage is meant to be the second, so every call here is one an object store can answer.
A backend may offer more, which the archive uses when it is there: ``stat_key``/``stat_keys``
(LocalFiles, below) and ``sizes`` (the sizes of given files without listing an area: a
folder's, at one lstat each, where its listing reads 256 shard folders).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from typing import Literal, Protocol

Area = Literal["records", "blobs"]
AREAS: tuple[Area, ...] = ("records", "blobs")
ID_RX = re.compile(r"^[0-9a-f]{64}$")
# What a build compares to trust a file it hashed before: (st_ino, st_size, st_mtime_ns,
# st_ctime_ns, st_dev) of the file ``read`` reads. Any change to the file (a write, a chmod,
# a rename over it, os.utime putting its times back) moves its ctime or its inode.
StatKey = tuple[int, int, int, int, int]


class Backend(Protocol):
    """Where an archive's files live. ``file_id`` is always 64 lowercase hex digits (checked by
    the caller); a backend checks nothing about content, which the archive re-hashes."""

    def ids(self, area: Area, prefix: str = "") -> list[str]:
        """The sorted ids of the ``area`` files whose id starts with ``prefix`` (hex)."""
        ...

    def read(self, area: Area, file_id: str) -> bytes:
        """A file's bytes, as stored; UnknownIdError when absent, ArchiveError when unreadable."""
        ...

    def write_once(self, area: Area, file_id: str, data: bytes) -> None:
        """Store ``data`` as the file unless one is there (then do nothing), all or nothing:
        a crash or a concurrent writer never leaves part of a file under its name.
        ArchiveError when it cannot be written."""
        ...

    def write_once_chunks(self, area: Area, file_id: str, chunks: Iterable[bytes]) -> None:
        """``write_once`` of the bytes ``chunks`` yield, one at a time (a big blob is never held
        whole); an exception raised by ``chunks`` leaves nothing written."""
        ...

    def exists(self, area: Area, file_id: str) -> bool:
        """Whether the file is there."""
        ...

    def size(self, area: Area, file_id: str) -> int | None:
        """The file's size in bytes, None when it is absent."""
        ...

    def where(self, area: Area, file_id: str) -> str:
        """The file's name for messages (a path, a URL)."""
        ...


class LocalFiles(Protocol):
    """A backend whose reads come from files on this machine (a folder, or a bucket's local
    copies): it can say whether a file is unchanged without reading it (store/stat_index.py).
    Optional: an archive whose backend lacks it re-hashes every record on every build."""

    def stat_key(self, area: Area, file_id: str) -> StatKey | None:
        """The StatKey of the regular file ``read`` would read now; None when there is none."""
        ...


def stat_key_of(path: str) -> StatKey | None:
    """The StatKey of the regular file at ``path`` (a link is not followed); None otherwise.
    ``path`` is a plain string: for a thousand files, pathlib's joins cost more than the stats."""
    return stat_keys_of([path])[0]


def stat_keys_of(paths: Iterable[str]) -> list[StatKey | None]:
    """``stat_key_of`` each of ``paths``, in one loop (a build stats every record file)."""
    if os.name != "posix":  # Windows' st_ctime is the file's creation time, which a write leaves as it was
        return [None for _ in paths]
    keys: list[StatKey | None] = []
    lstat, is_regular = os.lstat, stat.S_ISREG
    for path in paths:
        try:
            st = lstat(path)
        except OSError:
            keys.append(None)
            continue
        keys.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev) if is_regular(st.st_mode) else None)
    return keys
