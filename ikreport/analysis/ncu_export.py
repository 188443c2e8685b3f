"""Find the CSV inside an ncu export and tell which page it is.

Accepts the text printed by ``ncu --csv`` or ``ncu --import R.ncu-rep --csv [--page raw|
details]``, as saved by users: the program's own output and ``==PROF==``/``==WARNING==``
lines may come before (or between) the CSV lines; CRLF or LF line ends; a UTF-8 BOM. The
header row starts with ``"ID"``. A details page has ``Metric Name``/``Metric Value`` columns;
a raw page has one column per metric, with a units row under the header.
"""

from __future__ import annotations

import codecs
import csv
import re
from dataclasses import dataclass
from typing import Literal

from ikreport.errors import NcuExportError

Page = Literal["raw", "details"]
DETAILS_COLUMNS = ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")


HEADER_RX = re.compile(rb'^"ID",[^\n]*"Kernel Name"', re.MULTILINE)
BOM = b"\xef\xbb\xbf"
CHATTER_RX = re.compile(rb'\n[^"\r\n]')  # a line that starts with anything but a quote


@dataclass(frozen=True)
class Export:
    """The CSV part of one export: its page, header, and the CSV bytes after the header."""

    name: str
    page: Page
    header: tuple[str, ...]
    body: bytes | memoryview  # UTF-8 CSV lines after the header, tool chatter removed
    header_line: int

    @property
    def text(self) -> str:
        return bytes(self.body).decode("utf-8", "replace")


CHUNK = 1 << 20


def check_utf8(data: bytes, name: str) -> None:
    """Refuse bytes that are not UTF-8, checking in chunks so no decoded copy is kept."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    at = 0
    try:
        for at in range(0, len(data), CHUNK):
            decoder.decode(view[at: at + CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise NcuExportError(f"{name}: not UTF-8 text (near byte {at + exc.start}); export it again with ncu --csv") from exc


def csv_row(line: str, name: str, number: int) -> list[str]:
    """One CSV line; a line the csv module cannot read is a clear error naming it."""
    try:
        return next(csv.reader([line]), [])
    except csv.Error as exc:
        raise NcuExportError(f"{name}:{number}: not a CSV line ({exc}); export it again") from exc


def _tool_error(lines: list[str]) -> str | None:
    for line in lines:
        s = line.strip()
        if s.startswith("==ERROR==") or "No kernels were profiled" in s:
            return s
    return None


def locate(data: bytes | str, name: str = "<export>") -> Export:
    """Split an export into header and CSV body; raise NcuExportError naming ``name`` if it
    holds no ncu CSV. Works on the bytes with C-speed searches, so a 60 MB export is neither
    decoded twice nor split into a list of lines."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if b"\x00" in data[:65536]:
        raise NcuExportError(f"{name}: not a text file; give the CSV from 'ncu --import REPORT --csv'")
    check_utf8(data, name)
    if data.startswith(BOM):
        data = data[len(BOM):]
    found = HEADER_RX.search(data)
    if found is None:
        text = data.decode("utf-8", "replace")
        said = _tool_error(text.splitlines())
        if said:
            raise NcuExportError(f"{name}: no CSV in this file; ncu said: {said}")
        if not text.strip():
            raise NcuExportError(f"{name}: the file is empty; export a report with 'ncu --import REPORT --csv'")
        raise NcuExportError(
            f'{name}: no ncu CSV header ("ID",...,"Kernel Name",...) found; '
            "export with 'ncu --import REPORT --csv --page raw' or '--page details'"
        )
    end = data.find(b"\n", found.start())
    header_text = data[found.start(): end if end >= 0 else len(data)].decode("utf-8", "replace").rstrip("\r")
    header = tuple(csv_row(header_text, name, found_line := data.count(b"\n", 0, found.start()) + 1))
    page: Page = "details" if all(c in header for c in DETAILS_COLUMNS) else "raw"
    stop = len(data)
    while stop > end and data[stop - 1:stop] in (b"\r", b"\n"):
        stop -= 1
    # a view, not a copy; it keeps one line end when the file has one, so a reader that needs
    # the last row terminated (pyarrow) does not have to copy the body to add it
    keep = 1 if stop < len(data) else 0
    body: bytes | memoryview = memoryview(data)[end + 1: stop + keep] if end >= 0 else b""
    # ncu quotes every CSV field, so a line that does not start with a quote is chatter
    # (==PROF== lines, program output) interleaved with the CSV.
    if len(body) and (bytes(body[:1]) != b'"' or CHATTER_RX.search(body)):
        body = b"\n".join(line for line in bytes(body).split(b"\n") if line.startswith(b'"'))
    return Export(name=name, page=page, header=header, body=body, header_line=found_line)
