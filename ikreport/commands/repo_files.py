"""Files that init-pages writes into a repository (.github/...), never through a link.

A repository may be someone else's clone, and any of .github, .github/workflows,
.github/ikreport or the workflow file itself may be a symbolic link to anywhere: writing
through one would put the workflow outside the repository, overwrite a file there, or delete
the wheels in a folder there. So every path is checked for links before anything is written
(``refuse_links``), and then each folder is opened from the repository's top one component at
a time with O_NOFOLLOW (``open_folder``), so a link swapped in meanwhile is refused too. A
file is written to a temporary name in its folder and renamed over its real name
(``write_file``): no reader sees half a file, and a name that is a link, or a hard link to a
file elsewhere, is replaced in the repository instead of written through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ikreport.errors import RepositoryLinkError


def _linked(path: Path) -> RepositoryLinkError:
    return RepositoryLinkError(f"{path}: a symbolic link; init-pages writes only inside the repository, never through "
                               "a link: remove it (or make it a real folder or file)")


def refuse_links(repo: Path, rel: Path) -> None:
    """RepositoryLinkError when ``repo/rel`` or a folder on the way to it is a symbolic link;
    the parts that do not exist yet are what will be made."""
    path = repo
    for part in rel.parts:
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            raise _linked(path)


@contextlib.contextmanager
def open_folder(repo: Path, rel: Path) -> Iterator[int]:
    """A descriptor of the folder ``repo/rel``, its missing parts made, reached without following
    any link below ``repo``; OSError as the system gives it for anything else."""
    fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    path = repo
    try:
        for part in rel.parts:
            path = path / part
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise _linked(path) from exc
                raise
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def write_file(folder: int, name: str, content: bytes | BinaryIO) -> None:
    """Write ``content`` (bytes, or a file to copy) as ``name`` in the open ``folder``: to a
    temporary name first, synced, then renamed over whatever ``name`` was."""
    temp = f".{name}.tmp-{secrets.token_hex(6)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            if isinstance(content, bytes):
                out.write(content)
            else:
                shutil.copyfileobj(content, out)
            out.flush()
            os.fsync(out.fileno())
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
