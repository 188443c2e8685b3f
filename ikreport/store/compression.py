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
from collections.abc import Iterable, Iterator

from isal import isal_zlib

from ikreport.errors import IntegrityError

GZ = ".gz"  # the stored name's suffix of a compressed blob
LEVEL = 1
GZIP_WBITS = 31  # zlib's wbits for a gzip container
CHUNK = 1 << 20  # bytes decompressed at a time: a big blob is never whole in memory to be hashed


def compress(data: bytes) -> bytes:
    """``data`` as one gzip member (no file name, no time: the same bytes always give the same)."""
    return b"".join(compress_chunks([data]))


def compress_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The gzip member of the bytes ``chunks`` yield, a piece at a time."""
    compressor = isal_zlib.compressobj(LEVEL, isal_zlib.DEFLATED, GZIP_WBITS)
    for chunk in chunks:
        out = compressor.compress(chunk)
        if out:
            yield out
    yield compressor.flush()


def inflate_chunks(chunks: Iterable[bytes], where: str) -> Iterator[bytes]:
    """The bytes the gzip member in ``chunks`` holds, at most CHUNK at a time. Anything but one
    whole member (truncated, damaged, or followed by more bytes) is an IntegrityError naming
    ``where``."""
    decompressor = isal_zlib.decompressobj(GZIP_WBITS)
    trailing = False
    try:
        for chunk in chunks:
            if decompressor.eof:
                trailing = trailing or bool(chunk)
                continue
            while chunk and not decompressor.eof:
                out = decompressor.decompress(chunk, CHUNK)
                if out:
                    yield out
                chunk = decompressor.unconsumed_tail
        if decompressor.eof:
            pending = b""
        else:
            pending = decompressor.flush()  # what it holds back: at most a window's worth
        if pending:
            yield pending
    except isal_zlib.error as exc:
        raise IntegrityError(f"{where}: not a whole gzip file ({exc}); restore it from a good copy") from exc
    if not decompressor.eof or decompressor.unused_data or trailing:
        raise IntegrityError(f"{where}: not a whole gzip file (truncated, or followed by other bytes); "
                             "restore it from a good copy")


def inflate(data: bytes, where: str) -> bytes:
    """The bytes a whole gzip member holds (see ``inflate_chunks``)."""
    return b"".join(inflate_chunks([data], where))


def content_digest(chunks: Iterable[bytes], compressed: bool, where: str) -> tuple[str, int]:
    """(sha256 hex, size) of a stored blob's bytes, decompressed when ``compressed``: what its id
    and a record's declared size must be."""
    digest, size = hashlib.sha256(), 0
    for chunk in inflate_chunks(chunks, where) if compressed else chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size
