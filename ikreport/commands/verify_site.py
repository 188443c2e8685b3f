"""``ikreport verify --site``: re-check a built or published site against its manifest.json.

A site may come from anyone, so nothing in it is trusted. The manifest is checked for shape
(an object of schema ``ikreport.manifest/1``; ``records``: a list of 64-hex ids; ``blobs``: a
list of ``{"id": 64 hex, "path": "b/ID.EXT[.gz]"}``) before any path it names is opened. Every
file is opened relative to the site folder one component at a time without following links
(``O_NOFOLLOW``), must be a regular file (``fstat``; never a device, FIFO or socket), and is
hashed in blocks (a ``.gz`` blob as it decompresses), so a read never leaves the site and never
blocks or fills memory. A site
on the web is read over http(s) with a size cap and a deadline per file (``network_deadline``):
a socket timeout bounds each wait for a byte, not the file, and a server that trickles a byte
at a time would hold verify for ever.
"""

from __future__ import annotations

import errno
import functools
import http.client
import json
import os
import re
import socket
import stat
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from ikreport import links
from ikreport.site.manifest import MANIFEST_SCHEMA, MAX_MANIFEST, inside_site, walk_site
from ikreport.store.archive import ID_RX
from ikreport.store.bucket import DEADLINE_VARIABLE, network_deadline
from ikreport.store.compression import GZ, content_digest
from ikreport.errors import IntegrityError, SiteManifestError, SiteStalledError, UnreadableSiteFileError
from ikreport.formatting import plural
from ikreport.terminal import safe_text

MAX_REMOTE_FILE = 2**30  # bytes; GitHub Pages refuses files over 100 MB, so more is not a site's
BLOCK = 2**20
TIMEOUT_S = 30  # seconds of silence a socket waits; network_deadline() bounds the whole file
RECORD_FILE_RX = re.compile(r"^e/([0-9a-f]{64})\.json$")  # what links.record_file(id, "json") gives
EXPIRED_TIMEOUT_S = 0.001  # what a socket's timeout becomes at the deadline: its next wait ends at once


def verify_site(site: str, fetch: Callable[[str], bytes] | None = None) -> tuple[int, list[str]]:
    """Re-check a built or published site: every record and blob its manifest.json lists, or
    whose file its "files" list names, is there, a regular file, and hashes to its id; every
    other file it lists has the sha256 it gives (a page edited since the build is named); the
    manifest itself is well formed; a local site holds no symbolic links or special files.
    ``site`` is a folder or an http(s) URL (``fetch``, given a URL, returns its bytes: for
    tests and other transports). Returns
    (records checked, problems); raises SiteManifestError when there is no manifest to go by."""
    remote = fetch is not None or site.startswith(("http://", "https://"))
    base = site.rstrip("/") + "/"
    reader: _Reader = _Remote(base, fetch) if remote else _Local(site)
    try:
        with reader:
            return _verify(reader, base)
    except OSError as exc:  # the site folder itself
        raise SiteManifestError(f"{site}: cannot open the site ({exc.strerror or exc}); "
                                "give a built site folder") from exc


def _verify(reader: _Reader, base: str) -> tuple[int, list[str]]:
    try:
        raw = reader.read("manifest.json", MAX_MANIFEST)
        manifest = json.loads(raw)
    except (UnreadableSiteFileError, ValueError, RecursionError) as exc:
        raise SiteManifestError(f"{base}manifest.json: cannot read it ({exc}); check the address, or build the "
                                "site with ikreport 0.1 or later") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
        raise SiteManifestError(f"{base}manifest.json: not an ikreport manifest (schema {MANIFEST_SCHEMA}); "
                                "rebuild the site")
    bad = f"{base}manifest.json: "
    problems = []
    listed = manifest.get("files")  # absent from sites built before it was added: not checked then
    if listed is not None and not (isinstance(listed, list) and all(isinstance(f, str) and inside_site(f) for f in listed)):
        problems.append(f"{bad}'files' is not a list of paths inside the site; rebuild the site")
        listed = None
    problems += reader.strays(base, set(listed) if listed is not None else None)
    todo: list[tuple[str, str]] = []  # (path, the id its bytes must hash to)
    records = manifest.get("records")
    if not isinstance(records, list):
        problems.append(f"{bad}'records' is not a list of record ids; rebuild the site")
        records = []
    for i, record_id in enumerate(records):
        if isinstance(record_id, str) and ID_RX.match(record_id):
            todo.append((links.record_file(record_id, "json"), record_id))
        else:
            problems.append(f"{bad}records[{i}] is not a record id (64 lowercase hex digits); rebuild the site")
    blobs = manifest.get("blobs", [])
    if not isinstance(blobs, list):
        problems.append(f"{bad}'blobs' is not a list; rebuild the site")
        blobs = []
    for i, blob in enumerate(blobs):
        path = blob.get("path") if isinstance(blob, dict) else None
        blob_id = blob.get("id") if isinstance(blob, dict) else None
        found = links.BLOB_FILE_RX.match(path) if isinstance(path, str) else None
        if not (isinstance(blob_id, str) and ID_RX.match(blob_id)):
            problems.append(f"{bad}blobs[{i}].id is not a blob id (64 lowercase hex digits); rebuild the site")
        elif not found or found.group(1) != blob_id:
            problems.append(f"{bad}blobs[{i}].path is not b/{blob_id[:12]}….EXT inside the site; rebuild the site")
        else:
            todo.append((found.group(0), blob_id))
    problems += _unlisted(todo, listed, bad)
    checked = sum(1 for path, _ in todo if RECORD_FILE_RX.match(path))
    digests = manifest.get("sha256")
    if listed is not None and digests is not None:
        if not (isinstance(digests, dict) and all(isinstance(d, str) for d in digests.values())):
            problems.append(f"{bad}'sha256' is not a map of paths to digests; rebuild the site")
        else:  # each page, chart and asset as the build wrote it (records and blobs, all in todo now, by their names)
            named = {path for path, _ in todo}
            todo += [(path, digests.get(path) or "") for path in listed
                     if path not in named and (reader.present is None or path in reader.present)]
    for n, (path, want) in enumerate(todo):
        by_name = bool(RECORD_FILE_RX.match(path) or links.BLOB_FILE_RX.match(path))
        try:
            got = content_digest(reader.blocks(path), by_name and path.endswith(GZ), f"{base}{path}")[0]
        except IntegrityError as exc:  # a .gz that is not one whole gzip member
            problems.append(str(exc))
            continue
        except UnreadableSiteFileError as exc:
            problems.append(f"{base}{path}: {exc}")
            if isinstance(exc, SiteStalledError) and n + 1 < len(todo):
                # the server, not this file: waiting a deadline for each file left would take hours
                problems.append(f"{base}: {plural(len(todo) - n - 1, 'file', 'files')} not checked, as the server "
                                "stopped answering in time; verify again when it answers")
                break
            continue
        if got != want and not by_name:
            problems.append(f"{base}{path}: not as the build wrote it (its sha256 is not the one manifest.json "
                            "gives): edited or damaged since; rebuild the site")
        elif got != want:
            what = "its name" if path == links.record_file(want, "json") else want[:12]
            problems.append(f"{base}{path}: does not hash to {what} (tampered or damaged); compare with the archive")
    return checked, problems


def _unlisted(todo: list[tuple[str, str]], listed: list[str] | None, bad: str) -> list[str]:
    """Record and blob files the manifest's "files" names but its "records" or "blobs" leaves
    out: added to ``todo``, to be hashed by their names all the same (a manifest cut down to hide
    a changed record must not hide it), and each a problem."""
    named = {path for path, _ in todo}
    problems = []
    for path in sorted(set(listed or ()) - named):
        found = RECORD_FILE_RX.match(path) or links.BLOB_FILE_RX.match(path)
        if found:
            todo.append((path, found.group(1)))
            what = "records" if path.startswith("e/") else "blobs"
            problems.append(f"{bad}'{what}' leaves out {path}, which 'files' names; rebuild the site")
    return problems


class _Reader:
    present: set[str] | None = None  # the files found by strays (a folder's), or None: not known

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self, rel: str, limit: int) -> bytes:
        raise NotImplementedError

    def blocks(self, rel: str) -> Iterator[bytes]:
        """The file's bytes, a block at a time."""
        raise NotImplementedError

    def strays(self, base: str, listed: set[str] | None) -> list[str]:
        """Problems with files the manifest does not name (only a folder can be listed)."""
        return []


class _Local(_Reader):
    """A site folder, opened once; every path is taken relative to it, never following links."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.fd = -1

    def __enter__(self) -> _Local:
        self.fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def _open(self, rel: str) -> int:
        """A descriptor of the regular file ``rel`` (checked names: 'e/ID.json', 'b/ID.EXT')."""
        *folders, name = rel.split("/")
        fd = self.fd
        try:
            for part in folders:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                if fd != self.fd:
                    os.close(fd)
                fd = nxt
            # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it
            out = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError as exc:
            raise UnreadableSiteFileError(_why(exc)) from exc
        finally:
            if fd != self.fd:
                os.close(fd)
        mode = os.fstat(out).st_mode
        if not stat.S_ISREG(mode):
            os.close(out)
            raise UnreadableSiteFileError("not a regular file (a device, FIFO or socket); a build writes plain files only: "
                              "remove it and rebuild")
        return out

    def read(self, rel: str, limit: int) -> bytes:
        fd = self._open(rel)
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise UnreadableSiteFileError(f"larger than {limit} bytes")
        return data

    def blocks(self, rel: str) -> Iterator[bytes]:
        fd = self._open(rel)
        with os.fdopen(fd, "rb") as f:
            while block := f.read(BLOCK):
                yield block

    def strays(self, base: str, listed: set[str] | None) -> list[str]:
        """Symbolic links and special files anywhere in the site (a build writes neither, and
        publishing would push what a link points at); with the manifest's "files" list, files
        it does not name and named files that are absent."""
        found, seen = [], {"manifest.json"}
        for rel, _path, what in walk_site(self.folder):
            shown = f"{base}{safe_text(rel)}"  # a planted name may hold a line break or an escape
            if what in ("link", "special"):
                what = "symbolic link" if what == "link" else "special file"
                found.append(f"{shown}: {what} in the site; a build never writes one: remove it and rebuild")
            elif what == "file" and listed is not None and rel not in seen:
                seen.add(rel)
                if rel not in listed:
                    found.append(f"{shown}: not written by the build (manifest.json does not list it); "
                                 "delete it (a build leaves files it did not write alone)")
        self.present = seen  # a listed file that is not is named once, here
        for rel in sorted((listed or set()) - seen):
            found.append(f"{base}{safe_text(rel)}: listed in manifest.json but not in the site; rebuild the site")
        return sorted(found)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "missing; rebuild the site or copy the file back"
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "is or passes through a symbolic link (or a file where a folder belongs); a build writes neither"
    return f"cannot read ({exc.strerror})"


class _Remote(_Reader):
    """A published site, read over http(s) (or through ``fetch``), with a size cap and a
    deadline per file."""

    def __init__(self, base: str, fetch: Callable[[str], bytes] | None) -> None:
        self.base = base
        self.fetch = fetch
        self.deadline = network_deadline()

    def _blocks(self, rel: str, limit: int) -> Iterator[bytes]:
        url = self.base + rel
        deadline = _Deadline(self.deadline)
        try:
            if self.fetch is not None:
                data = self.fetch(url)
                if len(data) > limit:
                    raise UnreadableSiteFileError(f"larger than {limit} bytes")
                yield data
                return
            opener = urllib.request.build_opener(_WatchedHTTP(deadline), _WatchedHTTPS(deadline))
            with deadline, opener.open(url, timeout=min(TIMEOUT_S, self.deadline)) as response:
                total = 0
                # read1: what one wait for the socket gives, so the deadline is looked at between waits
                while block := response.read1(BLOCK):
                    total += len(block)
                    if total > limit:
                        raise UnreadableSiteFileError(f"larger than {limit} bytes; no file of a site is")
                    if deadline.passed:
                        break
                    yield block
            if deadline.passed:
                raise deadline.error()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if deadline.passed:  # the socket was cut short at the deadline: that is why it failed
                raise deadline.error() from exc
            # URLError and HTTPError are OSErrors; a cut connection is an HTTPException
            raise UnreadableSiteFileError(f"missing or unreachable ({getattr(exc, 'reason', None) or exc})") from exc

    def read(self, rel: str, limit: int) -> bytes:
        return b"".join(self._blocks(rel, limit))

    def blocks(self, rel: str) -> Iterator[bytes]:
        return self._blocks(rel, MAX_REMOTE_FILE)


class _Deadline:
    """One file's deadline: when it passes, every socket opened for the file gets a timeout so
    short that its next wait fails, so the read ends within one wait of the deadline."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._pass)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        """Cut ``sock`` short at the deadline (at once when it has passed)."""
        with self._lock:
            self._sockets.append(sock)
            if self.passed:
                sock.settimeout(EXPIRED_TIMEOUT_S)

    def _pass(self) -> None:
        with self._lock:
            self.passed = True
            for sock in self._sockets:
                try:
                    sock.settimeout(EXPIRED_TIMEOUT_S)
                except OSError:
                    pass  # closed already

    def error(self) -> SiteStalledError:
        return SiteStalledError(
            f"not received whole within {self.seconds:g} s (the server stalled or sends too slowly); check the "
            f"address and the network, or allow longer with {DEADLINE_VARIABLE}=SECONDS")


def _watched(connection: type[http.client.HTTPConnection], deadline: _Deadline, *args: Any,
             **kwargs: Any) -> http.client.HTTPConnection:
    """An http.client connection whose socket ``deadline`` watches from the moment it connects."""
    made = connection(*args, **kwargs)
    connect = made.connect

    def connect_watched() -> None:
        connect()
        deadline.watch(made.sock)

    made.connect = connect_watched  # type: ignore[method-assign]
    return made


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_watched, http.client.HTTPConnection, self.deadline), req)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_watched, http.client.HTTPSConnection, self.deadline), req,
                            context=self._context)  # type: ignore[attr-defined]
