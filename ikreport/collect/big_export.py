"""Big ncu exports, streamed: checked, hashed and parsed a chunk at a time, never held whole.

A raw export of hundreds of thousands of launches is hundreds of MB; holding it whole to hash
and store it cost more memory than all the rest of an import. Here the file is read once in
line-aligned chunks, checked by ``analysis/ncu/stream.py``, hashed and gzipped into a spool as
they pass (the bytes the archive will keep are the bytes hashed); the page reader then reads
the rows from the file, and the archive copies the spool. The file's inode and times, noted
before the first read, must be the same after the rows were read: a file changed meanwhile
would leave a record of other bytes than its blob.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from ikreport.analysis.ncu.export import Export
from ikreport.analysis.ncu.stream import locate_stream
from ikreport.collect.textfile import HEAD_BYTES
from ikreport.errors import NcuExportError
from ikreport.store.compression import GzipSpool

STREAM_BYTES = 16 << 20  # exports at least this big are streamed (a 20,000-launch one: 177 -> 152 MB peak)
CHUNK_BYTES = 8 << 20
MAX_LINE = 64 << 20  # a line longer than this is not an export's


@dataclass(frozen=True)
class Streamed:
    """A big export checked in chunks: its located page (rows still in the file), its bytes
    gzipped (``spool``, whose sha256 is the blob's id), and what the file was when read."""

    export: Export
    spool: GzipSpool
    stamp: tuple[int, int, int, int]  # inode, size, mtime and ctime in ns

    @property
    def sha256(self) -> str:
        return self.spool.sha256

    @property
    def size(self) -> int:
        return self.spool.size

    def unchanged(self, path: Path) -> bool:
        """Whether the file at ``path`` is still the one that was read (any write moves its ctime)."""
        try:
            return _stamp(os.stat(path)) == self.stamp
        except OSError:
            return False


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def line_chunks(f: BinaryIO, size: int = CHUNK_BYTES) -> Iterator[bytes | memoryview]:
    """``f``'s bytes in chunks of about ``size``, each ending at a line end (but the last).

    A chunk is cut after its last line end and the file rewound to there, so no chunk is
    copied (joining each chunk with the rest of its last line would copy the whole export
    once more). ``f`` must be seekable."""
    while chunk := f.read(size):
        cut = chunk.rfind(b"\n") + 1
        while not cut and (more := f.read(size)):  # no line end yet: a line longer than ``size``
            if len(chunk) >= MAX_LINE:  # no CSV row is this long: never hold the whole file
                raise NcuExportError(f"{getattr(f, 'name', 'the export')}: no line end in its first "
                                     f"{MAX_LINE >> 20} MB; give the CSV from 'ncu --import REPORT --csv'")
            chunk += more
            cut = chunk.rfind(b"\n") + 1
        if 0 < cut < len(chunk):
            f.seek(cut - len(chunk), 1)
            yield memoryview(chunk)[:cut]
        else:
            yield chunk


def stream_export(path: Path, threshold: int = STREAM_BYTES, chunk_bytes: int = CHUNK_BYTES,
                  spool: Callable[[], GzipSpool] = GzipSpool) -> Streamed | None:
    """The streamed export at ``path`` when it is big and plain (see ``locate_stream``); None
    when it is to be read whole (small, UTF-16, chatter between rows, not a raw page, or not a
    file that can be read: the whole-file reader then says why). ``spool`` makes the spool its
    bytes are gzipped into (whose own errors, a full temporary folder say, are raised)."""
    try:
        st = path.stat()
        if st.st_size < threshold or not path.is_file():
            return None
        with path.open("rb", buffering=0) as f:  # reads of whole chunks: no buffer to copy through
            head = f.read(HEAD_BYTES)
            if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\0" in head:
                return None  # read whole: UTF-16, or refused from its start as not text
            f.seek(0)
            kept = spool()

            def spooled() -> Iterator[bytes | memoryview]:
                for chunk in line_chunks(f, chunk_bytes):
                    kept.write(chunk)
                    yield chunk

            try:
                export = locate_stream(spooled(), str(path))
            except BaseException:
                kept.close()
                raise
    except OSError:
        return None
    if export is None:
        kept.close()
        return None
    return Streamed(replace(export, file=str(path)), kept, _stamp(st))
