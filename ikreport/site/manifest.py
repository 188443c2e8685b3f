"""The site's manifest.json: what a build writes there (every record and published blob, every
file and its content's sha256), and how anything that reads a site reads it (build, publish,
``verify --site``): never through a link, never blocking, a regular file of bounded size, and
no path in it trusted until it is known to stay inside the site.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from typing import Any

import orjson

MANIFEST = "manifest.json"
MANIFEST_SCHEMA = "ikreport.manifest/1"  # what build writes, and what build, publish and verify --site read
MAX_MANIFEST = 64 * 2**20  # bytes; a manifest names each file once (1,000 profiles: 2 MB)


def manifest_json(record_ids: list[str], blobs: list[dict[str, str]], files: Any) -> bytes:
    """Every record and published blob (for 'verify --site'), every file but this one (``files``:
    'publish' refuses any other) and each one's content sha256 (what the next build need not write)."""
    digests: dict[str, str] = {path: entry.sha256 for path, entry in files.entries.items()}
    body = {"schema": MANIFEST_SCHEMA, "records": record_ids, "blobs": blobs, "files": sorted(digests),
            "sha256": digests}
    # orjson: json.dumps with an indent runs in Python, 6 ms of a rebuild for 5,000 paths
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def inside_site(path: str) -> bool:
    """A relative path that stays inside the site: no '..', no absolute path, no odd characters."""
    return bool(path) and path.isprintable() and "\\" not in path and \
        not any(part in ("", ".", "..") for part in path.split("/"))


def read_manifest_bytes(path: str | os.PathLike[str]) -> bytes:
    """A local site's manifest.json, opened as verify --site opens every file: never through a
    link, never blocking on a FIFO, a regular file of at most MAX_MANIFEST bytes; OSError
    otherwise (FileNotFoundError when there is none)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > MAX_MANIFEST:
            raise OSError(errno.EFBIG, f"over {MAX_MANIFEST >> 20} MiB", str(path))
        return f.read(MAX_MANIFEST + 1)


def walk_site(folder: str | os.PathLike[str],
              on_error: Callable[[OSError], None] | None = None) -> Iterator[tuple[str, str, str]]:
    """Every entry below ``folder``, links never followed, names sorted within each folder:
    (path relative to the folder with "/", path, what) where what is "link", "special", "file"
    or "folder". ``on_error`` hears of a folder or entry that cannot be read (it may raise);
    without it such entries are passed over (gone while walking). verify --site and publish
    both judge a site from this one walk."""
    for top, dirs, files in os.walk(folder, onerror=on_error, followlinks=False):
        for name in sorted(dirs + files):
            path = os.path.join(top, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError as exc:
                if on_error is not None:
                    on_error(exc)
                continue
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            what = ("link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode)
                    else "file" if stat.S_ISREG(mode) else "special")
            yield rel, path, what
