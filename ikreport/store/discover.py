"""Which archive a command works on when none is named: found from the working directory
upward, as git finds ``.git``.

A folder is an archive when it holds both ``records/`` and ``blobs/`` folders (what
``Archive.create`` makes). At each folder from the working directory up to the root, the
folder itself is taken if it is an archive, else its ``evidence/`` child if that is one (the
name ``init-pages`` and the README use). The first match wins; nothing is created.
"""

from __future__ import annotations

from pathlib import Path

from ikreport.errors import ArchiveError

MARKERS = ("records", "blobs")
CHILD = "evidence"


def is_archive(folder: Path) -> bool:
    """True when ``folder`` holds both records/ and blobs/ folders."""
    return all((folder / name).is_dir() for name in MARKERS)


def find_archive(start: Path) -> Path | None:
    """The archive at or above ``start`` (the folder itself, else its evidence/), or None."""
    for folder in (start, *start.parents):
        for candidate in (folder, folder / CHILD):
            if is_archive(candidate):
                return candidate
    return None


def choose_archive(named: Path | None, start: Path, demo: Path | None = None) -> Path:
    """The archive named (--archive, IKREPORT_ARCHIVE, ARCHIVE), else the one found from
    ``start`` upward, else ``demo`` when given and present; ArchiveError otherwise.

    Writing commands pass no ``demo``: a clone's sample archive is never written by default.
    """
    if named is not None:
        return named
    found = find_archive(start)
    if found is not None:
        return found
    if demo is not None and demo.is_dir():
        return demo
    raise ArchiveError(f"{start}: no archive named, and none found here or above (a folder holding records/ "
                       "and blobs/, or evidence/ holding them); give --archive DIR or set IKREPORT_ARCHIVE")
