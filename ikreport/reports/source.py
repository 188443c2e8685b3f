"""Where reports come from: listing and reading the ``*.md`` files of a reports folder.

Reports come from whoever handed over the archive, so reading them never follows a link
and never opens anything but a regular file of bounded size. The rules, for the entries
directly in the folder (sub-folders are never read):

- ``ARCHIVE/reports`` itself must be a real folder, not a link; a folder given with
  ``--reports`` is the user's own choice and may be one.
- no entry may be a symbolic link (to a file or a folder), a FIFO, a socket or a device;
- a ``*.md`` entry must be a regular file of at most ``MAX_REPORT_BYTES``, in UTF-8.

``build`` and ``check`` refuse a folder that breaks a rule (ReportFileError, naming the
entry); ``verify`` lists every entry that breaks one, from the same function.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ikreport.errors import ReportFileError

MAX_REPORT_BYTES = 256 * 1024  # a long report is ~50 KiB; far more is a mistake or an attack
REPORT_SUFFIX = ".md"
# O_NONBLOCK: a FIFO swapped in after the listing opens at once (then fstat refuses it)
# instead of blocking until a writer appears.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True)
class ReportSource:
    path: Path  # the folder as given, joined with the file's name
    text: str


def entry_problem(path: Path, mode: int, size: int) -> str | None:
    """What is wrong with a reports-folder entry (its ``lstat`` mode and size), or None."""
    if stat.S_ISLNK(mode):
        return f"{path}: symbolic link in the reports folder; reports are read only from plain files, so remove it"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"{path}: not a regular file (a FIFO, socket or device) in the reports folder; remove it"
    if path.name.endswith(REPORT_SUFFIX) and stat.S_ISDIR(mode):
        return f"{path}: a folder named like a report; rename it or move it out of the reports folder"
    if path.name.endswith(REPORT_SUFFIX) and size > MAX_REPORT_BYTES:
        return (f"{path}: report is {size:,} bytes, over the limit of {MAX_REPORT_BYTES:,}; "
                "split it into several reports")
    return None


def folder_problems(folder: Path, followed: bool = False) -> list[str]:
    """Every entry of ``folder`` that breaks a rule, sorted; the folder itself too when it is
    a link and not ``followed`` (the user's own ``--reports`` choice). None when absent."""
    try:
        fd = _open_folder(folder, followed)
    except FileNotFoundError:
        return []
    except ReportFileError as exc:
        return [str(exc)]
    try:
        return [p for name in sorted(os.listdir(fd)) if (p := _problem_at(fd, folder / name)) is not None]
    finally:
        os.close(fd)


def read_reports(folder: Path, followed: bool = False) -> list[ReportSource]:
    """The ``*.md`` reports in ``folder``, sorted by name; [] when the folder is absent.
    ReportFileError on the first entry that breaks a rule (see the module docstring)."""
    try:
        fd = _open_folder(folder, followed)
    except FileNotFoundError:
        return []
    try:
        names = sorted(os.listdir(fd))
        for name in names:
            problem = _problem_at(fd, folder / name)
            if problem is not None:
                raise ReportFileError(problem)
        return [ReportSource(folder / name, _read(fd, folder / name)) for name in names
                if name.endswith(REPORT_SUFFIX)]
    finally:
        os.close(fd)


def _open_folder(folder: Path, followed: bool) -> int:
    # Everything after this goes through the descriptor (dir_fd), so swapping the folder for a
    # link between listing and reading changes nothing.
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | (0 if followed else getattr(os, "O_NOFOLLOW", 0))
    try:
        return os.open(folder, flags)
    except FileNotFoundError:
        raise  # no folder, no reports: the callers' case
    except OSError as exc:
        # With O_DIRECTORY, Linux says ENOTDIR for a link rather than ELOOP: ask lstat.
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and folder.is_symlink()):
            raise ReportFileError(f"{folder}: the reports folder is a symbolic link; make it a plain folder "
                                  "or pass the folder you mean with --reports") from exc
        if exc.errno == errno.ENOTDIR:
            raise ReportFileError(f"{folder}: not a folder; reports go in a folder of *.md files") from exc
        raise ReportFileError(f"{folder}: cannot read the reports folder ({exc.strerror})") from exc


def _problem_at(dir_fd: int, path: Path) -> str | None:
    try:
        st = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None  # gone since the listing: nothing to read
    return entry_problem(path, st.st_mode, st.st_size)


def _read(dir_fd: int, path: Path) -> str:
    # The listing was checked with lstat; the open checks again (O_NOFOLLOW, fstat), because
    # the entry may have been swapped for a link or a FIFO in between.
    try:
        fd = os.open(path.name, _OPEN_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ReportFileError(entry_problem(path, stat.S_IFLNK, 0) or str(path)) from exc
        raise ReportFileError(f"{path}: cannot read the report ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        problem = entry_problem(path, st.st_mode, st.st_size) if not stat.S_ISREG(st.st_mode) else None
        if problem is not None:
            raise ReportFileError(problem)
        data = f.read(MAX_REPORT_BYTES + 1)  # the file may have grown since the listing
    if len(data) > MAX_REPORT_BYTES:
        raise ReportFileError(entry_problem(path, stat.S_IFREG, len(data)) or str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportFileError(f"{path}: cannot read the report (not UTF-8: {exc.reason} at byte {exc.start}); "
                              "save it as UTF-8") from exc


__all__ = ["MAX_REPORT_BYTES", "ReportSource", "entry_problem", "folder_problems", "read_reports"]
