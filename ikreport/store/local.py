"""The local-folder backend: ``records/ab/cdef….json`` and ``blobs/ab/cdef…[.gz]`` under a root.

Files are written once (temp file, fsync, hard link into place, so a crash never leaves a
partial file under a real name), made read-only, and never rewritten: writing what is
already there does nothing. Reads and writes refuse symbolic links (a file, its shard folder
or its area folder), so neither ever leaves the folder.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ikreport.errors import ArchiveError, IntegrityError, UnknownIdError
from ikreport.store.backend import CHUNK, NAME_RX, Area

SHARD_RX = re.compile(r"^[0-9a-f]{2}$")
RECORD_SUFFIX = ".json"
TEMP_PREFIX = ".tmp-"
SUFFIX: dict[Area, str] = {"records": RECORD_SUFFIX, "blobs": ""}


class LocalFolder:
    """An archive's files in a folder on disk (the Backend protocol, backend.py)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._prefix = os.path.join(str(root), "")  # for _file's string joins
        self._plain: set[str] = set()  # folders found to be folders, not links (a build reads every record)

    def path(self, area: Area, name: str) -> Path:
        """Where the file is (or would be) on disk."""
        return Path(self.file(area, name))

    def file(self, area: Area, name: str) -> str:
        """``path`` as a plain string: a build stats every blob it cites, and pathlib joins cost more than stats."""
        return f"{self._prefix}{area}/{name[:2]}/{name[2:]}{SUFFIX[area]}"

    def where(self, area: Area, name: str) -> str:
        """The file's path, for messages."""
        return str(self.path(area, name))

    def ids(self, area: Area, prefix: str = "") -> list[str]:
        """The sorted stored names of the regular files of ``area`` starting with ``prefix``
        (one shard is read when the prefix names it)."""
        return sorted(i for i in self._names(area, prefix[:2]) if i.startswith(prefix))

    def _shards(self, top: Path, shard_prefix: str) -> Iterator[os.DirEntry[str]]:
        # a linked records/ or blobs/ is refused here, so check and build agree with verify
        if top.is_symlink():
            raise IntegrityError(f"{top}: is a symbolic link; archives hold plain folders and files only")
        if not top.is_dir():
            return
        for shard in os.scandir(top):
            if (shard.name.startswith(shard_prefix) and shard.is_dir(follow_symlinks=False)
                    and SHARD_RX.match(shard.name)):
                yield shard

    def _names(self, area: Area, shard_prefix: str) -> Iterator[str]:
        suffix, name_rx = SUFFIX[area], NAME_RX[area]
        for shard in self._shards(self.root / area, shard_prefix):
            for entry in os.scandir(shard.path):
                if suffix and not entry.name.endswith(suffix):
                    continue
                full = shard.name + entry.name.removesuffix(suffix)
                if not name_rx.match(full):
                    continue
                if entry.is_symlink():  # never passed over: its record would be gone from the site
                    raise IntegrityError(f"{entry.path}: is a symbolic link; archives hold plain files only")
                if entry.is_file(follow_symlinks=False):
                    yield full

    def read(self, area: Area, name: str) -> bytes:
        """The file's bytes; refuses a link (the file, its shard or its area folder)."""
        with os.fdopen(self._open(self.file(area, name)), "rb") as f:
            return f.read()

    def read_chunks(self, area: Area, name: str) -> Iterator[bytes]:
        """The file's bytes, CHUNK at a time, read as ``read`` reads."""
        with os.fdopen(self._open(self.file(area, name)), "rb", buffering=0) as f:
            while chunk := f.read(CHUNK):
                yield chunk

    def tail(self, area: Area, name: str, size: int) -> bytes:
        """The file's last ``size`` bytes, read as ``read`` reads."""
        fd = self._open(self.file(area, name))
        try:
            return os.pread(fd, size, max(0, os.fstat(fd).st_size - size))
        finally:
            os.close(fd)

    def _open(self, path: str) -> int:
        """A descriptor of the file at ``path``: O_NOFOLLOW guards the file itself, and its shard
        and area folder are refused as links, so a read never leaves the archive."""
        shard = os.path.dirname(path)
        for folder in (shard, os.path.dirname(shard)):
            if folder in self._plain:
                continue
            try:
                linked = stat.S_ISLNK(os.lstat(folder).st_mode)
            except FileNotFoundError as exc:
                raise UnknownIdError(f"{path}: not in the archive") from exc
            except OSError as exc:
                raise ArchiveError(f"{path}: cannot read ({exc.strerror})") from exc
            if linked:
                raise IntegrityError(f"{folder}: is a symbolic link; archives hold plain folders and files only")
            self._plain.add(folder)
        try:
            return os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError as exc:
            raise UnknownIdError(f"{path}: not in the archive") from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise IntegrityError(f"{path}: is a symbolic link; archives hold plain files only") from exc
            raise ArchiveError(f"{path}: cannot read ({exc.strerror})") from exc

    def exists(self, area: Area, name: str) -> bool:
        """Whether the file is there (a link is not followed)."""
        return self.size(area, name) is not None

    def size(self, area: Area, name: str) -> int | None:
        """The file's size on disk; None when absent, or not a regular file (a link is not followed)."""
        try:
            st = os.lstat(self.file(area, name))
        except OSError:
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def write_once(self, area: Area, name: str, data: bytes) -> None:
        """Write the file unless it is there: temp file, fsync, link, read-only."""
        _write_once(self.path(area, name), data)

    def write_once_chunks(self, area: Area, name: str, chunks: Iterable[bytes | memoryview]) -> None:
        """``write_once`` from chunks: each is written as it comes."""
        _write_once(self.path(area, name), chunks)

    def survey(self, notes: list[str]) -> Survey:
        """Every entry of the folder, in name order, for ``verify``: what does not belong is a
        problem, a leftover temp file a note (it can never be taken for a file of the archive)."""
        found = Survey()
        areas: tuple[Area, ...] = ("blobs", "records")  # blobs first: problems are listed in this order
        for area in areas:
            top, suffix, name_rx = self.root / area, SUFFIX[area], NAME_RX[area]
            if top.is_symlink():  # build refuses to read through it, so verify must not pass it
                found.order.append(f"{top}: symbolic link in the archive; archives hold plain folders and files only")
                continue
            if not top.is_dir():
                continue
            for entry in sorted(os.scandir(top), key=lambda e: e.name):
                if not (SHARD_RX.match(entry.name) and entry.is_dir(follow_symlinks=False)):
                    found.order.append(f"{entry.path}: unexpected entry in the archive; move it out")
                    continue
                for item in sorted(os.scandir(entry.path), key=lambda e: e.name):
                    name = item.name
                    if name.startswith(TEMP_PREFIX):
                        notes.append(f"{item.path}: temporary file left by an interrupted write; safe to delete")
                        continue
                    stem = name[: len(name) - len(suffix)] if suffix and name.endswith(suffix) else (None if suffix else name)
                    if stem is None or not name_rx.match(entry.name + stem) or not item.is_file(follow_symlinks=False):
                        what = "symbolic link" if item.is_symlink() else "unexpected file"
                        found.order.append(f"{item.path}: {what} in the archive; remove it")
                        continue
                    if item.stat(follow_symlinks=False).st_mode & 0o222:
                        found.writable += 1
                    found.order.append(len(found.files))
                    found.files.append((item.path, entry.name + stem, area))
        return found


@dataclass
class Survey:
    """What a walk of an archive found, for ``verify``."""

    order: list[str | int] = field(default_factory=list)  # a problem, or the index of a file to check
    files: list[tuple[str, str, Area]] = field(default_factory=list)  # (path or URL, stored name, area)
    writable: int = 0  # files with a write bit set (ikreport writes them read-only)


def _write_once(path: Path, data: bytes | Iterable[bytes | memoryview]) -> None:
    """Write ``data`` at ``path`` (ROOT/AREA/SHARD/NAME) unless a file is there: temp, fsync,
    link, read-only. The area and shard folders are opened without following links, and the
    file is made inside the shard's descriptor, so a folder replaced by a link is refused
    rather than written through (as reads refuse it)."""
    shard_path = path.parent
    fds: list[int] = []
    tmp = f"{TEMP_PREFIX}{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    made = False
    try:
        shard_path.parent.parent.mkdir(parents=True, exist_ok=True)  # the root: the user's folder, links allowed
        fds.append(os.open(shard_path.parent.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        fds.append(_plain_folder(fds[-1], shard_path.parent))
        shard = _plain_folder(fds[-1], shard_path)
        fds.append(shard)
        try:
            os.stat(path.name, dir_fd=shard, follow_symlinks=False)
            return  # there already (verify says whether it is whole)
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o444, dir_fd=shard)
        made = True
        try:
            for chunk in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            # fails if another writer got there first: same bytes, keep theirs
            os.link(tmp, path.name, src_dir_fd=shard, dst_dir_fd=shard, follow_symlinks=False)
        except FileExistsError:
            pass
        os.fsync(shard)
    except OSError as exc:
        raise ArchiveError(
            f"{path}: cannot write ({exc.strerror}); check that the archive is writable and the disk has space"
        ) from exc
    finally:
        if made:
            try:
                os.unlink(tmp, dir_fd=fds[-1])
            except OSError:
                pass
        for fd in reversed(fds):
            os.close(fd)


def _plain_folder(parent: int, path: Path) -> int:
    """A descriptor of the folder ``path`` (made when absent) inside the folder open as
    ``parent``; ArchiveError when it is a symbolic link."""
    for _ in range(2):
        try:
            return os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        except FileNotFoundError:
            try:
                os.mkdir(path.name, dir_fd=parent)
            except FileExistsError:
                pass  # made meanwhile by another writer, or a dangling link: the next open says
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(os.lstat(path.name, dir_fd=parent).st_mode):
                # ArchiveError, not IntegrityError: the archive cannot be written, so a sync stops here
                raise ArchiveError(f"{path}: is a symbolic link; ikreport writes only into plain folders of an "
                                   "archive: make it a real folder (move what it points at into it)") from None
            raise
    return os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
