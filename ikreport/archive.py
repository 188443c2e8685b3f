"""The content-addressed archive: ``records/ab/cdef…json`` and ``blobs/ab/cdef…``.

A file's name is the sha256 of its bytes. Files are written once (temp file, fsync, hard
link into place, so a crash never leaves a partial file under a real name), made read-only,
and never rewritten: writing what is already there does nothing. There is no index, so two
archives merge by copying files. Ids and prefixes are checked to be hex before they touch a
path, and reads refuse symbolic links.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

from ikreport import records
from ikreport.errors import (
    AmbiguousIdError,
    ArchiveError,
    BadIdError,
    IntegrityError,
    RecordError,
    UnknownIdError,
)

ID_RX = re.compile(r"^[0-9a-f]{64}$")
PREFIX_RX = re.compile(r"^[0-9a-f]{8,64}$")
SHARD_RX = re.compile(r"^[0-9a-f]{2}$")
RECORD_SUFFIX = ".json"
TEMP_PREFIX = ".tmp-"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_id(value: str) -> str:
    if not ID_RX.match(value):
        raise BadIdError(f"{value!r} is not a record id (64 lowercase hex digits)")
    return value


class Archive:
    """An archive folder on disk."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.records_dir = self.root / "records"
        self.blobs_dir = self.root / "blobs"

    @classmethod
    def open(cls, root: Path | str) -> Archive:
        """An existing archive; ArchiveError when ``root`` is not one."""
        archive = cls(root)
        if not archive.root.is_dir():
            raise ArchiveError(f"{archive.root}: no such archive folder; collect into it first (--archive DIR)")
        if not archive.records_dir.is_dir() and not archive.blobs_dir.is_dir():
            raise ArchiveError(f"{archive.root}: not an ikreport archive (no records/ or blobs/ folder)")
        return archive

    @classmethod
    def create(cls, root: Path | str) -> Archive:
        """An archive at ``root``, made if absent."""
        archive = cls(root)
        try:
            archive.records_dir.mkdir(parents=True, exist_ok=True)
            archive.blobs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ArchiveError(f"{archive.root}: cannot create the archive ({exc.strerror}); choose a writable folder") from exc
        return archive

    # -- paths ---------------------------------------------------------------------------
    def record_path(self, record_id: str) -> Path:
        check_id(record_id)
        return self.records_dir / record_id[:2] / (record_id[2:] + RECORD_SUFFIX)

    def blob_path(self, blob_id: str) -> Path:
        check_id(blob_id)
        return self.blobs_dir / blob_id[:2] / blob_id[2:]

    # -- writing -------------------------------------------------------------------------
    def put_blob(self, data: bytes) -> str:
        blob_id = sha256(data)
        _write_once(self.blob_path(blob_id), data)
        return blob_id

    def put_record(self, record: records.Record) -> str:
        """Store a record (validated, canonical); return its id. Idempotent."""
        for ref in _references(record):
            if ref[0] == "blob" and not self.blob_path(ref[1]).is_file():
                raise ArchiveError(f"{self.root}: the record cites blob {ref[1][:12]}, which is not in the archive")
            if ref[0] == "record" and not self.record_path(ref[1]).is_file():
                raise UnknownIdError(f"{self.root}: the record cites record {ref[1][:12]}, which is not in the archive")
        data = records.encode(record)
        record_id = sha256(data)
        _write_once(self.record_path(record_id), data)
        return record_id

    # -- reading -------------------------------------------------------------------------
    def record_ids(self) -> list[str]:
        return sorted(self._names(self.records_dir, RECORD_SUFFIX))

    def blob_ids(self) -> list[str]:
        return sorted(self._names(self.blobs_dir, ""))

    def _names(self, top: Path, suffix: str) -> Iterator[str]:
        # a linked records/ or blobs/ is refused here, so check and build agree with verify
        if top.is_symlink():
            raise IntegrityError(f"{top}: is a symbolic link; archives hold plain folders and files only")
        if not top.is_dir():
            return
        for shard in os.scandir(top):
            if not (shard.is_dir(follow_symlinks=False) and SHARD_RX.match(shard.name)):
                continue
            for entry in os.scandir(shard.path):
                name = entry.name
                if suffix and not name.endswith(suffix):
                    continue
                full = shard.name + name[: len(name) - len(suffix)]
                if ID_RX.match(full) and entry.is_file(follow_symlinks=False):
                    yield full

    def resolve(self, prefix: str) -> str:
        """The one record id that starts with ``prefix`` (at least 8 hex digits)."""
        prefix = prefix.strip().lower()
        if not PREFIX_RX.match(prefix):
            raise BadIdError(f"{prefix!r} is not a record id or prefix (8 to 64 hex digits)")
        if len(prefix) == 64:
            if self.record_path(prefix).is_file():
                return prefix
            raise UnknownIdError(f"{self.root}: no record {prefix[:12]}…; 'ikreport show --list' lists the records")
        shard = self.records_dir / prefix[:2]
        hits = []
        if shard.is_dir():
            rest = prefix[2:]
            hits = sorted(prefix[:2] + e.name[: -len(RECORD_SUFFIX)] for e in os.scandir(shard)
                          if e.name.startswith(rest) and e.name.endswith(RECORD_SUFFIX))
        if not hits:
            raise UnknownIdError(f"{self.root}: no record starts with {prefix}; check the id, or the --archive folder")
        if len(hits) > 1:
            shown = ", ".join(h[:12] for h in hits[:5])
            raise AmbiguousIdError(f"{self.root}: {prefix} names {len(hits)} records ({shown}); give more digits")
        return hits[0]

    def record_bytes(self, record_id: str) -> bytes:
        """A record's bytes, checked against its id (IntegrityError if they differ)."""
        path = self.record_path(record_id)
        data = _read_no_follow(path)
        if sha256(data) != record_id:
            raise IntegrityError(
                f"{path}: the bytes do not hash to the file's name (truncated or tampered); "
                "restore it from a good copy of the archive"
            )
        return data

    def load(self, record_id: str, known_valid: bool = False) -> records.Record:
        """The record, its bytes checked against its id; validated unless ``known_valid`` says
        these bytes (the id proves they are the same) passed validation before."""
        return records.decode(self.record_bytes(record_id), str(self.record_path(record_id)), known_valid)

    def read_blob(self, blob_id: str) -> bytes:
        path = self.blob_path(blob_id)
        data = _read_no_follow(path)
        if sha256(data) != blob_id:
            raise IntegrityError(f"{path}: the bytes do not hash to the file's name; restore it from a good copy")
        return data


def _references(record: records.Record) -> Iterator[tuple[str, str]]:
    for source in record.get("sources", []):
        yield "blob", source["id"]
    if record.get("environment"):
        yield "record", record["environment"]
    for cited in record.get("cites", []):
        yield "record", cited
    for old in record.get("supersedes", []):
        yield "record", old["id"]


def references(record: records.Record) -> list[tuple[str, str]]:
    """("blob"|"record", id) for everything a record points at, in record order."""
    return list(_references(record))


def _read_no_follow(path: Path) -> bytes:
    # O_NOFOLLOW guards the file itself; a linked shard or records/ folder is refused too, so a
    # read never leaves the archive.
    for folder in (path.parent, path.parent.parent):
        if folder.is_symlink():
            raise IntegrityError(f"{folder}: is a symbolic link; archives hold plain folders and files only")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError as exc:
        raise UnknownIdError(f"{path}: not in the archive") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IntegrityError(f"{path}: is a symbolic link; archives hold plain files only") from exc
        raise ArchiveError(f"{path}: cannot read ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _write_once(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` unless a file is there: temp, fsync, link, read-only."""
    if os.path.lexists(path):
        return
    tmp = path.parent / f"{TEMP_PREFIX}{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # fails if another writer got there first: same bytes, keep theirs
        except FileExistsError:
            pass
        _fsync_dir(path.parent)
    except OSError as exc:
        raise ArchiveError(
            f"{path}: cannot write ({exc.strerror}); check that the archive is writable and the disk has space"
        ) from exc
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["Archive", "RecordError", "check_id", "references", "sha256"]
