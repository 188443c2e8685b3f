"""The only writer of a site. Files are gathered first; the folder is written beside the
output and swapped in whole, so a failed or killed build never leaves a half-written site
in place of a good one, and there is never a moment with no site at all.

A build replaces only a folder that an ikreport build wrote (a manifest.json of ours, and
nothing in it but paths a build writes): `-o` pointed at a project folder is refused, never
emptied. Leftovers of a killed build (``.NAME.tmp-…``, ``.NAME.old-…`` beside the output,
holding only paths a build writes) are removed by the next build. Builds into one folder
take turns (a lock on the folder that holds it).

Each file may carry a fingerprint (a content hash, a record id, a page key). When the last
build of this output wrote the same path with the same fingerprint, the file is hard-linked
from the previous site instead of being produced and written again, but only if it is still
a regular file (never a link) with the size and sha256 that build recorded: an edit made
to the previous site never survives a rebuild. Only the previous site is ever linked from,
never the archive or a cache, so editing a site file cannot change evidence.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ikreport.commands.verify_site import MANIFEST, MANIFEST_SCHEMA, read_manifest_bytes
from ikreport.errors import BuildError, NotASiteError

# path -> [fingerprint, size in bytes, sha256 hex, inode, ctime in ns] of each file the last
# build wrote; the inode and ctime are taken once the site is in place (0 if they could not be)
State = dict[str, list[Any]]


@dataclass(frozen=True)
class Entry:
    """One file of the site: how to get its bytes, their size, and what identifies them."""

    load: Callable[[], bytes]
    size: int
    fingerprint: str | None
    # the bytes' sha256 when the caller has it: a record's or blob's id, which the archive
    # checks as it reads them (hashing 340 MB of them again cost 0.3 s of a 1,000-profile build)
    sha256: str | None = None


class SiteFiles:
    """Relative path -> how to produce its bytes, each path given once."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}

    def _check(self, path: str) -> None:
        parts = path.split("/")
        if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise BuildError(f"{path}: not a relative path inside the site")
        if path in self.entries:
            raise BuildError(f"{path}: written twice in one build; two pages claim the same file")

    def add(self, path: str, data: bytes | str, fingerprint: str | None = None) -> None:
        """Add a file whose bytes are known now."""
        self._check(path)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.entries[path] = Entry(lambda: raw, len(raw), fingerprint)

    def add_lazy(self, path: str, load: Callable[[], bytes], size: int, fingerprint: str,
                 sha256: str | None = None) -> None:
        """Add a file whose bytes ``load`` gives when the writer needs them (``sha256``: theirs,
        when ``load`` checks them against it)."""
        self._check(path)
        self.entries[path] = Entry(load, size, fingerprint, sha256)

    def sizes(self) -> dict[str, int]:
        """Every file's size in bytes, by path."""
        return {path: e.size for path, e in self.entries.items()}


def parse_state(value: Any) -> State:
    """The state a build kept (JSON), keeping only well-formed entries: a damaged state
    only means files are written again."""
    if not isinstance(value, dict):
        return {}
    return {path: entry for path, entry in value.items()
            if isinstance(entry, list) and len(entry) == 5 and isinstance(entry[0], str)
            and isinstance(entry[2], str) and all(type(n) is int for n in entry[1:2] + entry[3:])}


def write_site(files: SiteFiles, output: Path, previous: State | None = None,
               built: re.Pattern[str] | None = None) -> State:
    """Write the site to ``output``; returns the state to pass as ``previous`` next time.
    ``built`` matches every relative path (file or folder) a build may write (default: this
    build's); a folder holding anything else is not replaced."""
    output = Path(os.path.abspath(output))
    mine = {"/".join(p.split("/")[:n]) for p in files.entries for n in range(1, p.count("/") + 2)}
    ours = built.fullmatch if built is not None else mine.__contains__
    previous = previous or {}
    parent = output.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"{parent}: cannot create the folder ({exc.strerror}); check the path") from exc
    with _turn(parent):
        _remove_leftovers(parent, output.name, ours)
        _check_replaceable(output, ours)
        tmp = parent / f".{output.name}.tmp-{secrets.token_hex(4)}"
        try:
            state = _write_all(files, tmp, output, previous)
            old = _swap(tmp, output)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise BuildError(f"{output}: cannot write the site ({exc.strerror}); check the folder is writable") from exc
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)  # a crash here leaves it for the next build to remove
        _stamp(output, state)
    return state


def _stamp(output: Path, state: State) -> None:
    """Note each file's inode and ctime now that the site is in place and the old one gone
    (linking and unlinking change a file's ctime). Any later write, truncation, chmod, link
    or replacement changes one of them, and only then does the next build re-hash the file."""
    first = {path: _inode_ctime(os.path.join(output, path)) for path in state}
    # The file system's clock is coarse (up to a tick, ~10 ms, behind time.time_ns): wait
    # until a later edit must get a later ctime than any noted, then look again; a file
    # that changed meanwhile gets no stamp and is hashed next time.
    latest = max((ctime for _, ctime in first.values()), default=0)
    deadline = time.monotonic() + 0.1
    while time.time_ns() <= latest + 20_000_000 and time.monotonic() < deadline:
        time.sleep(0.005)
    settled = time.time_ns() > latest + 20_000_000  # else a clock from the future: no stamps
    for path, entry in state.items():
        now = _inode_ctime(os.path.join(output, path))
        entry[3:] = list(now) if settled and now == first[path] else [0, 0]


def _inode_ctime(path: str) -> tuple[int, int]:
    try:
        st = os.lstat(path)
    except OSError:
        return 0, 0
    return st.st_ino, st.st_ctime_ns


def _write_all(files: SiteFiles, tmp: Path, output: Path, previous: State) -> State:
    state: State = {}
    made: set[str] = set()
    os.mkdir(tmp)
    for path in sorted(files.entries):  # plain strings: thousands of pathlib joins cost more than the writes
        entry = files.entries[path]
        target = os.path.join(tmp, path)
        folder = os.path.dirname(target)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        before = previous.get(path)
        if entry.fingerprint is not None and before is not None and before[0] == entry.fingerprint \
                and _reuse(os.path.join(output, path), target, before):
            state[path] = before
            continue
        data = entry.load()
        with open(target, "xb") as f:
            f.write(data)
        if entry.fingerprint is not None:
            state[path] = [entry.fingerprint, len(data), entry.sha256 or hashlib.sha256(data).hexdigest(), 0, 0]
    return state


def _reuse(source: str, target: str, before: list[Any]) -> bool:
    """Hard-link ``source`` (the previous site's file) to ``target`` if it is a regular file
    holding exactly the bytes recorded in ``before`` (a state entry); the link is checked to
    be that same file. A file whose inode and ctime are those noted is unchanged since (as
    git and rsync judge); any other is hashed."""
    _fingerprint, size, sha256, inode, ctime_ns = before
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False  # gone, or a symbolic link
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return False
        if (st.st_ino, st.st_ctime_ns) != (inode, ctime_ns) or not inode:
            with os.fdopen(os.dup(fd), "rb") as f:
                if hashlib.file_digest(f, "sha256").hexdigest() != sha256:
                    return False
        os.link(source, target, follow_symlinks=False)
        linked = os.lstat(target)
        if (linked.st_ino, linked.st_dev) != (st.st_ino, st.st_dev):  # replaced since it was hashed
            os.unlink(target)
            return False
        return True
    except OSError:
        return False  # another file system, say: write it instead
    finally:
        os.close(fd)


def _check_replaceable(output: Path, ours: Callable[[str], object]) -> None:
    try:
        st = os.lstat(output)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BuildError(f"{output}: cannot read it ({exc.strerror}); choose another output folder (-o)") from exc
    why = None
    if not stat.S_ISDIR(st.st_mode):
        why = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
    else:
        try:
            with os.scandir(output) as entries:
                empty = not any(entries)
            why = None if empty else _foreign(output, ours)
        except OSError as exc:
            raise BuildError(f"{output}: cannot read it ({exc.strerror}); choose another output folder (-o)") from exc
    if why is not None:
        raise NotASiteError(f"{output}: exists and is not an ikreport site ({why}); choose another output folder (-o)")


def _foreign(folder: Path, ours: Callable[[str], object]) -> str | None:
    """Why ``folder`` is not a site an ikreport build wrote; None when it is one."""
    try:  # a FIFO planted as manifest.json must not hang the build: read as verify --site reads
        manifest = json.loads(read_manifest_bytes(folder / MANIFEST))
    except FileNotFoundError:
        return f"no {MANIFEST}"
    except (OSError, ValueError):
        return f"{MANIFEST} is not an ikreport build's"
    if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
        return f"{MANIFEST} is not an ikreport build's"
    return _stray(folder, ours)


def _stray(folder: Path, ours: Callable[[str], object]) -> str | None:
    """The first thing under ``folder`` that a build does not write, said in words; None if none."""
    for path, entry in _walk(folder, ""):
        if entry.is_symlink():
            return f"{path} is a symbolic link"
        if not (entry.is_dir() or entry.is_file()) or not ours(path):
            return f"{path} was not written by a build"
    return None


def _walk(folder: Path, prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = f"{prefix}{entry.name}"
            yield path, entry
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(Path(entry.path), f"{path}/")


def _remove_leftovers(parent: Path, name: str, ours: Callable[[str], object]) -> None:
    """Remove the temp and old folders a killed build of ``name`` left: named as this writer
    names them and holding only paths a build writes, so no user folder is ever taken."""
    leftover = re.compile(rf"\.{re.escape(name)}\.(?:tmp|old)-[0-9a-f]{{8}}")
    try:
        found = [e for e in os.scandir(parent) if leftover.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in found:
        try:
            if _stray(Path(entry.path), ours) is None:
                shutil.rmtree(entry.path)
        except OSError:
            pass  # not ours to worry about: the build goes on


@contextmanager
def _turn(parent: Path) -> Iterator[None]:
    """Builds into the same folder take turns: an exclusive lock on the folder holding the
    output (released by the kernel if a build dies, so it is never stale)."""
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise BuildError(f"{parent}: cannot open the folder to lock it ({exc.strerror}); check its permissions") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100


def _swap(tmp: Path, output: Path) -> Path | None:
    """Put ``tmp`` in place of ``output``; returns where the old site now is (None if there
    was none). On Linux one renameat2(RENAME_EXCHANGE) swaps the two folders atomically;
    elsewhere (or on a file system without it) the old folder is renamed aside first, leaving
    a moment with no site that a crash could make lasting only until the next build."""
    if not output.exists():
        os.rename(tmp, output)
        return None
    if _exchange(tmp, output):
        return tmp
    old = output.with_name(f".{output.name}.old-{secrets.token_hex(4)}")
    os.rename(output, old)
    try:
        os.rename(tmp, output)
    except OSError:
        os.rename(old, output)
        raise
    return old


def _exchange(a: Path, b: Path) -> bool:
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False  # this file system or kernel cannot: fall back to two renames
    raise OSError(err, os.strerror(err), str(b))


_LIBC: Any = None


def _libc() -> Any:
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _LIBC = False
    return _LIBC or None
