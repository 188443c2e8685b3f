"""The content-addressed archive: records and blobs, each named by the sha256 of its bytes.

A record is stored only when it is valid and canonical and everything it cites is already
there; every read re-hashes the bytes against the name. Files are written once and never
rewritten (writing what is already there does nothing). There is no index, so two archives
merge by copying files. Ids and prefixes are checked to be hex before they reach a backend.
A blob is stored compressed (compression.py) and read back decompressed and re-hashed; blobs
stored uncompressed, as archives before kept them, read the same. Where the files live is the
backend's business (backend.py): a folder (local.py) or object storage under a URL (bucket.py).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ikreport.store import records
from ikreport.store.backend import ID_RX, Area, Backend
from ikreport.store.bucket import Bucket, check_location, is_url
from ikreport.store.compression import GZ, ContentDigest, GzipSpool, compress, inflate
from ikreport.store.local import LocalFolder, Survey
from ikreport.errors import AmbiguousIdError, ArchiveError, BadIdError, IntegrityError, RecordError, UnknownIdError

PREFIX_RX = re.compile(r"^[0-9a-f]{8,64}$")
SIZE_MODULO = 1 << 32  # gzip's trailer keeps a member's size modulo 4 GiB
LOOK_EACH = 32  # blobs asked about: beyond this many, one listing of a bucket's blobs/ costs less than a look at each
HEX = b"0123456789abcdef"
# bytes; the records ikreport writes stay far below (a profile keeps its launches inline only
# when they are few, else cites its per-launch table as a blob), so a bigger file is no record
MAX_RECORD = 64 << 20


def sha256(data: bytes) -> str:
    """The hex sha256 of ``data``: a file's name in the archive."""
    return hashlib.sha256(data).hexdigest()


def check_id(value: str) -> str:
    """``value``, when it is a whole record or blob id; BadIdError otherwise."""
    if not ID_RX.match(value):
        raise BadIdError(f"{value!r} is not a record id (64 lowercase hex digits)")
    return value


def check_ids(values: Collection[str]) -> Collection[str]:
    """``values``, when each is a whole id; BadIdError naming the first that is not. At C
    speed: a build checks every record and blob id it stats, a thousand each."""
    try:
        whole = set(map(len, values)) <= {64} and not "".join(values).encode("ascii").translate(None, HEX)
    except (TypeError, UnicodeEncodeError):
        whole = False
    if not whole:
        for value in values:
            check_id(value)
    return values


class Archive:
    """An archive: a folder on disk unless another ``backend`` is given."""

    def __init__(self, root: Path | str, backend: Backend | None = None) -> None:
        # what messages name and worker processes reopen: the folder, or the URL (which a Path
        # would mangle: s3://b becomes s3:/b)
        self.location = str(root) if is_url(root) else str(Path(root))
        self.root = Path(root)
        self.records_dir = self.root / "records"
        self.blobs_dir = self.root / "blobs"
        self.layout = LocalFolder(self.root)  # the folder layout, which messages and verify name
        self.backend: Backend = backend if backend is not None else self.layout

    @classmethod
    def at(cls, location: Path | str) -> Archive:
        """The archive at a folder or URL (``s3://bucket/prefix``, any fsspec URL; ``file://``
        is the folder), unchecked: for processes reopening an archive already opened. A
        location that starts as a URL but is not one (``s3:/b``, ``s3://``) is an ArchiveError
        when given as text; a Path is a folder (``./ab:c``) whatever its name."""
        if isinstance(location, str):
            check_location(location)
        if is_url(location) and str(location).lower().startswith("file://"):
            return cls(Path(str(location)[len("file://"):]))
        if is_url(location):
            return cls(str(location).rstrip("/"), Bucket(str(location)))
        return cls(location)

    @property
    def folder(self) -> Path | None:
        """The archive's folder on disk; None for one in object storage."""
        return self.root if self.backend is self.layout else None

    @classmethod
    def open(cls, root: Path | str) -> Archive:
        """An existing archive; ArchiveError when ``root`` is not one."""
        archive = cls.at(root)
        if isinstance(archive.backend, Bucket):
            archive.backend.probe(must_hold_archive=True)
            return archive
        if not archive.root.is_dir():
            raise ArchiveError(f"{archive.root}: no such archive folder; collect into it first (--archive DIR)")
        if not archive.records_dir.is_dir() and not archive.blobs_dir.is_dir():
            raise ArchiveError(f"{archive.root}: not an ikreport archive (no records/ or blobs/ folder)")
        return archive

    @classmethod
    def create(cls, root: Path | str) -> Archive:
        """An archive at ``root`` to write into (a bucket must exist: ikreport makes none). A new
        folder's records/ and blobs/ are made by the first write, so an import refused before
        it writes leaves nothing behind; its nearest existing folder must be writable."""
        archive = cls.at(root)
        if isinstance(archive.backend, Bucket):
            archive.backend.probe(must_hold_archive=False)
            return archive
        existing = archive.root
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            why = "not a folder" if not existing.is_dir() else "not writable"
            raise ArchiveError(f"{archive.root}: cannot create the archive ({existing} is {why}); "
                               "choose a writable folder")
        return archive

    def read_through(self, copies: Path) -> Archive:
        """This archive, reading objects in storage through local copies kept under ``copies``
        (each used only while it hashes to its name); a folder archive is itself."""
        if isinstance(self.backend, Bucket):
            return Archive(self.location, self.backend.read_through(copies))
        return self

    def fetch(self, area: Area, names: list[str]) -> None:
        """Fetch these files (stored names) into the local copies at once, for an archive read
        through them (read_through); nothing for a folder, whose reads are local anyway. A
        record object too big to be one is left to ``record_bytes`` to refuse, never fetched."""
        if isinstance(self.backend, Bucket):
            if area == "records":
                names = [n for n in names if (self.backend.size(area, n) or 0) <= MAX_RECORD]
            self.backend.fetch(area, names)

    def survey(self, notes: list[str]) -> Survey:
        """Every file of the archive, for ``verify`` (local.py and bucket.py say what they check)."""
        return self.backend.survey(notes) if isinstance(self.backend, Bucket) else self.layout.survey(notes)

    def where(self, record_id: str) -> str:
        """The record's file or object name, for messages."""
        return self.backend.where("records", check_id(record_id))

    # -- writing -------------------------------------------------------------------------
    def put_blob(self, data: bytes | GzipSpool) -> str:
        """Store ``data`` as a blob, compressed (what was written to a spool: its gzipped bytes as they
        are, compressed and hashed as they were written); return its id. A blob there already is
        checked, not written: a damaged one is refused, never cited anew."""
        blob_id = data.sha256 if isinstance(data, GzipSpool) else sha256(data)
        if self.blob_form(blob_id) is not None:
            self.check_blob(blob_id)
        elif isinstance(data, GzipSpool):
            self.backend.write_once_chunks("blobs", blob_id + GZ, data.compressed())
        else:
            self.backend.write_once("blobs", blob_id + GZ, compress(data))
        return blob_id

    def put_record(self, record: records.Record) -> str:
        """Store a record (validated, canonical); return its id. Idempotent: one there already is checked, never rewritten."""
        for what, ref in references(record):
            if what == "blob" and self.blob_form(check_id(ref)) is None:
                raise ArchiveError(f"{self.location}: the record cites blob {ref[:12]}, which is not in the archive")
            if what == "record" and not self.backend.exists("records", check_id(ref)):
                raise UnknownIdError(f"{self.location}: the record cites record {ref[:12]}, which is not in the archive")
        data = records.encode(record)
        if len(data) > MAX_RECORD:  # it could not be read back (record_bytes)
            raise RecordError(f"record: {len(data)} bytes, more than a record may hold ({MAX_RECORD >> 20} MiB); "
                              "keep big tables as blobs the record cites")
        record_id = sha256(data)
        there = self.backend.exists("records", record_id)  # a plain file; a link is not, and write_once leaves it
        if not there:
            self.backend.write_once("records", record_id, data)
        if not self.backend.exists("records", record_id) or (there and self.backend.read("records", record_id) != data):
            raise IntegrityError(f"{self.backend.where('records', record_id)}: stored, but damaged (its bytes do not "
                                 "hash to its name, or it is a link); delete it and import again, which writes it whole")
        return record_id

    # -- reading -------------------------------------------------------------------------
    def record_ids(self) -> list[str]:
        """Every record id, sorted."""
        return self.backend.ids("records")

    def blob_ids(self) -> list[str]:
        """Every blob id, sorted (a blob stored in both forms once)."""
        return sorted({name[:64] for name in self.backend.ids("blobs")})

    def blob_form(self, blob_id: str) -> str | None:
        """How the blob is stored: ``.gz`` (compressed), ``""`` (its bytes), None when absent."""
        found = self._stored_as(blob_id)
        return found[0] if found is not None else None

    def _stored_as(self, blob_id: str) -> tuple[str, int] | None:  # (form, size as stored)
        for form in (GZ, ""):
            size = self.backend.size("blobs", blob_id + form)
            if size is not None:
                return form, size
        return None

    def blob_files(self, blob_ids: Collection[str]) -> dict[str, tuple[str, int]]:
        """(form, size as stored) of each of ``blob_ids`` the archive holds (the rest are
        absent): a look at each (one lstat in a folder), or in a bucket one listing of blobs/
        when there are many (a request each would cost more)."""
        check_ids(blob_ids)
        if len(blob_ids) > LOOK_EACH and isinstance(self.backend, Bucket):
            names = set(self.backend.ids("blobs"))
            forms = {b: GZ if b + GZ in names else "" for b in blob_ids if b + GZ in names or b in names}
            return {b: (form, self.backend.size("blobs", b + form) or 0) for b, form in forms.items()}
        return {b: found for b in blob_ids if (found := self._stored_as(b)) is not None}

    def blob_size(self, blob_id: str, form: str, stored: int) -> int:
        """The size of a blob's bytes (stored as ``form``, ``stored`` bytes) modulo 4 GiB
        (SIZE_MODULO), as a compressed blob's gzip trailer keeps it, read without decompressing
        (a damaged trailer gives a wrong size; the blob's hash, checked on every read, is what
        proves it whole)."""
        if form != GZ:
            return stored % SIZE_MODULO
        return int.from_bytes(self.backend.tail("blobs", blob_id + GZ, 4), "little")

    def resolve(self, prefix: str) -> str:
        """The one record id that starts with ``prefix`` (at least 8 hex digits)."""
        prefix = prefix.strip().lower()
        if not PREFIX_RX.match(prefix):
            raise BadIdError(f"{prefix!r} is not a record id or prefix (8 to 64 hex digits)")
        if len(prefix) == 64:
            if self.backend.exists("records", prefix):
                return prefix
            raise UnknownIdError(f"{self.location}: no record {prefix[:12]}…; 'ikreport list' lists the records")
        hits = self.backend.ids("records", prefix)
        if not hits:
            raise UnknownIdError(f"{self.location}: no record starts with {prefix}; check the id, or the --archive folder")
        if len(hits) > 1:
            shown = ", ".join(h[:12] for h in hits[:5])
            raise AmbiguousIdError(f"{self.location}: {prefix} names {len(hits)} records ({shown}); give more digits")
        return hits[0]

    def record_bytes(self, record_id: str) -> bytes:
        """A record's bytes, checked against its id (IntegrityError if they differ, or if the file
        is too big to be a record: it is refused by its size, unread)."""
        size = self.backend.size("records", check_id(record_id))
        if size is not None and size > MAX_RECORD:
            raise IntegrityError(
                f"{self.backend.where('records', record_id)}: {size} bytes, more than any record ikreport writes "
                f"({MAX_RECORD >> 20} MiB at most), so it is no record: remove it, or restore it from a good copy"
            )
        data = self.backend.read("records", record_id)
        if sha256(data) != record_id:
            raise IntegrityError(
                f"{self.backend.where('records', record_id)}: the bytes do not hash to the file's name (truncated or "
                "tampered); restore it from a good copy of the archive"
            )
        return data

    def load(self, record_id: str, known_valid: bool = False) -> records.Record:
        """The record, its bytes checked against its id; validated unless ``known_valid`` says
        these bytes (the id proves they are the same) passed validation before."""
        return records.decode(self.record_bytes(record_id), self.backend.where("records", record_id), known_valid)

    def read_blob(self, blob_id: str) -> bytes:
        """A blob's bytes, decompressed and checked against its id (IntegrityError if they differ)."""
        form, stored = self._stored(blob_id)
        try:
            data = inflate(stored, "") if form else stored
        except IntegrityError as exc:
            raise self._damaged(blob_id + form, exc) from None
        if sha256(data) != blob_id:
            raise self._damaged(blob_id + form)
        return data

    def stored_blob(self, blob_id: str) -> tuple[str, bytes]:
        """(form, bytes as stored) of a blob, once they are known to give back bytes that hash
        to its id: what a site publishes and ``sync`` copies, never recompressed."""
        form, stored = self._stored(blob_id)
        for _ in self._checked_chunks(blob_id, form, [stored]):
            pass
        return form, stored

    def stored_chunks(self, blob_id: str) -> tuple[str, Iterator[bytes]]:
        """(form, the blob's bytes as stored, a chunk at a time): ``stored_blob`` for a blob of any
        size. The chunks are checked as they pass (decompressed beside, when compressed), and the
        iterator raises IntegrityError after the last one unless they give back bytes that hash
        to the blob's id, so a writer fed by it (``write_once_chunks``) keeps nothing of a
        damaged blob, and a reader that drains it has checked the blob."""
        form = self.blob_form(check_id(blob_id))
        if form is None:
            raise UnknownIdError(f"{self.backend.where('blobs', blob_id)}: not in the archive")
        return form, self._checked_chunks(blob_id, form, self.backend.read_chunks("blobs", blob_id + form))

    def _checked_chunks(self, blob_id: str, form: str, chunks: Iterable[bytes]) -> Iterator[bytes]:
        digest = ContentDigest(form == GZ, "")
        for chunk in chunks:
            try:
                digest.update(chunk)
            except IntegrityError as exc:
                raise self._damaged(blob_id + form, exc) from None
            yield chunk
        try:
            whole = digest.hexdigest() == blob_id
        except IntegrityError as exc:
            raise self._damaged(blob_id + form, exc) from None
        if not whole:
            raise self._damaged(blob_id + form)

    def check_blob(self, blob_id: str) -> None:
        """IntegrityError unless the blob gives back bytes that hash to its id (read in chunks)."""
        for _ in self.stored_chunks(blob_id)[1]:
            pass

    def _stored(self, blob_id: str) -> tuple[str, bytes]:
        form = self.blob_form(check_id(blob_id))
        if form is None:
            raise UnknownIdError(f"{self.backend.where('blobs', blob_id)}: not in the archive")
        return form, self.backend.read("blobs", blob_id + form)

    def _damaged(self, name: str, why: IntegrityError | None = None) -> IntegrityError:
        detail = f" ({str(why).split(': ', 1)[-1].split(';')[0]})" if why is not None else ""
        return IntegrityError(f"{self.backend.where('blobs', name)}: the bytes do not hash to the file's name{detail}; "
                              "restore it from a good copy")


def references(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """("blob"|"record", id) for everything a record points at, in record order."""
    # lists, not a generator: a build asks this of every record
    refs = [("blob", source["id"]) for source in record.get("sources", [])]
    if record.get("environment"):
        refs.append(("record", record["environment"]))
    refs += [("record", cited) for cited in record.get("cites", [])]
    refs += [("record", old["id"]) for old in record.get("supersedes", [])]
    return refs


def checked_references(record: Any, where: str) -> list[tuple[str, str]]:
    """``references`` of a record parsed from bytes that were never validated (what ``sync``
    copies as it finds it): RecordError naming ``where`` unless the record is an object whose
    references are each a whole id, so no text from a record reaches a path or a set as an id."""
    try:
        refs = references(record)
    except (AttributeError, KeyError, TypeError):  # not an object, or sources/supersedes of other shapes
        raise RecordError(f"{where}: not shaped as a record (its sources, environment, cites or supersedes); "
                          "'ikreport verify' it, and restore it from a good copy") from None
    for what, ref in refs:
        if not (isinstance(ref, str) and ID_RX.match(ref)):
            shown = repr(ref) if len(repr(ref)) <= 40 else repr(ref)[:37] + "..."
            raise RecordError(f"{where}: names {shown} as a {what} it cites, which is no id (64 lowercase hex "
                              "digits); 'ikreport verify' it, and restore it from a good copy")
    return refs


__all__ = ["Archive", "RecordError", "check_id", "checked_references", "references", "sha256"]
