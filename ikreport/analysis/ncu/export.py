"""Find the CSV inside an ncu export and tell which page it is.

Accepts the text printed by ``ncu --csv`` or ``ncu --import R.ncu-rep --csv [--page raw|
details]``, as saved by users: the program's own output and ``==PROF==``/``==WARNING==``
lines may come before (or between) the CSV lines; CRLF or LF line ends; a UTF-8 BOM. The
header row starts with ``"ID"``. A details page has ``Metric Name``/``Metric Value`` columns;
a raw page has one column per metric, with a units row under the header.

ncu quotes every field and ends every row with a line end, so an export whose last row ends
inside a quoted field (or, unterminated, after anything but a closing quote) was cut short and
is refused; the page readers refuse a row of the wrong width (``TruncatedExportError``).
A binary ``.ncu-rep`` report (it starts with ``NVR\\0``) is refused by name.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ikreport.analysis.sniff import NCU_HEADER, other_tool
from ikreport.errors import NcuExportError, TruncatedExportError

Page = Literal["raw", "details"]
DETAILS_COLUMNS = ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")


HEADER_RX = re.compile(b"^" + NCU_HEADER.encode(), re.MULTILINE)
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
    # where the body came from, to name a file line in errors: the whole file, and where the
    # lines after the header start in it; ``filtered`` when chatter lines were taken out
    source: bytes = field(default=b"", repr=False, compare=False)
    body_start: int = 0
    filtered: bool = False
    # ncu's own ==ERROR==/==WARNING== lines anywhere in the file (at most MAX_MESSAGES), e.g.
    # '==ERROR== Failed to profile "kernel"': the export is then partial, and the record says so
    messages: tuple[str, ...] = ()
    # a big export streamed from its file (analysis/ncu/stream.py): ``body`` is then only its
    # first chunk's body, and readers read the rows from ``file`` at byte ``file_offset``
    file: str | None = None
    file_offset: int = 0

    def body_lines(self) -> Iterator[bytes]:
        """Every body line without its line end, as splitting the body at line ends gives them; for a
        streamed export read from the file a line at a time, so naming a line deep in an export
        of millions of launches never holds the file whole (error path only)."""
        if self.file is None:
            yield from bytes(self.body).split(b"\n")
            return
        with open(self.file, "rb") as f:
            f.seek(self.file_offset)
            ended = True
            for line in f:
                ended = line.endswith(b"\n")
                yield line[:-1] if ended else line
            if ended:  # split gives an empty last piece after a last line end
                yield b""

    def file_line(self, body_line: int) -> int:
        """The file's line number (from 1) of body line ``body_line`` (from 0). Error path only:
        with chatter taken out it walks the file."""
        if not self.filtered:
            return self.header_line + 1 + body_line
        seen = -1
        for number, line in enumerate(self.source[self.body_start:].split(b"\n"), self.header_line + 1):
            if line.startswith(b'"'):
                seen += 1
                if seen == body_line:
                    return number
        return self.header_line + 1 + body_line

    def row_line(self, row: bytes) -> int:
        """The file line of the first body line that is ``row`` (error path only)."""
        wanted = row.rstrip(b"\r")
        return self.file_line(next((index for index, line in enumerate(self.body_lines())
                                    if line in (wanted, wanted + b"\r")), 0))

    def record_line(self, record: int, skip: int = 0) -> int:
        """The file line of CSV record ``record`` (from 0) after the first ``skip`` body lines,
        not counting blank lines, which CSV readers pass over (error path only)."""
        seen = -1
        for index, line in enumerate(self.body_lines()):
            if index >= skip and line.strip(b"\r"):
                seen += 1
                if seen == record:
                    return self.file_line(index)
        return self.file_line(skip + record)


CHUNK = 1 << 20
MAX_MESSAGES = 20
MESSAGE_MARKS = (b"==ERROR==", b"==WARNING==")


def tool_messages(data: bytes) -> tuple[str, ...]:
    """ncu's ==ERROR== and ==WARNING== lines, in file order: found with C-speed searches, so a
    60 MB export is not walked line by line."""
    found: list[tuple[int, str]] = []
    for mark in MESSAGE_MARKS:
        at = data.find(mark)
        while at >= 0 and len(found) < 2 * MAX_MESSAGES:
            if at == 0 or data[at - 1:at] == b"\n":
                end = data.find(b"\n", at)
                line = data[at: end if end >= 0 else len(data)].decode("utf-8", "replace").rstrip("\r")
                found.append((at, line[:300]))
            at = data.find(mark, at + len(mark))
    return tuple(line for _, line in sorted(found)[:MAX_MESSAGES])


def check_utf8(data: bytes | memoryview, name: str, base: int = 0) -> None:
    """Refuse bytes that are not UTF-8, checking in chunks so no decoded copy is kept
    (``base``: where ``data`` starts in its file, for the message)."""
    if not len(data) or np.frombuffer(data, dtype=np.uint8).max() < 0x80:
        return  # ASCII, as ncu's exports nearly always are: one vectorised pass, nothing decoded
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    at = 0
    try:
        for at in range(0, len(data), CHUNK):
            decoder.decode(view[at: at + CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise NcuExportError(f"{name}: not UTF-8 text (near byte {base + at + exc.start}); export it again with ncu --csv") from exc


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


# The first bytes of every .ncu-rep report (a protobuf stream after this header); seen in reports
# of ncu 2019-2025, e.g. iamcoleman/monte-carlo-pi profile.ncu-rep.
NCU_REP_MAGIC = b"NVR\x00"


def report_given(name: str) -> str:
    """What to say of a .ncu-rep given where a CSV export was asked for."""
    return (f"{name}: an Nsight Compute report (.ncu-rep), not a CSV export; give it with --import instead (needs "
            f"ncu), or export its pages with 'ncu --import {name} --csv --page raw' and '--page details'")


def locate(data: bytes | str, name: str = "<export>") -> Export:
    """Split an export into header and CSV body; raise NcuExportError naming ``name`` if it
    holds no ncu CSV. Works on the bytes with C-speed searches, so a 60 MB export is neither
    decoded twice nor split into a list of lines."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if data.startswith(NCU_REP_MAGIC):
        raise NcuExportError(report_given(name))
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
        said = other_tool(text, name, "ncu-csv")
        if said:
            raise NcuExportError(said)
        raise NcuExportError(
            f'{name}: no ncu CSV header ("ID",...,"Kernel Name",...) found; '
            "export with 'ncu --import REPORT --csv --page raw' or '--page details'"
        )
    end = data.find(b"\n", found.start())
    header_text = data[found.start(): end if end >= 0 else len(data)].decode("utf-8", "replace").rstrip("\r")
    found_line = data.count(b"\n", 0, found.start()) + 1
    if header_text.count('"') % 2 or (end < 0 and not header_text.endswith('"')):
        raise TruncatedExportError(f"{name}:{found_line}: the header row ends inside a quoted field: the export "
                                   "is cut short; export it again with ncu --csv")
    header = tuple(csv_row(header_text, name, found_line))
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
    filtered = bool(len(body)) and (bytes(body[:1]) != b'"' or CHATTER_RX.search(body) is not None)
    if filtered:
        body = b"\n".join(_csv_lines(bytes(body), name, found_line))
    export = Export(name=name, page=page, header=header, body=body, header_line=found_line,
                    source=data, body_start=end + 1 if end >= 0 else len(data), filtered=filtered,
                    messages=tool_messages(data))
    _check_quoting(export)
    return export


def _csv_lines(body: bytes, name: str, header_line: int) -> list[bytes]:
    lines = []
    for number, line in enumerate(body.split(b"\n"), header_line + 1):
        if line.startswith(b'"'):
            lines.append(line)
        elif b'","' in line:
            # program output does not look like quoted CSV fields; a row whose first quote was
            # lost does, and dropping it as chatter would lose a launch without a word
            raise TruncatedExportError(f"{name}:{number}: a CSV row that does not start with a quote (its "
                                       "quoting is broken); export it again with ncu --csv")
    return lines


SCAN_BYTES = 1 << 20  # numpy's temporaries per window are about twice this


@dataclass(frozen=True)
class Lines:
    """What one pass over CSV lines found (``scan_lines``)."""

    ends: int  # line ends (b"\n")
    odd: int | None  # index (from 0) of the first line holding an odd number of quotes
    chatter: bool  # a line after the first starts with a byte no ncu CSV row starts with


def scan_lines(buf: bytes | memoryview, lo: int = 0, hi: int | None = None) -> Lines:
    """Count the line ends of ``buf[lo:hi]``, find its first line with an odd number of quotes
    and whether any later line starts with anything but a quote or a line end (tool chatter).

    ncu writes no line end inside a field, and doubles a quote inside one, so every row has an
    even number of quotes; an odd one is a field that does not close (a lost quote, or a cut).
    One pass of numpy over windows of the bytes, rather than a Python loop over every line
    with ``bytes.count`` and two more passes for line ends and chatter."""
    view = np.frombuffer(buf, dtype=np.uint8)[lo:hi]
    ends, odd, chatter, carry = 0, None, False, 0
    for at in range(0, len(view), SCAN_BYTES):
        window = view[at: at + SCAN_BYTES]
        newlines = np.flatnonzero(window == 10)
        # the byte after each line end (in the whole view, so a window's last one is seen)
        after = view[newlines[newlines + at + 1 < len(view)] + at + 1]
        chatter = chatter or bool(((after != 34) & (after != 10) & (after != 13)).any())
        if odd is None and len(window):
            # each line's quote parity: xor over the line's bytes, its line end included (a line
            # end is no quote); a window's last part-line carries its parity into the next window
            starts = np.concatenate(([0], newlines + 1))
            if starts[-1] == len(window):
                starts = starts[:-1]
            parity = np.bitwise_xor.reduceat((window == 34).view(np.uint8), starts)
            parity[0] ^= carry
            bad = np.flatnonzero(parity[:len(newlines)])
            if bad.size:
                odd = ends + int(bad[0])
            carry = int(parity[len(newlines)]) if len(parity) > len(newlines) else 0
        ends += len(newlines)
    if odd is None and carry:  # the last line, with no line end
        odd = ends
    return Lines(ends=ends, odd=odd, chatter=chatter)


def _check_quoting(export: Export) -> None:
    """Refuse a body with a quoted field that does not close on its line, or whose last row has
    no line end and does not end with a closing quote: a cut or broken export."""
    body = export.body
    if not len(body):
        return
    if isinstance(body, memoryview):  # a view of the file: search the file's bytes, no copy
        check_lines(export.source, export.body_start, export.body_start + len(body), export.name, export.file_line)
    else:
        check_lines(body, 0, len(body), export.name, export.file_line)


def check_lines(buf: bytes | memoryview, lo: int, hi: int, name: str, file_line: Callable[[int], int],
                lines: Lines | None = None) -> None:
    """``_check_quoting`` of the lines ``buf[lo:hi]`` (``file_line``: the file line of a line
    there, from 0; ``lines``: their ``scan_lines``, when the caller has it already)."""
    lines = lines or scan_lines(buf, lo, hi)
    if lines.odd is None and bytes(buf[hi - 1:hi]) in (b"\n", b"\r", b'"'):
        return  # the common case: every line's quotes close, and the last row is whole
    ended = bytes(buf[hi - 1:hi]) in (b"\n", b"\r")
    stripped = hi
    while stripped > lo and bytes(buf[stripped - 1:stripped]) in (b"\r", b"\n"):
        stripped -= 1
    last_index = lines.ends - bytes(buf[stripped:hi]).count(b"\n")
    bad = lines.odd
    if bad is not None and not (bad == last_index and not ended):
        raise TruncatedExportError(f"{name}:{file_line(bad)}: a quoted field does not close on this "
                                   "line (its quoting is broken); export it again with ncu --csv")
    # Not even a trailing comma may end an unterminated last row: "...","%", may be a row cut
    # just before its value, and ncu ends every row with a line end anyway.
    if bad is not None or not (ended or bytes(buf[stripped - 1:stripped]) == b'"'):
        where = "inside a quoted field" if bad is not None else "without a closing quote or a line end"
        raise TruncatedExportError(f"{name}:{file_line(last_index)}: the last row ends {where}: "
                                   "the export is cut short; export it again with ncu --csv")
