"""How an archive keeps a blob's bytes: gzip, as git keeps its objects compressed.

A blob's id is the sha256 of its bytes as the tool wrote them. What is stored is those bytes as
one gzip member (RFC 1952), named ``ID.gz``. gzip, because a site publishes a blob as it is
stored and every browser (``DecompressionStream``) and ``gunzip`` read it; ISA-L's level 1
(the ``isal`` package), because it writes gzip many times as fast as zlib's default level for
most of its ratio (``bench/bench_compress.py`` prints the figures). Blobs written before are kept as they were (``ID``, the bytes themselves), and read
as they are. Every read re-hashes what decompression gives.
"""

from __future__ import annotations

import hashlib
import queue
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, cast

from isal import isal_zlib

from ikreport.errors import IntegrityError

GZ = ".gz"  # the stored name's suffix of a compressed blob
LEVEL = 1
GZIP_WBITS = 31  # zlib's wbits for a gzip container
GZIP_ERROR = cast(type[Exception], isal_zlib.error)  # isal's stub declares it an instance, not a class
CHUNK = 1 << 20  # bytes decompressed at a time: a big blob is never whole in memory to be hashed


def compress(data: bytes) -> bytes:
    """``data`` as one gzip member (no file name, no time: the same bytes always give the same)."""
    compressor = isal_zlib.compressobj(LEVEL, isal_zlib.DEFLATED, GZIP_WBITS)
    return compressor.compress(data) + compressor.flush()


class Inflater:
    """One gzip member's bytes, given the stored bytes a chunk at a time (``feed``, then ``end``):
    what a reader that passes the stored bytes on as it checks them (``sync``) decompresses
    beside its copy. Anything but one whole member (truncated, damaged, or followed by more
    bytes) is an IntegrityError naming ``where``."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._decompressor = isal_zlib.decompressobj(GZIP_WBITS)
        self._trailing = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """What ``chunk`` adds, at most CHUNK bytes at a time."""
        decompressor = self._decompressor
        if decompressor.eof:
            self._trailing = self._trailing or bool(chunk)
            return
        try:
            while chunk and not decompressor.eof:
                out = decompressor.decompress(chunk, CHUNK)
                if out:
                    yield out
                chunk = decompressor.unconsumed_tail
        except GZIP_ERROR as exc:
            raise self._broken(exc) from exc

    def end(self) -> Iterator[bytes]:
        """What the decompressor still holds (at most a window's worth), once every chunk is fed."""
        decompressor = self._decompressor
        if not decompressor.eof:
            try:
                pending = decompressor.flush()
            except GZIP_ERROR as exc:
                raise self._broken(exc) from exc
            if pending:
                yield pending
        if not decompressor.eof or decompressor.unused_data or self._trailing:
            raise IntegrityError(f"{self.where}: not a whole gzip file (truncated, or followed by other bytes); "
                                 "restore it from a good copy")

    def _broken(self, exc: Exception) -> IntegrityError:
        return IntegrityError(f"{self.where}: not a whole gzip file ({exc}); restore it from a good copy")


def inflate(data: bytes, where: str) -> bytes:
    """The bytes a whole gzip member holds (see Inflater)."""
    inflater = Inflater(where)
    return b"".join([*inflater.feed(data), *inflater.end()])


class ContentDigest:
    """The sha256 and size of a stored blob's bytes (decompressed when ``compressed``), given
    the stored bytes a chunk at a time: a blob of any size is hashed in bounded memory."""

    def __init__(self, compressed: bool, where: str) -> None:
        self._inflater = Inflater(where) if compressed else None
        self._digest = hashlib.sha256()
        self.size = 0

    def update(self, chunk: bytes) -> None:
        """Hash what ``chunk`` holds (IntegrityError when a compressed blob is not whole gzip)."""
        self._add(self._inflater.feed(chunk) if self._inflater is not None else (chunk,))

    def _add(self, pieces: Iterable[bytes]) -> None:
        for piece in pieces:
            self._digest.update(piece)
            self.size += len(piece)

    def hexdigest(self) -> str:
        """The sha256 of everything fed (no more updates after asking)."""
        if self._inflater is not None:
            self._add(self._inflater.end())
            self._inflater = None
        return self._digest.hexdigest()


def content_digest(chunks: Iterable[bytes], compressed: bool, where: str) -> tuple[str, int]:
    """(sha256 hex, size) of a stored blob's bytes, decompressed when ``compressed``: what its id
    and a record's declared size must be."""
    digest = ContentDigest(compressed, where)
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest(), digest.size


class GzipSpool:
    """A temporary file that keeps, gzipped, what is written to it, with the sha256 and size of
    what was written: a big export is hashed and compressed in the one pass that reads it, and
    the archive then copies the compressed bytes (``Archive.put_blob``) instead of reading,
    hashing and compressing the file again. Hashing and compressing run in a thread of the
    spool's own (both outside the GIL), so they overlap with what the writer does next (an
    import parses the rows meanwhile); at most QUEUED writes wait for it. ``made`` opens the
    file (tempfile's, by default)."""

    QUEUED = 1  # each write is a chunk of several MB (a big export's 8): one waiting is enough to overlap

    def __init__(self, made: Callable[[], IO[bytes]] | None = None) -> None:
        self.file = made() if made is not None else tempfile.TemporaryFile(prefix="ikreport-")
        self._digest = hashlib.sha256()
        self.size = 0
        self._queue: queue.Queue[bytes | memoryview | None] = queue.Queue(self.QUEUED)
        self._failed: BaseException | None = None
        self._worker = threading.Thread(target=self._work, name="gzip-spool", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        compressor = isal_zlib.compressobj(LEVEL, isal_zlib.DEFLATED, GZIP_WBITS)
        while (data := self._queue.get()) is not None:
            if self._failed is not None:
                continue  # drain: the writer learns of the failure at its next call
            try:
                self._digest.update(data)
                packed = compressor.compress(data)
                if packed:
                    self.file.write(packed)
            except BaseException as exc:  # noqa: BLE001 - raised again in the writer's thread
                self._failed = exc
        if self._failed is None:
            try:
                self.file.write(compressor.flush())
                self.file.flush()
            except BaseException as exc:  # noqa: BLE001 - as above
                self._failed = exc

    def _check(self) -> None:
        if self._failed is not None:
            raise self._failed

    def write(self, data: bytes | memoryview) -> int:
        """Keep ``data`` (not to be changed after); returns its length, as a file's write does."""
        self._check()
        if not self._worker.is_alive():
            raise ValueError("write to a finished spool")
        self._queue.put(data)
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        """A writer's flush: what was written is being compressed; errors so far are raised."""
        self._check()

    def _finish(self) -> None:
        if self._worker.is_alive():
            self._queue.put(None)
            self._worker.join()
        self._check()

    @property
    def sha256(self) -> str:
        """The sha256 of everything written (no more writes after asking)."""
        self._finish()
        return self._digest.hexdigest()

    def compressed(self, chunk_bytes: int = CHUNK) -> Iterator[bytes]:
        """The gzip member of everything written, read back a chunk at a time (no more writes)."""
        self._finish()
        self.file.seek(0)
        while chunk := self.file.read(chunk_bytes):
            yield chunk

    def close(self) -> None:
        """Stop the thread and let the temporary file go (it is deleted)."""
        if self._worker.is_alive():
            self._queue.put(None)
            self._worker.join()
        self.file.close()
