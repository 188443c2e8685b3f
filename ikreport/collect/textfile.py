"""Read a tool's saved output as text, whatever shell saved it."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from ikreport.analysis.ncu.export import NCU_REP_MAGIC, report_given
from ikreport.errors import IkreportError

MAX_BYTES = 2 << 30  # refuse before reading more than 2 GiB into memory
HEAD_BYTES = 2 << 20  # what is looked at for NUL bytes before the rest is read


def read_export(path: Path, error: type[IkreportError]) -> tuple[bytes, bytes | str]:
    """(exact bytes, what the parser reads): the bytes themselves (the parser checks they are
    UTF-8, in chunks, keeping no decoded copy of a big export); decoded text for UTF-16."""
    data = read_bytes(path, error)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data, _decode(path, data, "utf-16", error)
    return data, data


def read_text(path: Path, error: type[IkreportError]) -> tuple[bytes, str]:
    """(exact bytes, decoded text). UTF-8, or UTF-16 with a BOM (PowerShell's '>' writes it).
    Output that is not JSON is made of lines: a last line with no line end was cut short (a
    copy or a run that stopped), and would be read as a smaller figure than the tool printed."""
    data = read_bytes(path, error)
    encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    text = _decode(path, data, encoding, error)
    if text.strip() and not text.lstrip().startswith(("{", "[")) and not text.rstrip(" \t").endswith(("\n", "\r")):
        raise error(f"{path}: its last line has no line end, so the output was cut short; save the tool's "
                    "whole output again (if it is whole, end it with a line break)")
    return data, text


def _decode(path: Path, data: bytes, encoding: str, error: type[IkreportError]) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not {encoding.upper().removesuffix('-SIG')} text (byte {exc.start}); "
                    "save the tool's output again") from exc


def read_bytes(path: Path, error: type[IkreportError], most: int = MAX_BYTES) -> bytes:
    """The file's bytes: a regular file or a pipe (``<(tool …)``), never more than ``most``, and
    refused at its first HEAD_BYTES when they hold a NUL (not text, unless UTF-16)."""
    too_big = f"larger than ikreport reads ({most >> 20} MiB); " + ("export fewer launches" if most == MAX_BYTES
                                                                     else "give the file it asks for")
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
                raise error(f"{path}: not a file (a device or socket); give a saved file")
            if info.st_size > most:
                raise error(f"{path}: {info.st_size} bytes is {too_big}")
            data = f.read(HEAD_BYTES)
            if b"\0" in data and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                raise error(report_given(str(path)) if data.startswith(NCU_REP_MAGIC) else
                            f"{path}: not a text file (it holds NUL bytes); give the tool's saved text output")
            if stat.S_ISREG(info.st_mode):
                data += f.read()  # as big as it said (a read of MAX_BYTES would reserve that much)
            else:  # a pipe: a chunk at a time, up to the limit
                parts, size = [data], len(data)
                while size <= most and (chunk := f.read(HEAD_BYTES)):
                    parts.append(chunk)
                    size += len(chunk)
                data = b"".join(parts)
        if len(data) > most:
            raise error(f"{path}: {too_big}")
        return data
    except FileNotFoundError as exc:
        raise error(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise error(f"{path}: is a folder; give the exported file") from exc
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from exc
