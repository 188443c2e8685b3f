"""Which archive a command works on when none is named: found from the working directory
upward, as git finds ``.git``.

A folder is an archive when it holds both ``records/`` and ``blobs/`` folders (what
``Archive.create`` makes). At each folder from the working directory up to the root, the
folder itself is taken if it is an archive, else its ``evidence/`` child if that is one (the
name ``init-pages`` and the README use). The first match wins; nothing is created.

Where ``build`` writes an archive's site when no ``-o`` is given lives here too: beside the
archive, named after it, so that a build of the user's archive in a clone never lands in the
clone's committed sample ``site/``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ikreport.errors import ArchiveError, BuildError

MARKERS = ("records", "blobs")
CHILD = "evidence"
SAMPLE = "sample_evidence"  # a clone's sample archive; its site is the committed site/ beside it
SAMPLE_SITE = "site"
SITE_SUFFIX = "-site"


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


def default_site(archive: Path | str) -> Path:
    """The folder ``build`` writes ``archive``'s site to when no -o is given: beside the archive,
    named after it (evidence -> evidence-site), except the sample archive's, which is site/.
    An archive at a URL (a str) has no folder beside it: BuildError."""
    if isinstance(archive, str):
        raise BuildError(f"{archive}: an archive at a URL has no folder beside it for the site; give -o SITE")
    if archive.name in ("", ".", ".."):  # "." or "runs/..": the folder's own name is what the site is named after
        archive = Path(os.path.abspath(archive))
    if not archive.name:
        raise BuildError(f"{archive}: no folder beside the archive for the site; give -o SITE")
    if archive.name == SAMPLE:
        return archive.parent / SAMPLE_SITE
    return archive.parent / f"{archive.name}{SITE_SUFFIX}"
