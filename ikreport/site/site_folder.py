"""Whether a folder is a site an ikreport build wrote, and so one a build may write into:
a ``manifest.json`` of ours and nothing in it but paths a build writes (no links, no
``.git``, no ``src/``); the leftovers of a killed build beside it; and the lock that makes
builds into one folder take turns. The writer (``writer.py``) asks before touching anything.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from ikreport.commands.verify_site import MANIFEST, MANIFEST_SCHEMA, read_manifest_bytes
from ikreport.errors import BuildError, NotASiteError

# path -> FILE for a file, or the number of entries a folder holds, of each path of a site
Found = dict[str, int]
FILE = -1


def check_replaceable(output: Path, ours: Callable[[str], object], trust_manifest: bool = False) -> Found:
    """Every path of the site at ``output``; empty when there is no folder there or an
    empty one. Raises NotASiteError unless it is a site a build wrote.
    ``trust_manifest``: its manifest.json is still as the last build left it (not read again)."""
    try:
        st = os.lstat(output)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BuildError(f"{output}: cannot read it ({exc.strerror}); choose another output folder (-o)") from exc
    found: Found = {}
    why = None
    if not stat.S_ISDIR(st.st_mode):
        why = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
    else:
        try:
            with os.scandir(output) as entries:
                empty = not any(entries)
            why = None if empty else _foreign(output, ours, found, trust_manifest)
        except OSError as exc:
            raise BuildError(f"{output}: cannot read it ({exc.strerror}); choose another output folder (-o)") from exc
    if why is not None:
        raise NotASiteError(f"{output}: exists and is not an ikreport site ({why}); choose another output folder (-o)")
    return found


def _foreign(folder: Path, ours: Callable[[str], object], found: Found, trust_manifest: bool) -> str | None:
    """Why ``folder`` is not a site an ikreport build wrote; None when it is one (and then
    ``found`` holds its paths)."""
    if not trust_manifest:
        try:  # a FIFO planted as manifest.json must not hang the build: read as verify --site reads
            manifest = orjson.loads(read_manifest_bytes(folder / MANIFEST))  # 650 kB for 1,000 profiles: json takes 4 ms
        except FileNotFoundError:
            return f"no {MANIFEST}"
        except (OSError, ValueError):
            return f"{MANIFEST} is not an ikreport build's"
        if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
            return f"{MANIFEST} is not an ikreport build's"
    return stray(folder, ours, found)


def stray(folder: Path, ours: Callable[[str], object], found: Found | None = None) -> str | None:
    """The first thing under ``folder`` (in path order) that a build does not write, said in
    words; None if none. Each path seen goes in ``found``."""
    strays: list[tuple[list[str], str]] = []
    todo = [(str(folder), "")]
    while todo:  # one readdir a folder, no stat: the file type comes with the name
        top, prefix = todo.pop()
        held = 0
        with os.scandir(top) as entries:
            for entry in entries:
                held += 1
                path = prefix + entry.name
                is_folder = not entry.is_file(follow_symlinks=False)
                if is_folder and not entry.is_dir(follow_symlinks=False):
                    what = "is a symbolic link" if entry.is_symlink() else "was not written by a build"
                elif not ours(path):  # a stray folder is not entered: it is refused whatever it holds
                    what = "was not written by a build"
                else:
                    if found is not None:
                        found[path] = 0 if is_folder else FILE  # a folder's count comes when it is read
                    if is_folder:
                        todo.append((entry.path, path + "/"))
                    continue
                strays.append((path.split("/"), f"{path} {what}"))
        if found is not None and prefix:
            found[prefix[:-1]] = held
    return min(strays)[1] if strays else None


def remove_leftovers(parent: Path, name: str, ours: Callable[[str], object]) -> None:
    """Remove the temp and old folders a killed build of ``name`` left: named as this writer
    names them and holding only paths a build writes, so no user folder is ever taken."""
    leftover = re.compile(rf"\.{re.escape(name)}\.(?:tmp|old)-[0-9a-f]{{8}}")
    try:
        found = [e for e in os.scandir(parent) if leftover.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in found:
        try:
            if stray(Path(entry.path), ours) is None:
                shutil.rmtree(entry.path)
        except OSError:
            pass  # not ours to worry about: the build goes on


@contextmanager
def take_turn(parent: Path) -> Iterator[None]:
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
