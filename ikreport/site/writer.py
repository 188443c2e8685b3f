"""The only writer of a site. Files are gathered first, then written.

Each file comes with the sha256 of its content (a ``.gz`` blob's once decompressed), which
``manifest.json``, written last, keeps. A first build is written beside the output and renamed
into place whole. A rebuild skips each file whose sha256 the manifest gives and that is still as
the build left it: a regular file (never a link) of its size whose inode changed no later than
the manifest's (any write, chmod or replacement since moves its ctime past it), looked at by a
rebuild's re-hash child once it has hashed the records (the build has its turn at the folder from
its start), else by the writer. The rest are all written beside the output before the first is
renamed in, so a build that fails before them changes nothing. One that fails or is killed among
them leaves files newer than the manifest, which the next build writes again, and its own
manifest in its temporary folder: the next build also removes the files that lists, renamed in
since, that it does not make, and the folder once the site is written.

A build writes only into a folder that an ikreport build wrote (a manifest.json of ours), never
through a symbolic link, and removes only files its manifest lists: ``-o`` pointed at a project
folder is refused, never emptied. Builds into one folder take turns (a lock on the folder that
holds it); the leftovers of a killed build (``.NAME.tmp-…`` beside the output) are removed by
the next to write the site.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ikreport.site.manifest import MANIFEST, MANIFEST_SCHEMA, inside_site, read_manifest_bytes
from ikreport.errors import BuildError, NotASiteError

STAGING = ".ikreport-staging"  # the mark in a folder files are written to before they go in place
# what a build's paths are made of, checked for all paths at once at C speed (the lines joined by
# "/" then hold no empty, "." or ".." part); paths of other characters go through inside_site
_PLAIN = bytes(c for c in range(128) if chr(c).isalnum() or chr(c) in "_-./\n")
_NO_NAME = re.compile(r"/\.{0,2}/")


class Entry(NamedTuple):
    """One file of the site: how to get its bytes, their size, and their content's sha256."""

    load: Callable[[], bytes]
    size: int
    sha256: str


class SiteFiles:
    """Relative path -> how to produce its bytes, each path given once."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}

    def add(self, path: str, data: bytes | str) -> None:
        """Add a file whose bytes are known now."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.add_lazy(path, lambda: raw, len(raw), hashlib.sha256(raw).hexdigest())

    def add_lazy(self, path: str, load: Callable[[], bytes], size: int, sha256: str) -> None:
        """Add a file whose bytes ``load`` gives when the writer needs them; ``sha256`` is their
        content's (``load`` checks them against it, or made them)."""
        if path in self.entries:
            raise BuildError(f"{path}: written twice in one build; two pages claim the same file")
        self.entries[path] = Entry(load, size, sha256)


def all_inside_site(paths: list[str]) -> bool:
    """Whether every one of ``paths`` is ``inside_site``: all at once at C speed when they are plain, else one by one."""
    text = "\n".join(paths)
    return text.count("\n") == len(paths) - 1 and text.isascii() and not text.encode().translate(None, _PLAIN) \
        and not _NO_NAME.search("/" + text.replace("\n", "/") + "/") or all(map(inside_site, paths))


class Previous(NamedTuple):
    """What the site at the output holds, by its manifest."""

    files: list[Any]  # every file it lists (only text is a path)
    sha256: dict[str, Any]  # the content sha256 of each, where the manifest gives it (only text is one)
    written: int  # the manifest's ctime (ns): renamed in last, so no file the build wrote is newer


@contextmanager
def open_site(output: Path) -> Iterator[Site]:
    """Take this build's turn at ``output`` (builds into one folder take turns: an exclusive lock
    on the folder holding it, released by the kernel if a build dies, so never stale) and read
    what the site there holds; the build writes it (``Site.write``) before the turn ends."""
    output = Path(os.path.abspath(output))
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(output.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise BuildError(f"{output.parent}: cannot open the folder ({exc.strerror}); check the path and its permissions") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield Site(output, read_previous(output), *leftovers(output.parent, output.name))
    finally:
        os.close(fd)


class Site:
    """The site at ``output`` while a build has its turn: what its manifest lists, and which
    of its files are still as the last build left it."""

    def __init__(self, output: Path, previous: Previous | None, left: Iterable[str] = (), strays: Iterable[Any] = ()) -> None:
        self.output, self.previous, self.left, self.strays, self.renaming = output, previous, left, strays, False
        self.still: dict[str, int] = {}  # a file looked at before it is written: _left's answer

    def write(self, files: SiteFiles, manifest: Callable[[SiteFiles], bytes]) -> None:
        """Write ``files`` and then manifest.json (see the module docstring)."""
        output, parent, previous = self.output, self.output.parent, self.previous
        if not all_inside_site(list(files.entries)):  # every path, before anything is written
            raise BuildError(f"{next(p for p in files.entries if not inside_site(p))}: not a relative path inside the site")
        tmp = parent / f".{output.name}.tmp-{secrets.token_hex(4)}"
        try:
            os.mkdir(tmp)
            (tmp / STAGING).touch()  # marks it as this writer's, for leftovers()
            if previous is None:
                for path in sorted(files.entries):
                    _stage(files.entries[path].load(), tmp, path)
                _stage(manifest(files), tmp, MANIFEST)
                os.unlink(tmp / STAGING)  # the folder is the site now (leftovers() knows it by its manifest)
                if output.exists():
                    os.rmdir(output)  # empty: read_previous said so
                os.rename(tmp, output)
            else:
                self._update(files, manifest, tmp, previous)
            for folder in self.left:  # what killed or failed builds left, needed no more
                shutil.rmtree(folder, ignore_errors=True)
        except OSError as exc:
            raise BuildError(f"{output}: cannot write the site ({exc.strerror}); check the folder is writable") from exc
        finally:  # a crash, or a failure among the renames, leaves it for a later build to remove
            if not (self.renaming and os.path.exists(tmp / MANIFEST)):
                shutil.rmtree(tmp, ignore_errors=True)

    def _update(self, files: SiteFiles, manifest: Callable[[SiteFiles], bytes], tmp: Path, previous: Previous) -> None:
        """Bring the site up to date in place (see the module docstring)."""
        output, known, changed = self.output, previous.sha256, []
        parents = {path.rpartition("/")[0] for path in files.entries} - {""}  # a file is still there only in plain folders
        for folder in sorted({parent.rsplit("/", n)[0] for parent in parents for n in range(parent.count("/") + 1)}):
            if os.path.islink(f"{output}/{folder}"):
                raise NotASiteError(f"{output}/{folder}: a symbolic link in the site; a build writes plain folders only: remove it")
        for path, entry in files.entries.items():
            if known.get(path) == entry.sha256:  # looked at by a re-hash child, else now
                if (self.still[path] if path in self.still else _left(f"{output}/{path}", previous.written)) == entry.size:
                    continue
            _stage(entry.load(), tmp, path)  # every byte is produced before the first rename
            changed.append(path)
        gone = [path for path in previous.files  # the few gone
                if isinstance(path, str) and path not in files.entries and inside_site(path)]
        gone += [path for path, since in self.strays  # a failed build's, not made again, renamed in once it staged them
                 if isinstance(path, str) and path not in files.entries and inside_site(path)
                 and _left(f"{output}/{path}", since - 1) < 0]  # (in the same tick of the ctime clock, too)
        if not changed and not gone:
            return
        _stage(manifest(files), tmp, MANIFEST)
        self.renaming = True  # from here a failure leaves the site part new: tmp's manifest says which files
        for path in sorted(changed):
            target = f"{output}/{path}"
            _make_folders(output, path)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)  # a folder where this build has a file
            os.replace(f"{tmp}/{path}", target)
        for path in sorted(set(gone)):
            _remove(output, path)
        os.replace(tmp / MANIFEST, output / MANIFEST)  # last: it is what the next build trusts


def _left(file: str, since: int) -> int:
    """``file``'s size if still as a build left it (a plain file changed no later than ``since``: its manifest's), else -1."""
    try:
        st = os.lstat(file)
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) and st.st_ctime_ns <= since else -1


def _stage(data: bytes, tmp: Path, path: str) -> None:
    target = f"{tmp}/{path}"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "xb") as f:
        f.write(data)


def _make_folders(output: Path, path: str) -> None:
    """The folders ``path`` lies in, made where missing; a link or file in their place is an
    error (a build never writes through a link), except a file, which this build drops."""
    folder = str(output)
    for part in path.split("/")[:-1]:
        folder = f"{folder}/{part}"
        try:
            st = os.lstat(folder)
        except FileNotFoundError:
            os.mkdir(folder)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise NotASiteError(f"{folder}: a symbolic link in the site; a build writes plain folders only: remove it")
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(folder)  # a file where this build has a folder
            os.mkdir(folder)


def _remove(output: Path, path: str) -> None:
    """Remove a file the last build wrote and this one does not, and the folders it leaves empty; never through a link."""
    parts = path.split("/")
    for n in range(1, len(parts)):
        if not os.path.isdir(os.path.join(output, *parts[:n])) or os.path.islink(os.path.join(output, *parts[:n])):
            return  # gone already, or not ours to follow
    try:
        os.unlink(os.path.join(output, path))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return
    for n in range(len(parts) - 1, 0, -1):
        try:
            os.rmdir(os.path.join(output, *parts[:n]))
        except OSError:
            break  # still holds files


def read_previous(output: Path) -> Previous | None:
    """What the site at ``output`` holds; None when there is no folder there or an empty one.
    NotASiteError unless it is a folder holding a manifest.json an ikreport build wrote."""
    try:
        st = os.lstat(output)
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(output) as entries:
                if not any(entries):
                    return None
            found = _manifest(output)
        else:
            found = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BuildError(f"{output}: cannot read it ({exc.strerror}); choose another output folder (-o)") from exc
    if isinstance(found, Previous):
        return found
    raise NotASiteError(f"{output}: exists and is not an ikreport site ({found}); choose another output folder (-o)")


def _manifest(output: Path) -> Previous | str:
    """The site's manifest as Previous, or why it is not an ikreport build's."""
    path = output / MANIFEST
    try:  # a FIFO planted as manifest.json must not hang the build: read as verify --site reads
        manifest = orjson.loads(read_manifest_bytes(path))
        written = os.lstat(path).st_ctime_ns
    except FileNotFoundError:
        return f"no {MANIFEST}"
    except (OSError, ValueError):
        return f"{MANIFEST} is not an ikreport build's"
    if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
        return f"{MANIFEST} is not an ikreport build's"
    listed, digests = manifest.get("files"), manifest.get("sha256")
    # as read: a path that is not text is never removed, a digest that is not text never matches
    return Previous(listed if isinstance(listed, list) else [], digests if isinstance(digests, dict) else {}, written)


def leftovers(parent: Path, name: str) -> tuple[list[str], list[Any]]:
    """The temporary folders killed or failed builds of ``name`` left (named as this writer names
    them and holding its mark or, a first build's, a manifest.json: no user folder is taken), and
    (file, ctime of the manifest staged there) for each file it lists (paths or not)."""
    leftover = re.compile(rf"\.{re.escape(name)}\.tmp-[0-9a-f]{{8}}")
    try:
        found = [e.path for e in os.scandir(parent) if leftover.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return [], []
    left = [path for path in found if os.path.isfile(os.path.join(path, STAGING)) or os.path.isfile(os.path.join(path, MANIFEST))]
    made = [staged for path in left if isinstance(staged := _manifest(Path(path)), Previous)]  # read as a site's
    return left, [(file, staged.written) for staged in made for file in staged.files]
