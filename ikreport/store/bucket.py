"""The object-storage backend: an archive under an fsspec URL (``s3://bucket/prefix``, and
``gs://``, ``az://``, ``memory://`` or any other protocol fsspec knows).

The layout is the local folder's, so a folder and a bucket copy into each other object for
object (``ikreport sync``, or ``aws s3 sync``). An object is written once with a conditional put
(``If-None-Match: *``): a put refused because the object exists means its bytes (named by their
hash) are there. A PUT is atomic, so no reader sees part of an object; objects never change, so
the sizes a listing gives answer ``size`` and ``exists`` without a request.

A build reads through ``copies``, a local copy of each object it fetched, used only while it
still gives back what its name says; ``verify`` reads the storage itself. Credentials and the
endpoint come from where the storage library looks (for S3: AWS_ACCESS_KEY_ID and friends,
AWS_PROFILE, ~/.aws, AWS_ENDPOINT_URL), never from flags. A big object is read in ranges and,
on S3, written as a multipart upload, so none is held whole. Every request has a deadline
(``network_deadline``), past which it is given up in one line naming the object.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ikreport.errors import ArchiveError, IntegrityError, SettingError, StalledError, UnknownIdError
from ikreport.store.backend import AREAS, NAME_RX, Area
from ikreport.store.compression import GZ, content_digest
from ikreport.store.local import SUFFIX, Survey

URL_RX = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# a scheme of two letters or more: "C:" is a Windows drive, not a URL
SCHEME_RX = re.compile(r"^([a-z][a-z0-9+.-]+):", re.IGNORECASE)
SHARDED_RX = re.compile(r"^(records|blobs)/([0-9a-f]{2})/([^/]+)$")
FETCH_BATCH = 64  # objects asked for at once when a build fetches what it has not kept
RANGE = 8 << 20  # bytes asked for at once when an object is read a chunk at a time
PART = 8 << 20  # bytes of a multipart upload's part, at least (S3 takes 5 MiB to 5 GiB, 10,000 parts)
DEADLINE_VARIABLE = "IKREPORT_NETWORK_DEADLINE"
DEADLINE_S = 120.0  # seconds one request (or one file of a site) may take; a part is PART bytes


def is_url(location: object) -> bool:
    """Whether ``location`` is a URL (``scheme://…``) rather than a folder path."""
    return isinstance(location, str) and bool(URL_RX.match(location))


def check_location(location: object) -> None:
    """ArchiveError when ``location`` starts as a URL does (``scheme:``) but is not a whole one:
    ``s3:/b/p`` (one slash) would otherwise be taken as a local folder, ``s3://`` as no bucket."""
    text = str(location)
    scheme = SCHEME_RX.match(text)
    if scheme is None:
        return
    rest = text[scheme.end():]
    if rest.startswith("//") and rest[2:].strip("/"):
        return
    form = "file:///absolute/folder" if scheme.group(1).lower() == "file" else f"{scheme.group(1)}://bucket/prefix"
    raise ArchiveError(f"{text}: not a valid archive URL; write it as {form} (a folder of that name: ./{text})")


def network_deadline() -> float:
    """Seconds one network request may take in all (IKREPORT_NETWORK_DEADLINE, else DEADLINE_S):
    what the storage and ``verify --site`` give a request before giving it up."""
    text = os.environ.get(DEADLINE_VARIABLE, "").strip()
    if not text:
        return DEADLINE_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < 1e6:  # NaN fails too
        raise SettingError(f"{DEADLINE_VARIABLE}={text[:40]!r}: not a number of seconds; give one above 0 "
                           f"(unset, it is {DEADLINE_S:g})")
    return seconds


def deadline_passed(where: str, seconds: float, doing: str) -> StalledError:
    """The one line for a request to the storage given up at its deadline."""
    return StalledError(f"{where}: no answer from the storage within {seconds:g} s (asked to {doing} it); check the "
                        f"endpoint (AWS_ENDPOINT_URL) and the network, or allow longer with {DEADLINE_VARIABLE}=SECONDS")


def storage_error(url: str, exc: BaseException, doing: str = "reach") -> ArchiveError:
    """One line naming the URL, what went wrong and what to do, for any failure of the
    storage library (an OSError from s3fs, or botocore's own errors before a request);
    told apart by class (botocore's are matched by name, as it may not be installed)."""
    classes = {c.__name__ for c in type(exc).__mro__}
    if isinstance(exc, FileNotFoundError):
        return ArchiveError(f"{url}: no such bucket or container; create it, or correct the URL")
    if isinstance(exc, PermissionError):
        return ArchiveError(f"{url}: access denied; use credentials that may {doing} this bucket "
                            "(AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws)")
    if classes & {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"}:
        return ArchiveError(f"{url}: no credentials for the storage; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY (ikreport takes none on its command line)")
    if classes & {"EndpointConnectionError", "ConnectTimeoutError", "ClientConnectorError"}:
        return ArchiveError(f"{url}: cannot connect to the storage endpoint; check AWS_ENDPOINT_URL and the network")
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return ArchiveError(f"{url}: cannot {doing} the storage ({detail}); check the URL, credentials and network")


def open_filesystem(url: str) -> tuple[Any, str]:
    """(fsspec filesystem, path within it) for ``url``; ArchiveError for an unknown protocol."""
    import fsspec

    protocol = url.split("://", 1)[0].lower()
    # ikreport keeps its own record of what a listing saw (objects never change): s3fs's
    # listings cache would hide objects other writers add while this process runs. One request
    # per read: with max_concurrency above 1, s3fs asks each object's size first (a HEAD).
    options: dict[str, Any] = {"use_listings_cache": False, "max_concurrency": 1} if protocol in ("s3", "s3a") else {}
    try:
        fs, path = fsspec.core.url_to_fs(url, **options)
    except (ImportError, ValueError) as exc:
        fix = ("install ikreport's s3 extra: pip install 'ikreport[s3]'" if protocol in ("s3", "s3a")
               else "install the fsspec package for it")
        raise ArchiveError(f"{url}: no storage library for '{protocol}://' ({exc}); {fix}") from exc
    return fs, path.rstrip("/")


class Bucket:
    """An archive's files as objects under an fsspec URL (the Backend protocol, backend.py)."""

    def __init__(self, url: str, copies: Path | None = None) -> None:
        self.url = url.rstrip("/")
        self.copies = copies  # folder of local copies of objects read (a build's cache), or None
        self.deadline = network_deadline()
        self.fs, self.base = open_filesystem(self.url)
        self._sizes: dict[tuple[Area, str], int] = {}  # what listings saw: objects never change
        from fsspec.asyn import AsyncFileSystem

        # an async filesystem's calls take a timeout (fsspec gives up the request at it); others run in this thread
        self._timed = isinstance(self.fs, AsyncFileSystem)

    def read_through(self, copies: Path) -> Bucket:
        """This bucket, read through local copies of its objects under ``copies``."""
        return Bucket(self.url, copies)

    def _key(self, area: Area, name: str) -> str:
        return f"{self.base}/{area}/{name[:2]}/{name[2:]}{SUFFIX[area]}"

    def where(self, area: Area, name: str) -> str:
        """The object's URL, for messages."""
        return f"{self.url}/{area}/{name[:2]}/{name[2:]}{SUFFIX[area]}"

    def _call(self, doing: str, call: Any, *args: Any, where: str | None = None, **kwargs: Any) -> Any:
        """``call(*args, **kwargs)`` with the deadline; any failure is one line (``where``: the
        object or folder URL a deadline message names, the archive's by default)."""
        if self._timed:
            kwargs["timeout"] = self.deadline
        try:
            return call(*args, **kwargs)
        except ArchiveError:
            raise
        except Exception as exc:  # the storage library's errors are many and untyped: each is one line
            from fsspec.exceptions import FSTimeoutError

            if isinstance(exc, FSTimeoutError):
                raise deadline_passed(where or self.url, self.deadline, doing) from exc
            raise storage_error(self.url, exc, doing) from exc

    def probe(self, must_hold_archive: bool) -> None:
        """Reach the storage once (credentials, endpoint, bucket) before anything is read or
        written; with ``must_hold_archive``, refuse a prefix with no records/ or blobs/."""
        try:
            found = self._call("reach", self.fs.ls, self.base, detail=False)
        except ArchiveError as exc:
            if not isinstance(exc.__cause__, FileNotFoundError):
                raise
            found = []  # nothing under the prefix yet; is the bucket itself there?
            bucket = self.base.split("/", 1)[0]
            if bucket and not self._call("reach", self.fs.exists, bucket):
                raise ArchiveError(f"{self.url}: no such bucket; create it, or correct the URL") from None
        names = {str(p).rstrip("/").rsplit("/", 1)[-1] for p in found}
        if must_hold_archive and not names & set(AREAS):
            raise ArchiveError(f"{self.url}: not an ikreport archive (no records/ or blobs/ under it); "
                               "collect into it first, or 'ikreport sync' an archive to it")

    def _listing(self, area: Area, shard: str = "") -> dict[str, int]:
        folder = f"{area}/{shard}" if shard else area
        found = self._call("list", self.fs.find, f"{self.base}/{folder}", detail=True, where=f"{self.url}/{folder}")
        out: dict[str, int] = {}
        for key, info in found.items():
            rel = key[len(self.base) + 1:] if key.startswith(self.base + "/") else ""
            m = SHARDED_RX.match(rel)
            suffix = SUFFIX[area]
            if not m or not m.group(3).endswith(suffix):
                continue
            name = m.group(2) + m.group(3)[: len(m.group(3)) - len(suffix)]
            if NAME_RX[area].match(name):
                out[name] = int(info.get("size") or 0)
                self._sizes[area, name] = out[name]
        return out

    def ids(self, area: Area, prefix: str = "") -> list[str]:
        """The sorted stored names of ``area`` starting with ``prefix`` (one shard is listed when the prefix names it)."""
        listed = self._listing(area, prefix[:2] if len(prefix) >= 2 else "")
        return sorted(i for i in listed if i.startswith(prefix))

    def _copy(self, area: Area, name: str) -> Path | None:
        return self.copies / area / name[:2] / name[2:] if self.copies is not None else None

    def read(self, area: Area, name: str) -> bytes:
        """The object's bytes: its local copy when reading through ``copies`` and the copy
        is still whole (else the copy is a miss, never an error), or a fetch."""
        copy = self._copy(area, name)
        if copy is not None:
            kept = read_regular(copy)  # absent, a link or a FIFO: a miss
            if kept is not None and _whole(name, kept):
                return kept
        try:
            data = bytes(self._call("read", self.fs.cat_file, self._key(area, name), where=self.where(area, name)))
        except ArchiveError as exc:
            if isinstance(exc.__cause__, FileNotFoundError):
                raise UnknownIdError(f"{self.where(area, name)}: not in the archive") from exc
            raise
        if copy is not None and _whole(name, data):
            _keep_copy(copy, data)
        return data

    def tail(self, area: Area, name: str, size: int) -> bytes:
        """The object's last ``size`` bytes: from its local copy when there is a whole one, else a ranged read."""
        copy = self._copy(area, name)
        kept = read_regular(copy) if copy is not None else None
        if kept is not None and _whole(name, kept):
            return kept[-size:]
        length = self.size(area, name)
        if length is None:
            raise UnknownIdError(f"{self.where(area, name)}: not in the archive")
        return bytes(self._call("read", self.fs.cat_file, self._key(area, name), start=max(0, length - size),
                                where=self.where(area, name)))

    def read_chunks(self, area: Area, name: str) -> Iterator[bytes]:
        """The object's bytes, RANGE at a time, each a ranged read of the storage itself (local
        copies serve ``read``, which a build uses)."""
        length = self.size(area, name)
        if length is None:
            raise UnknownIdError(f"{self.where(area, name)}: not in the archive")
        for start in range(0, length, RANGE):
            yield bytes(self._call("read", self.fs.cat_file, self._key(area, name), start=start,
                                   end=min(length, start + RANGE), where=self.where(area, name)))

    def fetch(self, area: Area, names: list[str]) -> None:
        """Bring the objects of ``names`` that have no local copy into ``copies``, many requests
        at once (a build would otherwise wait for each in turn). A copy is checked when read."""
        wanted = [(n, copy) for n in names if (copy := self._copy(area, n)) is not None and not copy.exists()]
        for start in range(0, len(wanted), FETCH_BATCH):
            batch = {self._key(area, n): (n, copy) for n, copy in wanted[start:start + FETCH_BATCH]}
            try:
                got = self._call("read", self.fs.cat, list(batch), on_error="omit")
            except StalledError:
                return  # a slow link: each object is then read on its own, each within the deadline
            for key, data in got.items():
                name, copy = batch[key]
                if _whole(name, data):
                    _keep_copy(copy, data)

    def write_once(self, area: Area, name: str, data: bytes) -> None:
        """A conditional put: a precondition failure means the object is there already."""
        if (area, name) in self._sizes:
            return
        if len(data) > PART and self._multipart:  # in parts, each within the deadline
            view = memoryview(data)
            self.write_once_chunks(area, name, (view[at:at + PART] for at in range(0, len(data), PART)))
            return
        try:
            self._call("write to", self.fs.pipe_file, self._key(area, name), bytes(data), mode="create",
                       where=self.where(area, name))
        except ArchiveError as exc:
            if not isinstance(exc.__cause__, FileExistsError):
                raise
        self._sizes[area, name] = len(data)

    @property
    def _multipart(self) -> bool:
        return hasattr(self.fs, "call_s3")  # S3 (s3fs): other stores take the object in one put

    def write_once_chunks(self, area: Area, name: str, chunks: Iterable[bytes | memoryview]) -> None:
        """``write_once`` of the bytes ``chunks`` yield. On S3 a multipart upload of parts of
        PART bytes or a chunk more, completed only after the last chunk and with the same
        condition as a put, so about a part is held at a time and an exception raised by
        ``chunks`` leaves nothing (the upload is aborted). Other stores take the joined chunks
        in one conditional put."""
        if (area, name) in self._sizes:
            return
        if not self._multipart:
            self.write_once(area, name, b"".join(chunks))
            return
        bucket, key, _ = self.fs.split_path(self._key(area, name))
        where = self.where(area, name)
        pending: list[bytes | memoryview] = []
        parts: list[dict[str, Any]] = []
        upload, held, size = None, 0, 0
        try:
            for chunk in chunks:
                pending.append(chunk)
                held += len(chunk)
                size += len(chunk)
                if held >= PART:  # a part of PART bytes or a chunk more: parts need not be of one size
                    if upload is None:
                        upload = self._call("write to", self.fs.call_s3, "create_multipart_upload", Bucket=bucket,
                                            Key=key, where=where)["UploadId"]
                    data = b"".join(pending)
                    pending.clear()
                    held = 0
                    parts.append(self._part(bucket, key, upload, len(parts) + 1, data, where))
                    del data
            if upload is None:  # small enough for one put
                self.write_once(area, name, b"".join(pending))
                return
            if pending:
                parts.append(self._part(bucket, key, upload, len(parts) + 1, b"".join(pending), where))
            try:
                self._call("write to", self.fs.call_s3, "complete_multipart_upload", Bucket=bucket, Key=key,
                           UploadId=upload, MultipartUpload={"Parts": parts}, IfNoneMatch="*", where=where)
            except ArchiveError as exc:
                if not isinstance(exc.__cause__, FileExistsError):
                    raise
                self._abort(bucket, key, upload)  # the object is there: these parts are not needed
        except BaseException:
            if upload is not None:
                self._abort(bucket, key, upload)
            raise
        self._sizes[area, name] = size

    def _part(self, bucket: str, key: str, upload: str, number: int, data: bytes, where: str) -> dict[str, Any]:
        out = self._call("write to", self.fs.call_s3, "upload_part", Bucket=bucket, Key=key, UploadId=upload,
                         PartNumber=number, Body=data, where=where)
        return {"PartNumber": number, "ETag": out["ETag"]}

    def _abort(self, bucket: str, key: str, upload: str) -> None:
        """Let a multipart upload go; one that cannot be aborted costs storage, not correctness
        (its parts are never an object), and the error that led here is the one to report."""
        try:
            self._call("write to", self.fs.call_s3, "abort_multipart_upload", Bucket=bucket, Key=key, UploadId=upload)
        except ArchiveError:
            pass

    def exists(self, area: Area, name: str) -> bool:
        """Whether the object is there."""
        return self.size(area, name) is not None

    def known_size(self, area: Area, name: str) -> int | None:
        """The object's size if a listing (or an earlier request) gave it; None otherwise."""
        return self._sizes.get((area, name))

    def remember(self, sizes: Mapping[tuple[Area, str], int]) -> None:
        """Keep sizes a listing made elsewhere gave (a verify's worker processes are given the
        survey's): objects never change, so they answer ``size`` without a request."""
        self._sizes.update(sizes)

    def size(self, area: Area, name: str) -> int | None:
        """The object's size, from a listing when one saw it; None when absent."""
        known = self._sizes.get((area, name))
        if known is not None:
            return known
        try:
            info = self._call("read", self.fs.info, self._key(area, name), where=self.where(area, name))
        except ArchiveError as exc:
            if isinstance(exc.__cause__, FileNotFoundError):
                return None
            raise
        self._sizes[area, name] = int(info.get("size") or 0)
        return self._sizes[area, name]

    def survey(self, notes: list[str]) -> Survey:
        """Every object under the archive's URL, in name order (blobs/ before records/, as
        local.py lists them), for ``verify``: an object of another name is a problem. A
        conditional put leaves no temporary objects, so there is nothing to add to ``notes``."""
        del notes
        found = Survey()
        for key, info in sorted(self._call("list", self.fs.find, self.base, detail=True).items()):
            rel = key[len(self.base) + 1:] if key.startswith(self.base + "/") else key
            if rel.startswith("reports/"):
                continue  # reports are read from a folder (--reports), never from here
            m = SHARDED_RX.match(rel)
            area: Area = "records" if m and m.group(1) == "records" else "blobs"
            rest = m.group(3) if m else ""
            stem = rest[: len(rest) - len(SUFFIX[area])] if rest.endswith(SUFFIX[area]) else ""
            if not m or not NAME_RX[area].match(m.group(2) + stem):
                found.order.append(f"{self.url}/{rel}: unexpected object in the archive; remove it")
                continue
            name = m.group(2) + stem
            self._sizes[area, name] = int(info.get("size") or 0)
            found.order.append(len(found.files))
            found.files.append((self.where(area, name), name, area))
        return found


def _whole(name: str, data: bytes) -> bool:
    """Whether ``data`` is what the object named ``name`` holds: bytes that hash to its name, or
    for a compressed blob a gzip member of such bytes."""
    if not name.endswith(GZ):
        return hashlib.sha256(data).hexdigest() == name
    try:
        return content_digest([data], True, name)[0] == name[: -len(GZ)]
    except IntegrityError:
        return False


def read_regular(path: Path | str) -> bytes | None:
    """The bytes of the regular file at ``path``; None when missing, unreadable, a link or
    anything else (a FIFO planted there is not waited on): a copy is a miss, never a wait."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            return f.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None


def _keep_copy(path: Path, data: bytes) -> None:
    """Keep a copy whole or not at all (temp file, rename); one that cannot be kept costs a
    fetch next time. The copy is the object's bytes alone: its name is their hash."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()  # a full disk mid-write leaves part of a temp file otherwise
        except OSError:
            pass
