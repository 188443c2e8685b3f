"""The only writer of a site. Files are gathered first, then written.

A first build (or one that knows nothing of the files at the output) writes the whole folder
beside the output and swaps it in at once. A rebuild updates the site in place: a file the
last build wrote with the same fingerprint (a content hash, a record id, a page key) and
still as that build left it is not touched, not even opened, so a rebuild costs about one
lstat per unchanged file. Every other file is produced and written beside the output first
(``.NAME.tmp-…``), so a build that fails while producing bytes leaves the site as it was;
then each is renamed into place, every file after the new files it links to and
manifest.json last (``write_order.py``), and files the build no longer has are removed at
the end. A build killed among those renames leaves a site whose every page is the old or
the new version and whose links all resolve; the next build finishes it. There is never a
moment with no site.

"As that build left it" is judged as git and rsync judge: the (inode, ctime, size) noted
when the file was put in place. Any write, truncation, chmod, link or replacement changes
one of them, and such a file is hashed: kept only if it is a regular file (never a link)
with the recorded sha256 and a fresh file's mode, written again otherwise, so an edit made
to the previous site never survives a rebuild. No build waits for the clock: a file whose
ctime is within a tick of the time it was noted gets no stamp and is hashed next time.

A build replaces only a folder that an ikreport build wrote (a manifest.json of ours, and
nothing in it but paths a build writes): `-o` pointed at a project folder is refused, never
emptied. Leftovers of a killed build (``.NAME.tmp-…``, ``.NAME.old-…`` beside the output,
holding only paths a build writes) are removed by the next build. Builds into one folder
take turns (a lock on the folder that holds it).
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from ikreport.commands.verify_site import MANIFEST
from ikreport.errors import BuildError
from ikreport.site.site_folder import FILE, Found, check_replaceable, remove_leftovers, take_turn
from ikreport.site.write_order import links_in, rename_order

# path -> [fingerprint, size in bytes, sha256 hex, inode, ctime in ns] of each file of the site
# the last build left (a file without a fingerprint is known by its sha256); the inode and
# ctime are taken once the file is in place (0 if they could not be: it is hashed next time)
State = dict[str, list[Any]]
TICK_NS = 20_000_000  # more than the file system clock's lag behind time.time_ns() (a tick, 4-10 ms)


class Entry(NamedTuple):
    """One file of the site: how to get its bytes, their size, and what identifies them (a
    named tuple: made 5,000 times a build, in half the time a frozen dataclass takes)."""

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
        # no part is empty, "." or "..": no "//", "/." or a "." or "/" at either end (a part
        # may start with a dot, as .nojekyll does, so those are looked at part by part)
        plain = path and "//" not in path and "/." not in path and path[0] not in "./" and path[-1] not in "./"
        if not plain and (not path or path.startswith("/") or any(part in ("", ".", "..") for part in path.split("/"))):
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
    return {path: entry for path, entry in value.items()  # spelt out: 5,000 entries a rebuild
            if type(entry) is list and len(entry) == 5 and type(entry[0]) is str and type(entry[1]) is int
            and type(entry[2]) is str and type(entry[3]) is int and type(entry[4]) is int}


def write_site(files: SiteFiles, output: Path, previous: State | None = None,
               built: re.Pattern[str] | None = None) -> State:
    """Write the site to ``output``, in place when a site is there and ``previous`` (the state
    the last build returned) knows its files; returns the state to pass as ``previous`` next
    time. ``built`` matches every relative path (file or folder) a build may write (default:
    this build's); a folder holding anything else is neither written into nor replaced."""
    output = Path(os.path.abspath(output))
    ours: Callable[[str], object]
    if built is not None:
        ours = built.fullmatch
    else:
        ours = {"/".join(p.split("/")[:n]) for p in files.entries for n in range(1, p.count("/") + 2)}.__contains__
    parent = output.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"{parent}: cannot create the folder ({exc.strerror}); check the path") from exc
    with take_turn(parent):
        remove_leftovers(parent, output.name, ours)
        known = (previous or {}).get(MANIFEST)
        wrote = previous or {}  # a path the last build wrote is one a build writes: no pattern to match
        found = check_replaceable(output, lambda path: path in wrote or ours(path),
                                  known is not None and _unchanged(_lstat(f"{output}/{MANIFEST}"), known))
        tmp = parent / f".{output.name}.tmp-{secrets.token_hex(4)}"
        try:
            os.mkdir(tmp)
            if found and previous:
                return _update(files, tmp, output, previous, found)
            return _write_whole(files, tmp, output)
        except OSError as exc:
            raise BuildError(f"{output}: cannot write the site ({exc.strerror}); check the folder is writable") from exc
        finally:  # a crash before this leaves it for the next build to remove
            shutil.rmtree(tmp, ignore_errors=True)


def _write_whole(files: SiteFiles, tmp: Path, output: Path) -> State:
    """Write every file beside the output and put the folder in place at once: for a first
    build, or when nothing is known of the files there (every file is written anyway)."""
    state: State = {}
    made: set[str] = set()
    for path in sorted(files.entries):  # plain strings: thousands of pathlib joins cost more than the writes
        state[path] = _stage(files.entries[path], os.path.join(str(tmp), path), made)[0]
    old = _swap(tmp, output)
    if old is not None and old != tmp:
        shutil.rmtree(old, ignore_errors=True)  # a crash here leaves it for the next build to remove
    _stamp(output, state, state)
    return state


def _update(files: SiteFiles, tmp: Path, output: Path, previous: State, found: Found) -> State:
    """Bring the site at ``output`` up to date in place. A file the last build wrote with the
    same fingerprint, and still as it left it, is not touched. Every other file is produced
    and written to ``tmp`` first, so an error while producing bytes changes nothing; then
    they are renamed in, each after the new files it links to, and files no longer built
    are removed last."""
    mode = os.lstat(tmp).st_mode & 0o666  # what a file written now gets (the umask's)
    state: State = {}
    staged: dict[str, set[str]] = {}  # path written to tmp -> the site paths its page links to
    made: set[str] = set()
    site, beside = f"{output}/", f"{tmp}/"  # plain strings: 5,000 path joins cost more than the lstats
    for path, entry in files.entries.items():
        fingerprint, data = entry.fingerprint, None
        if fingerprint is None:
            data = entry.load()
            fingerprint = hashlib.sha256(data).hexdigest()
        before = previous.get(path)
        if before is not None:
            st, sha256 = _lstat(site + path), None
            if before[0] != fingerprint:  # made anew under another key (a new template, a new ikreport)
                data = entry.load()
                sha256 = entry.sha256 or hashlib.sha256(data).hexdigest()
            elif _unchanged(st, before):  # the common case, spelt out: one lstat
                state[path] = before
                continue
            if sha256 in (None, before[2]) and (kept := _as_left(site + path, st, before, mode)) is not None:
                state[path] = kept if sha256 is None else [fingerprint, *kept[1:]]
                continue  # the same bytes need no rename
        state[path], data = _stage(entry, beside + path, made, data)
        staged[path] = links_in(path, data) if path.endswith((".html", ".md")) else set()
    made = set()
    for path in rename_order(staged, found):
        target = os.path.join(output, path)
        folder = os.path.dirname(target)
        if folder not in made:
            for n, char in enumerate(path):  # a file where this build has a folder: it is dropped anyway
                if char == "/" and found.get(path[:n]) == FILE:
                    os.unlink(os.path.join(output, path[:n]))
                    del found[path[:n]]
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        if found.get(path, FILE) != FILE:  # a folder where this build has a file: all in it is dropped
            shutil.rmtree(target)
        os.replace(os.path.join(tmp, path), target)
    _remove_dropped(output, found, files.entries)
    _stamp(output, state, staged)
    return state


def _stage(entry: Entry, target: str, made: set[str], data: bytes | None = None) -> tuple[list[Any], bytes]:
    """Write ``entry``'s bytes (``data`` when already loaded) to ``target``; returns its state
    entry, not yet stamped, and the bytes. A file without a fingerprint is known by its sha256."""
    folder = os.path.dirname(target)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    if data is None:
        data = entry.load()
    with open(target, "xb") as f:
        f.write(data)
    sha256 = entry.sha256 or hashlib.sha256(data).hexdigest()
    return [entry.fingerprint or sha256, len(data), sha256, 0, 0], data


def _as_left(path: str, st: os.stat_result | None, before: list[Any], mode: int) -> list[Any] | None:
    """The state entry of the site's file at ``path`` (``st``: its lstat) if it still holds what
    ``before`` (its state entry) says, None if it must be written again. A regular file whose
    (inode, ctime, size) are those stamped is unchanged since, as git and rsync judge; any other
    is hashed, and kept (stamped anew) only as a regular file with the recorded size and sha256
    and the mode a fresh file gets (``mode``); never opened through a link."""
    fingerprint, size, sha256 = before[:3]
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_size != size:
        return None
    if _unchanged(st, before):  # the common case: one lstat
        return before
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # gone, or swapped for a link since
    try:
        now = time.time_ns()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != size or st.st_mode & 0o7777 != mode:
            return None  # after a chmod, say: written again with the mode a build gives
        with os.fdopen(os.dup(fd), "rb") as f:
            if hashlib.file_digest(f, "sha256").hexdigest() != sha256:
                return None
    except OSError:
        return None
    finally:
        os.close(fd)
    # stamped from before the read, so an edit made while hashing shows next time
    return [fingerprint, size, sha256, *_stamp_of(st, now)]


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _unchanged(st: os.stat_result | None, before: list[Any]) -> bool:
    """Whether the file ``st`` describes is, by its stamp, as the build of ``before`` (its state
    entry) left it: a regular file of the same inode, ctime and size."""
    return (st is not None and bool(before[3]) and st.st_ino == before[3] and st.st_ctime_ns == before[4]
            and st.st_size == before[1] and stat.S_ISREG(st.st_mode))


def _stamp_of(st: os.stat_result, now: int) -> tuple[int, int]:
    """(inode, ctime) to note for a file seen as ``st`` at time ``now`` (ns); (0, 0) when a
    later edit could get the same ctime. The file system's clock is coarse (up to a tick,
    ~4-10 ms, behind time.time_ns): an edit after ``now`` gets a ctime later than now - TICK_NS,
    so a file whose ctime is older than that is told apart from any later edit of it."""
    if not stat.S_ISREG(st.st_mode) or st.st_ctime_ns >= now - TICK_NS:
        return 0, 0  # hashed by the next build, which stamps it then
    return st.st_ino, st.st_ctime_ns


def _stamp(output: Path, state: State, paths: Iterable[str]) -> None:
    """Stamp each of ``paths`` as it now is in the site (renaming changes a file's ctime).
    No waiting: files written within the last tick go unstamped and are hashed next time."""
    for path in paths:
        now = time.time_ns()
        try:
            state[path][3:] = _stamp_of(os.lstat(os.path.join(output, path)), now)
        except OSError:
            pass  # gone already: the next build writes it again


def _remove_dropped(output: Path, found: Found, built: dict[str, Entry]) -> None:
    """Remove the files the last site had and this build does not, then the folders left
    empty (deepest first). Last of all, when nothing links to them any more."""
    gone = found.keys() - built.keys()  # set arithmetic: 5,000 lookups in Python cost 1 ms
    dropped = sorted(p for p in gone if found[p] == FILE)
    for path in dropped:
        try:
            os.unlink(os.path.join(output, path))
        except (FileNotFoundError, NotADirectoryError):
            pass  # went with its folder, where this build has a file
    # only folders that lost files or held none: rmdir on a folder of 1,000 files costs 0.3 ms
    folders = {p for p in gone if found[p] == 0} | {p[:i] for p in dropped for i, c in enumerate(p) if c == "/"}
    for path in sorted(folders, reverse=True):
        try:
            os.rmdir(os.path.join(output, path))
        except OSError:
            pass  # still holds files of this build


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
