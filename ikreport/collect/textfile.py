"""Read a tool's saved output as text, whatever shell saved it."""

from __future__ import annotations

import codecs
from pathlib import Path

from ikreport.errors import IkreportError

MAX_BYTES = 2 << 30  # refuse before reading more than 2 GiB into memory


def read_export(path: Path, error: type[IkreportError]) -> tuple[bytes, bytes | str]:
    """(exact bytes, what the parser reads): the bytes themselves (the parser checks they are
    UTF-8, in chunks, keeping no decoded copy of a big export); decoded text for UTF-16."""
    data = _read(path, error)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data, _decode(path, data, "utf-16", error)
    return data, data


def read_text(path: Path, error: type[IkreportError]) -> tuple[bytes, str]:
    """(exact bytes, decoded text). UTF-8, or UTF-16 with a BOM (PowerShell's '>' writes it)."""
    data = _read(path, error)
    encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    return data, _decode(path, data, encoding, error)


def _decode(path: Path, data: bytes, encoding: str, error: type[IkreportError]) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not {encoding.upper().removesuffix('-SIG')} text (byte {exc.start}); "
                    "save the tool's output again") from exc


def _read(path: Path, error: type[IkreportError]) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise error(f"{path}: {size} bytes is larger than ikreport reads (2 GiB); export fewer launches")
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise error(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise error(f"{path}: is a folder; give the exported file") from exc
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from exc
