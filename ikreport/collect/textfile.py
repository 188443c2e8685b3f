"""Read a tool's saved output as text, whatever shell saved it."""

from __future__ import annotations

import codecs
from pathlib import Path

from ikreport.errors import IkreportError

MAX_BYTES = 2 << 30  # refuse before reading more than 2 GiB into memory


def read_text(path: Path, error: type[IkreportError]) -> tuple[bytes, str]:
    """(exact bytes, decoded text). UTF-8, or UTF-16 with a BOM (PowerShell's '>' writes it)."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise error(f"{path}: {size} bytes is larger than ikreport reads (2 GiB); export fewer launches")
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise error(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise error(f"{path}: is a folder; give the exported file") from exc
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from exc
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        return data, data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}); export it again with ncu --csv") from exc
