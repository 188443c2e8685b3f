"""The only writer of a site. Files are gathered first; the folder is written beside the
output and swapped in whole, so a failed or killed build never leaves a half-written site
in place of a good one."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path, PurePosixPath

from ikreport.errors import BuildError

# A folder the build may replace: empty, or one an earlier build wrote.
SITE_MARKERS = ("index.html", "e")


class SiteFiles:
    """Relative path -> bytes, each path given once."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def add(self, path: str, data: bytes | str) -> None:
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or not pure.parts:
            raise BuildError(f"{path}: not a relative path inside the site")
        if path in self.files:
            raise BuildError(f"{path}: written twice in one build; two pages claim the same file")
        self.files[path] = data.encode("utf-8") if isinstance(data, str) else data


def write_site(files: SiteFiles, output: Path) -> None:
    output = Path(output)
    if output.exists() and (not output.is_dir() or (any(output.iterdir())
                                                     and not all((output / m).exists() for m in SITE_MARKERS))):
        raise BuildError(f"{output}: exists and is not an ikreport site; choose another output folder (-o)")
    parent = output.resolve().parent
    tmp = parent / f".{output.name}.tmp-{secrets.token_hex(4)}"
    old = parent / f".{output.name}.old-{secrets.token_hex(4)}"
    try:
        for path in sorted(files.files):
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files.files[path])
        if output.exists():
            os.rename(output, old)
        os.rename(tmp, output)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not output.exists():
            os.rename(old, output)
        raise BuildError(f"{output}: cannot write the site ({exc.strerror}); check the folder is writable") from exc
    shutil.rmtree(old, ignore_errors=True)
