"""The only writer of a site. Files are gathered first; the folder is written beside the
output and swapped in whole, so a failed or killed build never leaves a half-written site
in place of a good one.

Each file may carry a fingerprint (a content hash, a record id, a page key). When the last
build of this output wrote the same path with the same fingerprint, the file is hard-linked
from the previous site instead of being produced and written again. Only the previous site
is ever linked from, never the archive or a cache, so editing a site file cannot change
evidence.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ikreport.errors import BuildError

# A folder the build may replace: empty, or one an earlier build wrote.
SITE_MARKERS = ("index.html", "e")


@dataclass(frozen=True)
class Entry:
    load: Callable[[], bytes]
    size: int
    fingerprint: str | None


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
        self._check(path)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.entries[path] = Entry(lambda: raw, len(raw), fingerprint)

    def add_lazy(self, path: str, load: Callable[[], bytes], size: int, fingerprint: str) -> None:
        self._check(path)
        self.entries[path] = Entry(load, size, fingerprint)

    def sizes(self) -> dict[str, int]:
        return {path: e.size for path, e in self.entries.items()}

    def read(self, path: str) -> bytes:
        return self.entries[path].load()


def write_site(files: SiteFiles, output: Path, previous: dict[str, str] | None = None) -> dict[str, str]:
    """Write the site to ``output``; returns {path: fingerprint} to pass as ``previous`` next time."""
    output = Path(output)
    if output.exists() and (not output.is_dir() or (any(output.iterdir())
                                                     and not all((output / m).exists() for m in SITE_MARKERS))):
        raise BuildError(f"{output}: exists and is not an ikreport site; choose another output folder (-o)")
    previous = previous or {}
    parent = output.resolve().parent
    tmp = parent / f".{output.name}.tmp-{secrets.token_hex(4)}"
    old = parent / f".{output.name}.old-{secrets.token_hex(4)}"
    state = {}
    try:
        made: set[str] = set()
        for path in sorted(files.entries):  # plain strings: thousands of pathlib joins cost more than the writes
            entry = files.entries[path]
            target = os.path.join(tmp, path)
            folder = os.path.dirname(target)
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            if entry.fingerprint is not None:
                state[path] = entry.fingerprint
            if entry.fingerprint is not None and previous.get(path) == entry.fingerprint \
                    and _link(os.path.join(output, path), target):
                continue
            with open(target, "wb") as f:
                f.write(entry.load())
        if output.exists():
            os.rename(output, old)
        os.rename(tmp, output)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not output.exists():
            os.rename(old, output)
        raise BuildError(f"{output}: cannot write the site ({exc.strerror}); check the folder is writable") from exc
    shutil.rmtree(old, ignore_errors=True)
    return state


def _link(source: str, target: str) -> bool:
    try:
        os.link(source, target)
        return True
    except OSError:
        return False  # not there any more, or another file system: write it instead
